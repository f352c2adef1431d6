"""The controller's lock agrees with its hand-edited pins, and make installs from the lock."""

from __future__ import annotations

import re
from pathlib import Path

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


def test_every_top_level_pin_is_in_the_lock_at_the_same_version() -> None:
    top = _pins(ROOT / "requirements.txt")
    locked = _pins(ROOT / "requirements.lock")
    assert {"boto3", "botocore", "jupyterlab", "moto", "ansible"} <= top.keys()
    mismatched = {name: (version, locked.get(name)) for name, version in top.items()
                  if locked.get(name) != version}
    assert not mismatched, f"run `make lock`: requirements.txt vs requirements.lock {mismatched}"


def test_every_locked_package_carries_hashes() -> None:
    # One entry per package: the pin line, its --hash lines, then `# via` comments.
    entries = re.split(r"\n(?=[A-Za-z0-9])", (ROOT / "requirements.lock").read_text())
    packages = [entry for entry in entries if PIN.match(entry)]
    assert len(packages) > 50
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
