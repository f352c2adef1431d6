"""Calls Greeter/SayHello once and prints the reply; run with the host venv's python.

Used by the tests to check what a server answers, not just that it answers.
"""

import sys

import grpc
import hello_pb2
import hello_pb2_grpc


def main() -> None:
    target, name = sys.argv[1], sys.argv[2]
    with grpc.insecure_channel(target) as channel:
        stub = hello_pb2_grpc.GreeterStub(channel)
        reply = stub.SayHello(hello_pb2.HelloRequest(name=name), timeout=10)
    print(reply.message)


if __name__ == "__main__":
    main()
