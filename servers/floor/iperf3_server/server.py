"""throughput study, raw-TCP floor: iperf3's server behind the servers' contract.

iperf3 -s says nothing the runner understands, so this wrapper starts it (it inherits the
wrapper's CPU pinning), waits until it listens on its port, prints READY, and stops it on
SIGTERM. It looks at iperf3's sockets instead of connecting: a probe connection makes
iperf3 abort that test and re-open its listener, and a client arriving in that moment
(the runner checks the port right after READY) would find it closed.
"""

import argparse
import signal
import subprocess
import sys
import time
from types import FrameType

import psutil

READY_TIMEOUT_S = 10.0


def listening(pid: int, port: int) -> bool:
    try:
        sockets = psutil.Process(pid).net_connections(kind="tcp")
    except psutil.Error:
        return False
    return any(s.status == psutil.CONN_LISTEN and s.laddr.port == port for s in sockets)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--iperf3", default="iperf3", help="the iperf3 binary")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    iperf3 = subprocess.Popen(
        [args.iperf3, "--server", "--bind", args.host, "--port", str(args.port)],
        stdout=sys.stderr,  # its chatter goes to server.log, never mistaken for READY
    )

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        iperf3.terminate()

    signal.signal(signal.SIGTERM, on_sigterm)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not listening(iperf3.pid, args.port):
        if iperf3.poll() is not None or time.monotonic() > deadline:
            iperf3.kill()
            sys.exit(f"iperf3 did not listen on {args.host}:{args.port} (exit {iperf3.poll()})")
        time.sleep(0.05)
    print("READY", flush=True)
    code = iperf3.wait()
    # Stopped by our SIGTERM is a clean exit; anything else is iperf3's own failure.
    sys.exit(0 if code in (0, -signal.SIGTERM, 1) else code)


if __name__ == "__main__":
    main()
