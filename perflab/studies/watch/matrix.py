"""Seed 004, watch: CPU and RAM of a Node.js watch server, one big message vs one per key.

Every cache strategy of the Node server (servers/node/watch) with each message type
(mono: Watch, one message of N pairs; separated: WatchSeparated, N messages) on each
folder. The Go client (servers/go/watch_client) opens `clients` connections and starts
`watches_per_client` watches on each at once, as the seed's 25 pods x 20 calls did; the
runner samples the server's and the client's CPU and RSS every 100 ms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.knobs import (
    Choice,
    Choices,
    Context,
    Flag,
    Int,
    KeysOf,
    Knob,
    MatrixError,
    Number,
    aa_pair_knob,
    knob,
    validate,
)
from perflab.contract.matrix import ServerAndClient
from perflab.contract.rounds import aa_cells

PREFIX = "perflab_matrix_watch"
STUDY = "watch"
STRATEGIES = ("js_object", "protobuf_cache", "frame_cache", "protobuf_cache_2writes")
MESSAGES = ("mono", "separated")
# Strategies that make a new buffer of the whole message for every call (protobufjs's
# encode, or grpc-js's copy into a length-prefixed buffer): a mono burst holds one per watch.
COPY_PER_CALL = ("js_object", "protobuf_cache")
# What the Node.js runtime and grpc-js hold before any folder (server.log of a smoke run).
BASE_BYTES = 256 * 2**20


@dataclass(frozen=True)
class Folders:
    """{name: {pairs: N, pair_bytes: B}}: the folders the server serves, each pair >= a key."""

    def check(self, key: str, value: Any, context: Context) -> dict[str, dict[str, int]]:
        if not isinstance(value, dict) or not value:
            raise MatrixError(f"{key}: expected a mapping of folder name to {{pairs, pair_bytes}}")
        for name, entry in value.items():
            if not isinstance(entry, dict) or set(entry) != {"pairs", "pair_bytes"}:
                raise MatrixError(f"{key}.{name}: expected exactly {{pairs: N, pair_bytes: B}}")
            for field in ("pairs", "pair_bytes"):
                Int().check(f"{key}.{name}.{field}", entry[field], context)
            if entry["pair_bytes"] < 32:
                raise MatrixError(
                    f"{key}.{name}.pair_bytes: {entry['pair_bytes']} is below a key's size"
                )
        return value


@dataclass(frozen=True)
class Matrix(ServerAndClient):
    """perflab_matrix_watch (inventory/group_vars/all/watch.yml): server and client, then these."""

    strategies: list[str] = knob(Choices(STRATEGIES), "the server's cache strategies to run")
    messages: list[str] = knob(Choices(MESSAGES), "mono: one message of N pairs; separated: N")
    folders: dict[str, dict[str, int]] = knob(Folders(), "folders by name: {pairs, pair_bytes}")
    run_folders: list[str] = knob(
        Choices(KeysOf("folders"), empty="all"), "folders to run; empty: all", []
    )
    clients: int = knob(Int(), "client connections (the seed's pods)")
    watches_per_client: int = knob(Int(), "watches each client starts at once")
    warmup_watches: int = knob(Int(minimum=0), "watches before the burst, discarded", 1)
    repeats: int = knob(Int(), "cells per configuration")
    timeout_s: float = knob(Number(), "a watch slower than this fails its cell", 600)
    refuse_without_memory: bool = knob(
        Flag(), "refuse a cell the host has not the memory for (memory_needed)", True
    )
    aa_pair: list[dict[str, Any]] = aa_pair_knob(
        strategy=Knob(Choice(STRATEGIES), "the server's cache strategy"),
        message=Knob(Choice(MESSAGES), "mono or separated"),
        folder=Knob(Choice(KeysOf("folders")), "the folder"),
    )


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


def cell(
    run_id: str, matrix: Matrix, folder_name: str, message: str, strategy: str, repeat: int
) -> CellSpec:
    folder = matrix.folders[folder_name]
    needed = memory_needed(strategy, message, folder, matrix.clients * matrix.watches_per_client)
    return CellSpec(
        run_id=run_id,
        study=STUDY,
        cell_id=f"{strategy}-{message}-{folder_name}-r{repeat}",
        scenario=f"{message}_{folder_name}",
        implementation=strategy,
        client=matrix.client["name"],
        params={
            "message": message,
            "folder": folder_name,
            "clients": matrix.clients,
            "watches_per_client": matrix.watches_per_client,
            "kv_pairs": folder["pairs"],
            "pair_bytes": folder["pair_bytes"],
        },
        repeat=repeat,
        server=ServerSpec(
            impl=matrix.server["impl"],
            options={
                "strategy": strategy,
                "folder": folder_name,
                "pairs": folder["pairs"],
                "pair_bytes": folder["pair_bytes"],
            },
            memory_bytes=needed if matrix.refuse_without_memory else 0,
        ),
        load=LoadSpec(
            kind="client",
            client_impl=matrix.client["impl"],
            client_options={
                "method": message,
                "folder": folder_name,
                "pairs": folder["pairs"],
                "clients": matrix.clients,
                "watches": matrix.watches_per_client,
                "warmup_watches": matrix.warmup_watches,
                "timeout_s": matrix.timeout_s,
            },
            # Every watch has timeout_s; the whole client a little more.
            timeout_s=matrix.timeout_s + 60,
        ),
    )


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    matrix = validate(Matrix, PREFIX, config, known_impls)
    cells = [
        cell(run_id, matrix, folder_name, message, strategy, repeat)
        for folder_name in matrix.run_folders
        for message in matrix.messages
        for strategy in matrix.strategies
        for repeat in range(1, matrix.repeats + 1)
    ]
    for aa in matrix.aa_pair:
        cells += aa_cells(
            lambda repeat, aa=aa: cell(
                run_id, matrix, aa["folder"], aa["message"], aa["strategy"], repeat
            ),
            matrix.repeats,
        )
    return cells
