"""pyclients study: betterproto2 + grpclib client of the numbers service (asyncio or
uvloop): betterproto's maintained successor.

Its code is generated with client_generation=async by roles/pyclients_build into its own
package (bp2async under --gen-path): the shared bp2 package also holds grpcio sync stubs,
and importing it would load grpcio into this client and add grpcio's memory to its figures.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "pyclient_harness"))

import harness  # noqa: E402

harness.take_gen_path()

from bp2async.numbers import HelloRequest, NumbersStub, StreamRequest  # noqa: E402
from grpclib.client import Channel  # noqa: E402


class Session:
    """One grpclib channel; call() makes the scenario's call and checks every value."""

    def __init__(self, target: str, count: int) -> None:
        host, port = harness.split_target(target)
        self.channel = Channel(host, port)
        self.stub = NumbersStub(self.channel)
        self.count = count
        self.call = self.stream if count else self.say_hello

    async def say_hello(self) -> None:
        reply = await self.stub.say_hello(HelloRequest(name=harness.NAME))
        harness.check_reply(reply.message)

    async def stream(self) -> None:
        received = 0
        async for reply in self.stub.stream_numbers(StreamRequest(count=self.count)):
            received += 1
            if reply.number != received:
                raise harness.wrong_number(received, reply.number)
        harness.check_count(received, self.count)

    async def close(self) -> None:
        self.channel.close()


def run() -> None:
    args = harness.parse_args(__doc__, loops=("asyncio", "uvloop"))
    harness.run_async(args, Session)


if __name__ == "__main__":
    harness.main(run)
