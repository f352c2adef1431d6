"""throughput study, TLS floor: `openssl speed -evp aes-128-gcm` on the client's CPU.

TLS 1.3 between these peers uses AES-128-GCM (or AES-256-GCM), each end encrypting or
decrypting on one core, so one core's AES-GCM rate on the record size bounds what any
TLS stream can carry. Writes client.json with that rate in GiB/s and openssl's output beside it.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def parse_openssl_speed(text: str) -> list[dict[str, Any]]:
    """Metrics of `openssl speed -mr` for one block size: its +F line holds bytes per second."""
    for line in text.splitlines():
        if line.startswith("+F:"):
            fields = line.split(":")
            rate = float(fields[3])
            return [
                {"metric": "throughput", "value": rate / 2**30, "unit": "GiB/s"},
                {"metric": "cipher_bytes_per_s", "value": rate, "unit": "B/s"},
            ]
    raise ValueError("no +F: line in openssl speed's output")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", required=True, help="unused: openssl needs no peer")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cipher", default="aes-128-gcm")
    parser.add_argument("--bytes", type=int, default=16384, help="block size: a TLS record")
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--openssl", default="openssl")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    argv = [
        args.openssl,
        "speed",
        "-mr",
        "-evp",
        args.cipher,
        "-bytes",
        str(args.bytes),
        "-seconds",
        str(args.seconds),
    ]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=args.seconds + 60, check=False
    )
    try:
        metrics = parse_openssl_speed(done.stdout)
    except ValueError as exc:
        sys.exit(f"openssl exited {done.returncode}: {exc}\n{done.stdout[-2000:]}{done.stderr}")
    version = subprocess.run(
        [args.openssl, "version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    args.out.with_name("openssl_speed.txt").write_text(done.stdout)
    args.out.write_text(
        json.dumps({"metrics": metrics, "argv": argv, "version": version}, indent=2)
    )


if __name__ == "__main__":
    main()
