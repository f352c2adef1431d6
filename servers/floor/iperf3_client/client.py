"""throughput study, raw-TCP floor: one iperf3 TCP stream to the iperf3 server.

The same loopback, the same CPU pinning as a gRPC cell (the runner pins this wrapper and
iperf3 inherits it). The first --omit_s seconds are iperf3's own warm-up, left out of its
totals. Writes client.json with the received rate in GiB/s and iperf3's JSON beside it.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def parse_iperf3(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """Metrics of one iperf3 -J run: what the receiver got, and both ends' CPU use.

    iperf3's host_total is this (client) process whichever way the data flows, remote_total
    the server's.
    """
    if "error" in raw:
        raise ValueError(f"iperf3 failed: {raw['error']}")
    received = raw["end"]["sum_received"]
    cpu = raw["end"].get("cpu_utilization_percent", {})
    return [
        {
            "metric": "throughput",
            "value": received["bytes"] / 2**30 / received["seconds"],
            "unit": "GiB/s",
        },
        {"metric": "stream_seconds", "value": received["seconds"], "unit": "s"},
        {"metric": "bytes", "value": received["bytes"], "unit": "B"},
        {
            "metric": "iperf3_client_cpu_percent",
            "value": cpu.get("host_total", float("nan")),
            "unit": "%",
        },
        {
            "metric": "iperf3_server_cpu_percent",
            "value": cpu.get("remote_total", float("nan")),
            "unit": "%",
        },
    ]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=5.0, help="measured seconds")
    parser.add_argument("--omit_s", type=float, default=1.0, help="warm-up seconds left out")
    parser.add_argument("--length", default="128K", help="iperf3 -l: bytes per write")
    parser.add_argument(
        "--reverse",
        type=int,
        default=1,
        help="1: the server sends, as the gRPC server streams to its client",
    )
    parser.add_argument("--iperf3", default="iperf3")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    host, port = args.target.rsplit(":", 1)
    argv = [
        args.iperf3,
        "--client",
        host,
        "--port",
        port,
        "--json",
        "--time",
        str(args.seconds),
        "--omit",
        str(args.omit_s),
        "--len",
        args.length,
    ]
    if args.reverse:
        argv.append("--reverse")
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=args.seconds + 60, check=False
    )
    try:
        raw = json.loads(done.stdout)
        metrics = parse_iperf3(raw)
    except (ValueError, KeyError) as exc:
        sys.exit(f"iperf3 exited {done.returncode}: {exc}\n{done.stdout[-2000:]}{done.stderr}")
    args.out.with_name("iperf3.json").write_text(done.stdout)
    args.out.write_text(
        json.dumps(
            {"metrics": metrics, "argv": argv, "version": raw.get("start", {}).get("version", "")},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
