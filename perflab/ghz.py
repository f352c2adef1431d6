"""ghz command lines. Parsing its JSON lives in perflab.parsers."""

from __future__ import annotations

import json
from pathlib import Path

from perflab.cell import LoadSpec


def ghz_binary(bin_dir: Path, version: str) -> Path:
    """Roles install every pinned ghz as bin/ghz-<version> so a run can calibrate between them."""
    return bin_dir / f"ghz-{version}"


def ghz_argv(
    binary: Path,
    load: LoadSpec,
    proto_dir: Path,
    target: str,
    cpus: int,
    out: Path,
    warmup: bool = False,
) -> list[str]:
    argv = [
        str(binary),
        "--insecure",
        f"--proto={proto_dir / load.proto}",
        f"--import-paths={proto_dir}",
        f"--call={load.call}",
        f"--data={json.dumps(load.data)}",
        f"--concurrency={load.concurrency}",
        f"--cpus={cpus}",
        "--format=json",
        f"--output={out}",
    ]
    total, duration = (
        (load.warmup_total, load.warmup_s) if warmup else (load.total, load.duration_s)
    )
    if total:
        argv.append(f"--total={total}")
    elif duration:
        # "wait" lets calls in flight at the deadline finish and be counted, instead of
        # reporting them as errors the server never caused.
        argv += [f"--duration={duration}s", "--duration-stop=wait"]
    else:
        raise ValueError("a ghz load needs total or duration_s (warm-up: warmup_total or warmup_s)")
    argv.append(target)
    return argv
