"""Seed 004, watch: CPU and RAM of a Node.js watch server, one big message vs one per key.

Every cache strategy of the Node server (servers/node/watch) with each message type
(mono: Watch, one message of N pairs; separated: WatchSeparated, N messages) on each
folder. The Go client (servers/go/watch_client) opens `clients` connections and starts
`watches_per_client` watches on each at once, as the seed's 25 pods x 20 calls did; the
runner samples the server's and the client's CPU and RSS every 100 ms.
"""

from __future__ import annotations

from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.matrix import (
    MatrixError,
    require_choice,
    require_positive_ints,
    require_positive_number,
    validate_named_impl,
)

PREFIX = "perflab_matrix_watch"
STUDY = "watch"
STRATEGIES = ("js_object", "protobuf_cache", "frame_cache", "protobuf_cache_2writes")
MESSAGES = ("mono", "separated")
# Strategies that make a new buffer of the whole message for every call (protobufjs's
# encode, or grpc-js's copy into a length-prefixed buffer): a mono burst holds one per watch.
COPY_PER_CALL = ("js_object", "protobuf_cache")
# What the Node.js runtime and grpc-js hold before any folder (server.log of a smoke run).
BASE_BYTES = 256 * 2**20


def validate_folders(key: str, table: Any) -> dict[str, dict[str, int]]:
    if not isinstance(table, dict) or not table:
        raise MatrixError(f"{key}: expected a mapping of folder name to {{pairs, pair_bytes}}")
    for name, entry in table.items():
        if not isinstance(entry, dict) or set(entry) != {"pairs", "pair_bytes"}:
            raise MatrixError(f"{key}.{name}: expected exactly {{pairs: N, pair_bytes: B}}")
        for field in ("pairs", "pair_bytes"):
            require_positive_ints(f"{key}.{name}.{field}", [entry[field]])
        if entry["pair_bytes"] < 32:
            raise MatrixError(
                f"{key}.{name}.pair_bytes: {entry['pair_bytes']} is below a key's size"
            )
    return table


def memory_needed(strategy: str, message: str, folder: dict[str, int], watchers: int) -> int:
    """Bytes the host needs at the burst's peak, by the seed's own figures.

    Server: a mono burst of a copy-per-call strategy holds one whole message per watcher
    (the seed's 500 x 50 MB large folder reached 20-22.5 GB); otherwise about the folder
    twice. Client: a mono watch assembles its whole message before reading it, so a mono
    burst holds up to one message per watcher there too (the seed's OOM-killed clients).
    """
    folder_bytes = folder["pairs"] * folder["pair_bytes"]
    copies = watchers if message == "mono" and strategy in COPY_PER_CALL else 2
    client = watchers * folder_bytes if message == "mono" else 0
    return BASE_BYTES + copies * folder_bytes + client


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    server = validate_named_impl(f"{PREFIX}.server", config.get("server"), known_impls)
    client = validate_named_impl(f"{PREFIX}.client", config.get("client"), known_impls)
    strategies = require_choice(f"{PREFIX}.strategies", config.get("strategies"), STRATEGIES)
    messages = require_choice(f"{PREFIX}.messages", config.get("messages"), MESSAGES)
    folders = validate_folders(f"{PREFIX}.folders", config.get("folders"))
    run_folders = config.get("run_folders") or list(folders)
    require_choice(f"{PREFIX}.run_folders", run_folders, folders)
    clients = require_positive_ints(f"{PREFIX}.clients", [config.get("clients")])[0]
    watches = require_positive_ints(
        f"{PREFIX}.watches_per_client", [config.get("watches_per_client")]
    )[0]
    warmup = config.get("warmup_watches", 1)
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise MatrixError(f"{PREFIX}.warmup_watches: {warmup!r} is not an integer >= 0")
    repeats = require_positive_ints(f"{PREFIX}.repeats", [config.get("repeats")])[0]
    timeout_s = require_positive_number(f"{PREFIX}.timeout_s", config.get("timeout_s", 600))
    refuse = config.get("refuse_without_memory", True)
    if not isinstance(refuse, bool):
        raise MatrixError(f"{PREFIX}.refuse_without_memory: {refuse!r} is not true or false")

    cells = []
    for folder_name in run_folders:
        folder = folders[folder_name]
        for message in messages:
            for strategy in strategies:
                params = {
                    "message": message,
                    "folder": folder_name,
                    "clients": clients,
                    "watches_per_client": watches,
                    "kv_pairs": folder["pairs"],
                    "pair_bytes": folder["pair_bytes"],
                }
                needed = memory_needed(strategy, message, folder, clients * watches)
                for repeat in range(1, repeats + 1):
                    cells.append(
                        CellSpec(
                            run_id=run_id,
                            study=STUDY,
                            cell_id=f"{strategy}-{message}-{folder_name}-r{repeat}",
                            scenario=f"{message}_{folder_name}",
                            implementation=strategy,
                            client=client["name"],
                            params=dict(params),
                            repeat=repeat,
                            server=ServerSpec(
                                impl=server["impl"],
                                options={
                                    "strategy": strategy,
                                    "folder": folder_name,
                                    "pairs": folder["pairs"],
                                    "pair_bytes": folder["pair_bytes"],
                                },
                                memory_bytes=needed if refuse else 0,
                            ),
                            load=LoadSpec(
                                kind="client",
                                client_impl=client["impl"],
                                client_options={
                                    "method": message,
                                    "folder": folder_name,
                                    "pairs": folder["pairs"],
                                    "clients": clients,
                                    "watches": watches,
                                    "warmup_watches": warmup,
                                    "timeout_s": timeout_s,
                                },
                                # Every watch has timeout_s; the whole client a little more.
                                timeout_s=timeout_s + 60,
                            ),
                        )
                    )
    return cells
