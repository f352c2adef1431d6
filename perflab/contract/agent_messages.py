"""The server agent's HTTP messages: one record per request and answer shape, shared by
the agent (perflab.host.agent) and the runner's side of it (perflab.host.agent_client).

    POST /start   StartRequest  -> StartReply
    GET  /status                -> StatusReply
    POST /stop    (empty)       -> StopReply
    any refusal                 -> ErrorReply (with the HTTP status 400, 401, 404, 409, 500)

Each record goes to a JSON object with `to_dict` and comes back with `from_dict`, which
checks the shape (every required key, no other, each value of its declared type) and
raises MessageError naming the message and the key. Whether a value is acceptable on this
host (an implementation it has, its CPUs) is the agent's policy, not the shape's:
perflab.host.agent_policy.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar

Message = TypeVar("Message")


class MessageError(ValueError):
    """A message of the wrong shape; the text names the message and the key."""


def _matches(value: object, kind: Any) -> bool:
    """Whether a JSON value fits a field type: Any, a plain type, list[X], dict[str, X], X | Y."""
    origin = typing.get_origin(kind)
    if kind is Any:
        return True
    if origin in (types.UnionType, typing.Union):
        return any(_matches(value, part) for part in typing.get_args(kind))
    if origin is list:
        (item,) = typing.get_args(kind)
        return isinstance(value, list) and all(_matches(v, item) for v in value)
    if origin is dict:
        _, item = typing.get_args(kind)
        return isinstance(value, dict) and all(
            isinstance(k, str) and _matches(v, item) for k, v in value.items()
        )
    if kind is type(None):
        return value is None
    if kind in (int, float) and isinstance(value, bool):
        return False  # JSON true is not a number
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


def from_dict(cls: type[Message], raw: object) -> Message:
    """The record of type cls that raw (parsed JSON) holds, or MessageError saying why not."""
    name = cls.__name__
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    required = sorted(
        n
        for n, f in fields.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )
    if not isinstance(raw, dict):
        raise MessageError(f"{name}: expected a JSON object, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(fields))
    missing = [key for key in required if key not in raw]
    if unknown or missing:
        raise MessageError(
            f"{name}: holds {sorted(fields)} ({', '.join(required)} required); "
            f"unknown {unknown}, missing {missing}"
        )
    hints = typing.get_type_hints(cls)
    for key, value in raw.items():
        if not _matches(value, hints[key]):
            shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
            raise MessageError(f"{name}.{key}: {shown} is not {_type_name(hints[key])}")
    return cls(**raw)


def _type_name(kind: Any) -> str:
    return getattr(kind, "__name__", None) if typing.get_origin(kind) is None else str(kind)


def to_dict(message: object) -> dict[str, Any]:
    """The message as the JSON object sent over the wire."""
    return dataclasses.asdict(message)  # type: ignore[call-overload]


@dataclass
class StartRequest:
    """Start a cell's server: its spec (a CellSpec as JSON), its CPUs and whether to pin."""

    spec: dict[str, Any]
    server_cpus: list[int] = field(default_factory=list)
    pin: bool = False


@dataclass
class StartReply:
    """The started server: where it listens (on the agent's data address), and its command."""

    port: int
    pid: int
    argv: list[str]


@dataclass
class StatusReply:
    """Whether a server is running, and its exit code once it has exited on its own."""

    running: bool
    exit_code: int | None


@dataclass
class StopReply:
    """What the stopped server left: its log, samples and proxies' files for the cell folder."""

    exit_code: int | None  # set when it had exited before the stop
    note: str  # said when it had to be killed
    notes: list[str]
    dependencies_died: list[str]
    server_log: str
    resources_csv: str
    files: dict[str, str]  # name -> text: proxies.json and proxy-*.log
    started_wall: float  # the agent's wall clock when the server's sampling began
    argv: list[str]


@dataclass
class ErrorReply:
    """Why a request was refused or failed."""

    error: str
