"""Implementation folders (servers/<language>/<name>/impl.toml) and their start commands."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path


class UnknownImplementation(ValueError):
    pass


@dataclass(frozen=True)
class Implementation:
    key: str  # "<language>/<folder>", how the matrix names it
    name: str
    language: str
    serves: tuple[str, ...]
    build: str
    command: tuple[str, ...]
    options: dict[str, object] = field(default_factory=dict)
    folder: Path = Path()
    # A client that, given `--target -`, reads its target from stdin once it has started:
    # the runner starts it beside its server (perflab.host.runner.CellRunner).
    target_on_stdin: bool = False


@dataclass(frozen=True)
class HostPaths:
    """Where a host keeps what the roles installed, and where the source lives."""

    home: Path  # perflab_home: venv/, bin/, gen/
    src: Path  # a tree holding servers/ and proto/

    @property
    def python(self) -> Path:
        return self.home / "venv" / "bin" / "python"

    @property
    def bin(self) -> Path:
        return self.home / "bin"

    @property
    def gen(self) -> Path:
        return self.home / "gen"


def read_impl(folder: Path, servers_root: Path) -> Implementation:
    path = folder / "impl.toml"
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UnknownImplementation(f"{path}: cannot read implementation file: {exc}") from exc
    missing = {"name", "language", "serves", "command"} - raw.keys()
    if missing:
        raise UnknownImplementation(f"{path}: missing keys {sorted(missing)}")
    return Implementation(
        key=folder.relative_to(servers_root).as_posix(),
        name=raw["name"],
        language=raw["language"],
        serves=tuple(raw["serves"]),
        build=raw.get("build", "none"),
        command=tuple(raw["command"]),
        options=dict(raw.get("options", {})),
        folder=folder,
        target_on_stdin=bool(raw.get("target_on_stdin", False)),
    )


def discover(servers_root: Path) -> dict[str, Implementation]:
    """Every implementation under servers_root, keyed by "<language>/<folder>"."""
    found = {}
    for impl_file in sorted(servers_root.glob("*/*/impl.toml")):
        impl = read_impl(impl_file.parent, servers_root)
        found[impl.key] = impl
    return found


def command_argv(
    impl: Implementation,
    paths: HostPaths,
    options: dict[str, object] | None = None,
    **values: str,
) -> list[str]:
    """The argv that starts impl, with matrix options over the folder's defaults.

    values fill the command's own placeholders: {host} {port} for a server,
    {target} {out} for a client.
    """
    unknown = set(options or {}) - set(impl.options)
    if unknown:
        raise UnknownImplementation(
            f"{impl.key}: unknown option(s) {sorted(unknown)}; it takes {sorted(impl.options)}"
        )
    values = {
        "home": str(paths.home),
        "python": str(paths.python),
        "bin": str(paths.bin),
        "gen": str(paths.gen),
        "here": str(paths.src / "servers" / impl.key),
        "src": str(paths.src),
        **values,
    }
    try:
        argv = [part.format(**values) for part in impl.command]
    except KeyError as exc:
        raise UnknownImplementation(f"{impl.key}: command uses unknown placeholder {exc}") from exc
    for key, value in {**impl.options, **(options or {})}.items():
        argv += [f"--{key}", str(value)]
    return argv
