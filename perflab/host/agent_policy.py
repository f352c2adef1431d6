"""What the server agent accepts from a request, checked before anything starts.

The agent starts processes for whoever holds the run's token, so a request may only pick
among what this host already has: an implementation found in its own `servers/` tree,
options declared in that implementation's impl.toml (of the declared type, with plain
values), the host's own services, and latency proxies in front of declared options. It
never takes argv, and takes no environment (see ALLOWED_SERVER_ENV). Every refusal is a
`Refused` whose text is the reason, logged by the agent and sent back with a 400.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from pathlib import PurePosixPath
from typing import Any

from perflab.contract.agent_messages import MessageError, StartRequest, from_dict
from perflab.contract.cell import CellSpec
from perflab.contract.runid import validate_run_id
from perflab.host.impls import Implementation

# No environment travels in a request. Nothing a server needs comes that way: aws_io's S3
# and MongoDB endpoints are impl.toml options (s3_endpoint, mongo_uri), its credentials come
# from the env-file the host's own roles wrote (mode 0600, read by the server), and the
# agent's own environment (PYTHONPATH to the generated code) is set here by
# perflab.host.launch.server_env. A name added here must be harmless whatever its value: never a
# loader, interpreter or path variable (LD_PRELOAD, PYTHONPATH, PATH, NODE_OPTIONS, ...).
ALLOWED_SERVER_ENV: frozenset[str] = frozenset()

# A string option's value: words, numbers, host:port, URLs and absolute paths; nothing a
# shell or a format string would act on (no space, quote, $, `, ;, |, &, <, >, *, ?, {, }).
SAFE_VALUE = re.compile(r"[A-Za-z0-9._:/@%+=,~-]*")
MAX_VALUE_CHARS = 512
SERVICE_NAME = re.compile(r"[a-z0-9_]{1,40}")
UPSTREAM = re.compile(r"[A-Za-z0-9.-]{1,253}:[0-9]{1,5}")
PROXY_KEYS = {"caller", "option", "upstream", "one_way_ms", "url"}
LOAD_PROXY_KEYS = {"caller", "one_way_ms"}
MAX_READY_TIMEOUT_S = 600.0
MAX_ONE_WAY_MS = 10_000.0


class Refused(ValueError):
    """A request the agent will not act on; the text says which value and why."""


def check_text(where: str, value: str, default: object) -> None:
    if len(value) > MAX_VALUE_CHARS:
        raise Refused(f"{where}: value longer than {MAX_VALUE_CHARS} characters")
    if not SAFE_VALUE.fullmatch(value):
        bad = sorted({c for c in value if not SAFE_VALUE.fullmatch(c)})
        raise Refused(f"{where}: value {value!r} holds characters not accepted: {bad}")
    if ".." in PurePosixPath(value).parts or "/../" in value or value.endswith("/.."):
        raise Refused(f"{where}: value {value!r} climbs out of a folder ('..')")
    # An option whose default is a bare word (a mode, a command found on PATH) takes a bare
    # word: a request cannot turn `iperf3 = "iperf3"` into a program of its choosing.
    if "/" in value and isinstance(default, str) and default and "/" not in default:
        raise Refused(f"{where}: takes a plain word like its default {default!r}, not a path")


def check_option(impl: Implementation, key: object, value: object) -> None:
    if not isinstance(key, str) or key not in impl.options:
        raise Refused(
            f"{impl.key}: undeclared option {key!r}; its impl.toml declares {sorted(impl.options)}"
        )
    where = f"{impl.key} option {key}"
    default = impl.options[key]
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    else:
        ok = isinstance(value, str)
    if not ok:
        raise Refused(
            f"{where}: expected {type(default).__name__} like its default {default!r}, "
            f"got {type(value).__name__} {value!r}"
        )
    if isinstance(value, str):
        check_text(where, value, default)


def check_options(impl: Implementation, options: Mapping[str, Any]) -> None:
    for key, value in options.items():
        check_option(impl, key, value)


def check_env(env: Mapping[str, str]) -> None:
    refused = sorted(set(env) - ALLOWED_SERVER_ENV)
    if refused:
        raise Refused(
            f"environment from a request is not accepted ({', '.join(map(str, refused))}); "
            "a server's settings are its impl.toml options"
        )


def check_delay(delay: object) -> None:
    if delay is not None and (
        isinstance(delay, bool)
        or not isinstance(delay, int | float)
        or not 0 <= delay <= MAX_ONE_WAY_MS
    ):
        raise Refused(f"latency_proxies: one_way_ms {delay!r} is not 0..{MAX_ONE_WAY_MS:.0f}")


def check_proxies(impl: Implementation, proxies: list[Any]) -> None:
    """Entries delaying the server's calls; an entry for the load's calls (which the runner
    starts on its own host, never this agent) may hold only a delay."""
    for entry in proxies:
        if isinstance(entry, dict) and entry.get("caller") == "load":
            if set(entry) - LOAD_PROXY_KEYS:
                raise Refused(f"latency_proxies: load entries take {sorted(LOAD_PROXY_KEYS)}")
            check_delay(entry.get("one_way_ms"))
            continue
        if not isinstance(entry, dict) or set(entry) - PROXY_KEYS or "option" not in entry:
            raise Refused(f"latency_proxies: entries take {sorted(PROXY_KEYS)}, got {entry!r}")
        if entry.get("caller", "server") != "server":
            raise Refused(f"latency_proxies: caller {entry['caller']!r} is not server or load")
        option = entry["option"]
        if option not in impl.options:
            raise Refused(f"latency_proxies: {option!r} is not an option of {impl.key}")
        upstream = entry.get("upstream")
        if not isinstance(upstream, str) or not UPSTREAM.fullmatch(upstream):
            raise Refused(f"latency_proxies: upstream {upstream!r} is not host:port")
        check_delay(entry.get("one_way_ms"))
        url = entry.get("url")
        if not isinstance(url, str) or url.count("{listen}") != 1:
            raise Refused(f"latency_proxies: url {url!r} must hold {{listen}} once")
        check_text(f"latency_proxies {option} url", url.replace("{listen}", ""), "")


def check_cpus(raw: object) -> list[int]:
    allowed = os.sched_getaffinity(0)
    if not isinstance(raw, list) or not all(
        isinstance(c, int) and not isinstance(c, bool) and c in allowed for c in raw
    ):
        raise Refused(f"server_cpus {raw!r}: expected a list of this host's CPUs {sorted(allowed)}")
    return list(raw)


def check_request(
    request: object,
    impls: Mapping[str, Implementation],
    listen: str,
    services: Collection[str],
) -> tuple[CellSpec, list[int], bool]:
    """The cell spec, server CPUs and pin flag of a /start request, or Refused."""
    try:
        start = from_dict(StartRequest, request)
    except MessageError as exc:
        raise Refused(str(exc)) from exc
    try:
        spec = CellSpec.from_dict(start.spec)
    except (TypeError, KeyError, ValueError, AttributeError) as exc:
        raise Refused(f"malformed cell spec: {exc}") from exc
    try:
        validate_run_id(spec.run_id)
    except ValueError as exc:
        raise Refused(str(exc)) from exc
    server = spec.server
    impl = impls.get(server.impl) if isinstance(server.impl, str) else None
    if impl is None:
        raise Refused(f"unknown implementation {server.impl!r} on this host")
    if not isinstance(server.options, dict):
        raise Refused("server options must be a mapping")
    check_options(impl, server.options)
    if not isinstance(server.env, dict):
        raise Refused("server env must be a mapping")
    check_env(server.env)
    # The agent listens on the data address only, and so do the servers it starts.
    if server.host != listen:
        raise Refused(f"server host {server.host!r}: servers here listen on {listen} only")
    if (
        isinstance(server.port, bool)
        or not isinstance(server.port, int)
        or not (server.port == 0 or 1024 <= server.port <= 65535)
    ):
        raise Refused(f"server port {server.port!r}: expected 0 (any free port) or 1024..65535")
    timeout = server.ready_timeout_s
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise Refused(f"ready_timeout_s {timeout!r} is not a number")
    if not 0 < timeout <= MAX_READY_TIMEOUT_S:
        raise Refused(f"ready_timeout_s {timeout!r} is not in (0, {MAX_READY_TIMEOUT_S:.0f}]")
    memory = server.memory_bytes
    if isinstance(memory, bool) or not isinstance(memory, int) or memory < 0:
        raise Refused(f"memory_bytes {memory!r} is not a byte count")
    if not isinstance(spec.dependencies, list):
        raise Refused("dependencies must be a list of service names")
    for name in spec.dependencies:
        if not isinstance(name, str) or not SERVICE_NAME.fullmatch(name) or name not in services:
            raise Refused(
                f"dependency {name!r}: not a service of this host (it has {sorted(services)})"
            )
    if not isinstance(spec.latency_proxies, list):
        raise Refused("latency_proxies must be a list")
    check_proxies(impl, spec.latency_proxies)
    return spec, check_cpus(start.server_cpus), start.pin
