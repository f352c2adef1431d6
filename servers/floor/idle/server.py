"""throughput study: a server that only listens, for floor cells whose client needs no peer.

openssl speed runs on the client's CPUs alone; the runner still starts a server for every
cell, so this one holds the port, prints READY and exits on SIGTERM.
"""

import argparse
import signal
import socket
import sys
from types import FrameType


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    listener = socket.create_server((args.host, args.port))

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        listener.close()
        sys.exit(0)

    signal.signal(signal.SIGTERM, on_sigterm)
    print("READY", flush=True)
    while True:
        connection, _ = listener.accept()  # the runner's readiness probe; nothing else calls
        connection.close()


if __name__ == "__main__":
    main()
