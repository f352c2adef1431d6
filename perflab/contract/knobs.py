"""A study's matrix declared once: each key's name, type, default and a one-line comment.

A study's `matrix.py` declares its matrix as a dataclass `Matrix` whose fields are made by
`knob(kind, comment, default)`; `validate` checks a config against it in one place, in the
order the fields are declared (a later key may depend on an earlier one: a list of choices
from a mapping's names, a default taken from another key), and refuses a bad value with the
key that holds it, e.g. `perflab_matrix_<id>.clients: 0 is not a positive integer`.
ghz's runner/config.go does the same for its options.

Standard library only: the benchmark host imports the matrices.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Protocol, TypeVar


class MatrixError(ValueError):
    """A matrix value that makes no sense; the message names the key."""


class Required:
    """The default of a key every config must set."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = Required()


@dataclass(frozen=True)
class SameAs:
    """A default taken from another (earlier) key's checked value."""

    key: str


@dataclass(frozen=True)
class KeysOf:
    """The names of an (earlier) key's mapping, as the values a choice may take."""

    key: str


@dataclass(frozen=True)
class Context:
    """What a kind may consult: the servers there are and the keys checked before it."""

    known_impls: set[str]
    checked: dict[str, Any]

    def names(self, allowed: Iterable[str] | KeysOf) -> list[str]:
        return list(self.checked[allowed.key] if isinstance(allowed, KeysOf) else allowed)


class Kind(Protocol):
    """A key's type: checks a value, names `key` when refusing it, gives the value to use."""

    def check(self, key: str, value: Any, context: Context) -> Any: ...


@dataclass(frozen=True)
class Knob:
    """One matrix key, as its study declares it."""

    kind: Kind
    comment: str
    default: Any = REQUIRED


def knob(kind: Kind, comment: str, default: Any = REQUIRED) -> Any:
    """A `Matrix` field: the key is the field's name; validate() fills it."""
    return field(metadata={"knob": Knob(kind, comment, default)})


def knobs(record: type) -> dict[str, Knob]:
    """A matrix record's keys in declaration order."""
    return {item.name: item.metadata["knob"] for item in fields(record)}


Record = TypeVar("Record")


def validate(record: type[Record], prefix: str, config: Any, known_impls: set[str]) -> Record:
    """`config` checked against `record` (a dataclass of knobs): every key declared, every
    value of its kind, defaults filled in. Refusals name `<prefix>.<key>`."""
    if not isinstance(config, dict):
        raise MatrixError(f"{prefix}: expected a mapping, got {config!r}")
    declared = knobs(record)
    undeclared = sorted(set(config) - set(declared))
    if undeclared:
        raise MatrixError(f"{prefix}: unknown key(s) {undeclared}; known: {list(declared)}")
    context = Context(known_impls, {})
    for name, declared_knob in declared.items():
        value = config.get(name, MISSING)
        if value is MISSING:
            value = default_of(declared_knob, context)
        context.checked[name] = declared_knob.kind.check(f"{prefix}.{name}", value, context)
    return record(**context.checked)


def default_of(declared: Knob, context: Context) -> Any:
    """A missing key's value: its default; a required key's None, which its kind refuses."""
    if declared.default is REQUIRED:
        return None
    if isinstance(declared.default, SameAs):
        return copy.deepcopy(context.checked[declared.default.key])
    return copy.deepcopy(declared.default)


# --- kinds every study uses -------------------------------------------------------------


def is_int(value: Any) -> bool:
    """An integer, and not a bool (YAML's true is an int to Python)."""
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Int:
    """One integer >= minimum."""

    minimum: int = 1

    def check(self, key: str, value: Any, context: Context) -> int:
        if not is_int(value) or value < self.minimum:
            raise MatrixError(f"{key}: {value!r} is not an integer >= {self.minimum}")
        return value


@dataclass(frozen=True)
class Ints:
    """A non-empty list of positive integers, each at most `most` when given."""

    most: int | None = None
    # What `most` stands for, said when a value is above it.
    most_is: str = ""

    def check(self, key: str, value: Any, context: Context) -> list[int]:
        if not isinstance(value, list) or not value:
            raise MatrixError(
                f"{key}: expected a non-empty list of positive integers, got {value!r}"
            )
        for item in value:
            if not is_int(item) or item <= 0:
                raise MatrixError(f"{key}: {item!r} is not a positive integer")
            if self.most is not None and item > self.most:
                raise MatrixError(f"{key}: {item} is above {self.most} ({self.most_is})")
        return value


@dataclass(frozen=True)
class Number:
    """One positive number, as a float."""

    def check(self, key: str, value: Any, context: Context) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise MatrixError(f"{key}: {value!r} is not a positive number")
        return float(value)


@dataclass(frozen=True)
class Flag:
    """true or false."""

    def check(self, key: str, value: Any, context: Context) -> bool:
        if not isinstance(value, bool):
            raise MatrixError(f"{key}: {value!r} is not true or false")
        return value


@dataclass(frozen=True)
class Text:
    """A string; `what` names it in a refusal."""

    what: str
    empty_ok: bool = False

    def check(self, key: str, value: Any, context: Context) -> str:
        if not isinstance(value, str) or not (value or self.empty_ok):
            raise MatrixError(f"{key}: {value!r} is not {self.what}")
        return value


@dataclass(frozen=True)
class Texts:
    """A non-empty list of strings; `what` names them in a refusal."""

    what: str

    def check(self, key: str, value: Any, context: Context) -> list[str]:
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise MatrixError(f"{key}: expected a list of {self.what}, got {value!r}")
        return value


@dataclass(frozen=True)
class Choices:
    """A non-empty list, each value one of `allowed` (names, or an earlier mapping's names).

    `empty`: what an empty or missing list means: "refuse", "all" (every allowed value) or
    "none" (an empty list).
    """

    allowed: Iterable[str] | KeysOf
    empty: str = "refuse"

    def check(self, key: str, value: Any, context: Context) -> list[str]:
        allowed = context.names(self.allowed)
        if not value and self.empty == "all":
            value = list(allowed)
        if not value and self.empty == "none":
            return []
        if not isinstance(value, list) or not value:
            raise MatrixError(f"{key}: expected a non-empty list from {allowed}, got {value!r}")
        for item in value:
            if item not in allowed:
                raise MatrixError(f"{key}: unknown value {item!r}; choose from {allowed}")
        return value


@dataclass(frozen=True)
class Choice:
    """One value of `allowed` (names, or an earlier mapping's names)."""

    allowed: Iterable[str] | KeysOf

    def check(self, key: str, value: Any, context: Context) -> str:
        allowed = context.names(self.allowed)
        if value not in allowed:
            raise MatrixError(f"{key}: {value!r} is not one of {sorted(allowed)}")
        return value


@dataclass(frozen=True)
class Impl:
    """A `<language>/<folder>` under servers/ that has an impl.toml."""

    def check(self, key: str, value: Any, context: Context) -> str:
        if value not in context.known_impls:
            known = sorted(context.known_impls)
            raise MatrixError(f"{key}: unknown server {value!r}; known servers: {known}")
        return value


@dataclass(frozen=True)
class NamedImpl:
    """{name: <label>, impl: <language>/<folder>}: one server or client of a study."""

    def check(self, key: str, value: Any, context: Context) -> dict[str, Any]:
        if not isinstance(value, dict) or not {"name", "impl"} <= set(value):
            raise MatrixError(f"{key}: expected {{name: <label>, impl: <language>/<folder>}}")
        Impl().check(f"{key}.impl", value["impl"], context)
        return value


@dataclass(frozen=True)
class Implementations:
    """{name: {impl: <language>/<folder>, options: {...}}}: every impl has an impl.toml."""

    def check(self, key: str, value: Any, context: Context) -> dict[str, Any]:
        if not isinstance(value, dict) or not value:
            raise MatrixError(f"{key}: expected a mapping of implementation name to its folder")
        for name, entry in value.items():
            if not isinstance(entry, dict) or "impl" not in entry:
                raise MatrixError(
                    f"{key}.{name}: expected {{impl: <language>/<folder>, options: ...}}"
                )
            Impl().check(f"{key}.{name}.impl", entry["impl"], context)
            if not isinstance(entry.get("options", {}), dict):
                raise MatrixError(f"{key}.{name}.options: expected a mapping")
            # The same server on another library stack (hello's seed000): stack -> impl.
            stacks = entry.get("stacks", {})
            if not isinstance(stacks, dict):
                raise MatrixError(f"{key}.{name}.stacks: expected a mapping of stack to impl")
            for stack, impl in stacks.items():
                Impl().check(f"{key}.{name}.stacks.{stack}", impl, context)
        return value


@dataclass(frozen=True)
class AaPair:
    """`aa_pair`: the configurations a study runs twice in every round (A/A cells, its
    noise floor), one mapping {coordinate: value} or a list of them, one per kind of
    client or method whose noise its claims need (perflab.analysis.noise judges a claim
    with the A/A of its own kind); every coordinate is checked by its own knob (kind and
    default). Checked as a list; empty or missing: no A/A cells."""

    coordinates: dict[str, Knob]

    def check(self, key: str, value: Any, context: Context) -> list[dict[str, Any]]:
        if value in (None, {}, []):
            return []
        pairs = value if isinstance(value, list) else [value]
        return [
            self.check_one(f"{key}[{index}]" if isinstance(value, list) else key, pair, context)
            for index, pair in enumerate(pairs)
        ]

    def check_one(self, key: str, value: Any, context: Context) -> dict[str, Any]:
        if not isinstance(value, dict) or not value:
            raise MatrixError(
                f"{key}: expected a mapping of {list(self.coordinates)} to values, got {value!r}"
            )
        unknown = sorted(set(value) - set(self.coordinates))
        if unknown:
            raise MatrixError(f"{key}: unknown key(s) {unknown}; known: {list(self.coordinates)}")
        checked = {}
        for name, coordinate in self.coordinates.items():
            given = value.get(name, MISSING)
            given = default_of(coordinate, context) if given is MISSING else given
            checked[name] = coordinate.kind.check(f"{key}.{name}", given, context)
        return checked


def aa_pair_knob(**coordinates: Knob) -> Any:
    """A study's `aa_pair` key, naming its configuration by these coordinates."""
    comment = "configurations run twice per round (A/A), one per kind; empty: none"
    return knob(AaPair(coordinates), comment, [])
