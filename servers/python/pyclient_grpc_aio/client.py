"""pyclients study: grpc.aio + protobuf client of the numbers service (asyncio or uvloop)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "pyclient_harness"))

import grpc  # noqa: E402
import harness  # noqa: E402

# Before the generated code: a seed-stack variant (impl.toml) names its own with --gen-path.
harness.take_gen_path()

import numbers_pb2  # noqa: E402
import numbers_pb2_grpc  # noqa: E402


class Session:
    """One grpc.aio channel; call() makes the scenario's call and checks every value."""

    def __init__(self, target: str, count: int) -> None:
        self.channel = grpc.aio.insecure_channel(target)
        self.stub = numbers_pb2_grpc.NumbersStub(self.channel)
        self.count = count
        self.call = self.stream if count else self.say_hello

    async def say_hello(self) -> None:
        reply = await self.stub.SayHello(numbers_pb2.HelloRequest(name=harness.NAME))
        harness.check_reply(reply.message)

    async def stream(self) -> None:
        received = 0
        async for reply in self.stub.StreamNumbers(numbers_pb2.StreamRequest(count=self.count)):
            received += 1
            if reply.number != received:
                raise harness.wrong_number(received, reply.number)
        harness.check_count(received, self.count)

    async def close(self) -> None:
        await self.channel.close()


def run() -> None:
    args = harness.parse_args(__doc__, loops=("asyncio", "uvloop"))
    harness.run_async(args, Session)


if __name__ == "__main__":
    harness.main(run)
