"""Each lock agrees with its hand-edited pins, and make and the roles install from the locks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;\\]+)")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(path: Path) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line)
        if match:
            pins.setdefault(_norm(match.group(1)), match.group(2))
    return pins


# (hand-edited pins, the lock make lock resolves from them, a package the lock must hold).
LOCKS = [
    ("requirements.txt", "requirements.lock", "jupyterlab"),
    ("servers/python/requirements.txt", "servers/python/requirements.lock", "h2"),
    ("servers/python/requirements-seed001.txt", "servers/python/requirements-seed001.lock", "h2"),
]


@pytest.mark.parametrize(("pins", "lock", "transitive"), LOCKS)
def test_every_top_level_pin_is_in_the_lock_at_the_same_version(
    pins: str, lock: str, transitive: str
) -> None:
    top = _pins(ROOT / pins)
    locked = _pins(ROOT / lock)
    assert len(top) >= 5 and transitive in locked
    mismatched = {
        name: (version, locked.get(name))
        for name, version in top.items()
        if locked.get(name) != version
    }
    assert not mismatched, f"run `make lock`: {pins} vs {lock} {mismatched}"


@pytest.mark.parametrize("lock", [lock for _, lock, _ in LOCKS])
def test_every_locked_package_carries_hashes(lock: str) -> None:
    # One entry per package: the pin line, its --hash lines, then `# via` comments.
    entries = re.split(r"\n(?=[A-Za-z0-9])", (ROOT / lock).read_text())
    packages = [entry for entry in entries if PIN.match(entry)]
    assert len(packages) > 10
    unhashed = [entry.splitlines()[0] for entry in packages if "--hash=sha256:" not in entry]
    assert not unhashed


def test_moto_server_extra_is_locked() -> None:
    # moto[server] pulls in flask and werkzeug: without them moto_server does not start.
    locked = _pins(ROOT / "requirements.lock")
    assert {"flask", "werkzeug", "flask-cors"} <= locked.keys()


def test_the_venv_is_installed_from_the_lock_with_hashes() -> None:
    makefile = (ROOT / "Makefile").read_text()
    rule = re.search(r"^\$\(VENV\)/\.installed:(.*)$", makefile, re.MULTILINE)
    assert rule and "requirements.lock" in rule.group(1)
    assert "--require-hashes -r requirements.lock" in makefile


def test_the_host_venvs_are_installed_from_their_locks_with_hashes() -> None:
    makefile = (ROOT / "Makefile").read_text()
    host_locks = re.search(r"^HOST_LOCKS\s*:=(.*)$", makefile, re.MULTILINE)
    assert host_locks
    assert set(host_locks.group(1).split()) == {lock for _, lock, _ in LOCKS[1:]}
    defaults = {
        role: yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text())
        for role in ("host_venv", "pyclients_build")
    }
    assert defaults["host_venv"]["host_venv_requirements"].endswith("/requirements.lock")
    seed = defaults["pyclients_build"]["pyclients_build_seed_requirements"]
    assert seed.endswith("/requirements-seed001.lock")
    install = next(
        task
        for task in yaml.safe_load((ROOT / "roles/host_venv/tasks/main.yml").read_text())
        if "requirements" in task.get("ansible.builtin.pip", {})
    )
    assert install["ansible.builtin.pip"]["extra_args"] == "--require-hashes"
