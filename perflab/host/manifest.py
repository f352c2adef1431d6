"""Host facts and tool versions (gathered on each host) and the run manifest (merged once)."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import socket
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from perflab.contract.cell import iter_cells
from perflab.contract.phases import manifest_entry, run_split
from perflab.contract.rounds import ROUND_RULE, round_seed
from perflab.host.impls import HostPaths

# Python packages whose versions matter to the results, read from the host venv.
PY_PACKAGES = (
    "grpcio",
    "grpcio-tools",
    "protobuf",
    "grpclib",
    "betterproto",
    "betterproto2",
    "uvloop",
    "psutil",
    "boto3",
    "aioboto3",
    "pymongo",
)
DEBIAN_PACKAGES = ("libgrpc++-dev", "protobuf-compiler", "iperf3", "nodejs")


def command_version(argv: list[str], pattern: str = r"\d+\.\d+(\.\d+)?") -> str:
    """The first version-looking string a command prints, or '' if it is not there."""
    if shutil.which(argv[0]) is None and not Path(argv[0]).is_file():
        return ""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    match = re.search(pattern, done.stdout + done.stderr)
    return match.group(0) if match else ""


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def boot_id() -> str:
    """This boot's id: two runs of one boot are one site when runs are pooled
    (perflab.analysis.sites); '' where the kernel does not say."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def memory_bytes() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def venv_packages(python: Path) -> dict[str, str]:
    if not python.is_file():
        return {}
    script = (
        "import importlib.metadata as m, json\n"
        f"names = {list(PY_PACKAGES)!r}\n"
        "out = {}\n"
        "for n in names:\n"
        "    try: out[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: pass\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=False)
    return json.loads(done.stdout) if done.returncode == 0 else {}


def venv_distributions(python: Path) -> dict[str, str]:
    """Every distribution the venv holds, name -> version: the transitive libraries too, so
    two runs of one commit whose results differ can be checked for a library that moved."""
    if not python.is_file():
        return {}
    script = (
        "import importlib.metadata as m, json\n"
        "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))\n"
    )
    done = subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {}
    return dict(sorted(json.loads(done.stdout).items(), key=lambda item: item[0].lower()))


def debian_versions() -> dict[str, str]:
    if shutil.which("dpkg-query") is None:
        return {}
    versions = {}
    for name in DEBIAN_PACKAGES:
        done = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", name], capture_output=True, text=True, check=False
        )
        if done.returncode == 0 and done.stdout:
            versions[name] = done.stdout
    return versions


def ghz_versions(bin_dir: Path) -> list[str]:
    return sorted(p.name.removeprefix("ghz-") for p in bin_dir.glob("ghz-*"))


def stack_facts(home: Path) -> dict[str, Any]:
    """Library stack -> what its role found on this host ({home}/stacks/<stack>.json, written
    by roles/seed000_stack): whether it installed, on which Python, and where it did, the
    versions its venv holds; {} where no such role ran."""
    found: dict[str, Any] = {}
    for path in sorted((home / "stacks").glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            found[path.stem] = {"installed": False, "error": f"unreadable {path.name}: {exc}"}
            continue
        venv = str(record.get("venv") or "")
        if record.get("installed") and venv:
            record["python_packages"] = venv_packages(Path(venv) / "bin" / "python")
            record["python_distributions"] = venv_distributions(Path(venv) / "bin" / "python")
        found[path.stem] = record
    return found


def host_facts(paths: HostPaths) -> dict[str, Any]:
    """What a reader needs to judge a number from this host."""
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "memory_bytes": memory_bytes(),
        "kernel": platform.release(),
        "boot_id": boot_id(),
        # How busy the host already was when the run started: a noisy host is on record.
        "loadavg_1_5_15": list(os.getloadavg()),
        "os": platform.platform(),
        "versions": {
            "python": command_version([str(paths.python), "--version"]),
            "go": command_version(["go", "version"], r"go\d+\.\d+(\.\d+)?"),
            "node": command_version(["node", "--version"]),
            "gcc": command_version(["gcc", "--version"]),
            "iperf3": command_version(["iperf3", "--version"]),
            "ghz_installed": ghz_versions(paths.bin),
            "python_packages": venv_packages(paths.python),
            "python_distributions": venv_distributions(paths.python),
            "debian_packages": debian_versions(),
            "stacks": stack_facts(paths.home),
        },
    }


def git_sha(repo: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    sha = done.stdout.strip() if done.returncode == 0 else "unknown"
    dirty = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return f"{sha}-dirty" if dirty and sha != "unknown" else sha


def cells_ran(run_dir: Path) -> dict[str, Any]:
    """When the run's cells ran and from which code, read from the cells themselves.

    The playbook invocation that writes the manifest may be a resume that only collected:
    its own clock and checkout say nothing about when or with what the cells were measured.
    """
    starts, ends, revisions = [], [], set()
    for _, cell in iter_cells(run_dir, include_aa=True):
        if cell.get("start"):
            starts.append(cell["start"])
        if cell.get("end"):
            ends.append(cell["end"])
        if cell.get("code_revision"):
            revisions.add(cell["code_revision"])
    # ISO 8601 times in one zone sort as text.
    return {
        "first_cell_start": min(starts) if starts else None,
        "last_cell_end": max(ends) if ends else None,
        "code_revisions": sorted(revisions),
    }


def write_manifest(
    run_dir: Path, profile: str, topology: str, repo: Path, start: str, end: str | None = None
) -> dict[str, Any]:
    """Merges the run's facts with every host's facts (hosts/*.json) into manifest.json."""
    collected = {
        "start": start,
        "end": end or datetime.now(UTC).isoformat(timespec="seconds"),
        "git_sha": git_sha(repo),
    }
    manifest = build_manifest(run_dir, profile, topology, collected)
    (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return manifest


def build_manifest(
    run_dir: Path, profile: str, topology: str, collected: dict[str, str]
) -> dict[str, Any]:
    """start, end and git_sha are the cells' own (first start, last end, the revision their
    code was copied from); what the collecting invocation saw is kept as `collected`."""
    ran = cells_ran(run_dir)
    revisions = ran["code_revisions"]
    hosts = {
        path.stem: json.loads(path.read_text())
        for path in sorted((run_dir / "hosts").glob("*.json"))
    }
    calibration_path = run_dir / "calibration.json"
    studies = sorted(p.name for p in run_dir.iterdir() if p.is_dir() and p.name != "hosts")
    return {
        "run_id": run_dir.name,
        "profile": profile,
        "topology": topology,
        # One revision, or every one the cells ran from (a resume across commits says so).
        "git_sha": " + ".join(revisions) if revisions else collected["git_sha"],
        "start": ran["first_cell_start"] or collected["start"],
        "end": ran["last_cell_end"] or collected["end"],
        "collected": collected,
        "hosts": hosts,
        "calibration": json.loads(calibration_path.read_text())
        if calibration_path.is_file()
        else None,
        "studies": studies,
        # The order the cells ran in, recomputable: perflab.contract.rounds.round_order.
        "rounds": {
            "rule": ROUND_RULE,
            "seeds": {study: round_seed(run_dir.name, study) for study in studies},
        },
        # Where the measuring time went, per study and in parts (perflab.contract.phases).
        "measuring": manifest_entry(run_split(run_dir)),
    }
