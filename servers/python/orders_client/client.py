"""orders study (seed 003): many order clients in parallel against the orders server.

--clients threads start together (a barrier), each on its own channel and connection,
and send --orders orders in total between them (the seed's --count), in one of three modes:

- unary:          one AddOrder call per order;
- bidi:           one AddOrderStream per client, lock-step: an order, then its reply;
- bidi_pipelined: one AddOrderStream per client, every order sent without waiting, the
                  replies read as they come (in order, so reply i answers order i).

Per order it records the round trip at the client (monotonic clock) and, from the
wall-clock stamps, the one-way times client->server (responseTime - requestTime) and
server->client (receipt - responseTime): meaningful only when both share a clock (same
host or network namespaces of one host), which --same_clock says. Every client's connection
opens first (--connect_batch at a time), then each client sends --warmup orders on it,
discarded but counted: the report's `warmup` holds their errors and when each part ended.
A latency profile is not this client's business: the runner puts the profile's Toxiproxy
between it and the server and passes the proxy as --target. Writes client.json; exits 1
if any measured order failed.

--client_order sequential is the other reading of the seed's log (docs/orders-sequential-
clients.md): the clients run one after another in this thread, each on its own channel with
its own share of the orders (warm-up included in its time, as a fresh seed client's was),
and each client's elapsed time and the cumulative time after it are written, as the seed's
"1000 transactions and elapsed time" lines were.
"""

from __future__ import annotations

import argparse
import collections
import json
import queue
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import order_pb2
import order_pb2_grpc

MODES = ("unary", "bidi", "bidi_pipelined")
CLIENT_ORDERS = ("parallel", "sequential")
QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999}
# The CDF kept in client.json: every half percentile plus the tail, not every sample.
CDF_POINTS = sorted({i / 200 for i in range(201)} | {0.999, 0.9999})


@dataclass
class Samples:
    """One client's measured orders (nanoseconds) and failures."""

    rtt: list[int] = field(default_factory=list)
    request_oneway: list[int] = field(default_factory=list)
    reply_oneway: list[int] = field(default_factory=list)
    # responseTime before requestTime, or receipt before responseTime: a clock problem.
    stamp_violations: int = 0
    errors: collections.Counter[str] = field(default_factory=collections.Counter)

    def add(self, sent_wall: int, rtt_ns: int, reply: order_pb2.OrderReply, received_wall: int):
        if not reply.result:
            self.errors["reply with result=false"] += 1
            return
        response_wall = reply.responseTime.ToNanoseconds()
        self.rtt.append(rtt_ns)
        self.request_oneway.append(response_wall - sent_wall)
        self.reply_oneway.append(received_wall - response_wall)
        if response_wall < sent_wall or received_wall < response_wall:
            self.stamp_violations += 1


def new_order(number: int) -> order_pb2.Order:
    order = order_pb2.Order(instrumentID=number, price=100 + number % 7, quantity=1, side=True)
    order.requestTime.FromNanoseconds(time.time_ns())
    return order


def last_non_empty(values: list[str] | None) -> str:
    chosen = [v for v in (values or []) if v]
    return chosen[-1] if chosen else ""


def open_channel(args: argparse.Namespace) -> grpc.Channel:
    # A local subchannel pool: each client gets its own connection, as separate processes would.
    options = [("grpc.use_local_subchannel_pool", 1)]
    if args.security == "tls":
        folder = Path(last_non_empty(args.tls_dir))
        credentials = grpc.ssl_channel_credentials(
            root_certificates=(folder / "ca.pem").read_bytes()
        )
        return grpc.secure_channel(args.target, credentials, options=options)
    return grpc.insecure_channel(args.target, options=options)


def send_unary(stub: order_pb2_grpc.OrderServiceStub, count: int, timeout: float, into: Samples):
    for number in range(count):
        order = new_order(number)
        start = time.perf_counter_ns()
        try:
            reply = stub.AddOrder(order, timeout=timeout)
        except grpc.RpcError as exc:
            into.errors[f"{exc.code().name}: {exc.details()}"] += 1
            continue
        into.add(
            order.requestTime.ToNanoseconds(), time.perf_counter_ns() - start, reply, time.time_ns()
        )


def send_bidi(stub: order_pb2_grpc.OrderServiceStub, count: int, timeout: float, into: Samples):
    """Lock-step: the next order leaves only when the previous reply is in. The first error
    is the one recorded: the stream is then over (or cancelled, if the error was ours), and
    nothing more is read from it, so a cancellation of our own never stands in for it."""
    outbox: queue.SimpleQueue[order_pb2.Order | None] = queue.SimpleQueue()

    def requests() -> Iterator[order_pb2.Order]:
        while (order := outbox.get()) is not None:
            yield order

    replies = stub.AddOrderStream(requests(), timeout=timeout)
    try:
        for number in range(count):
            order = new_order(number)
            start = time.perf_counter_ns()
            outbox.put(order)
            reply = next(replies)
            into.add(
                order.requestTime.ToNanoseconds(),
                time.perf_counter_ns() - start,
                reply,
                time.time_ns(),
            )
        outbox.put(None)
        for _ in replies:  # the stream ends when the server has answered the last order
            into.errors["reply without an order"] += 1
    except (grpc.RpcError, StopIteration) as exc:
        into.errors[describe(exc)] += 1
        replies.cancel()  # a no-op when the stream already ended with that error
    finally:
        outbox.put(None)


def send_bidi_pipelined(
    stub: order_pb2_grpc.OrderServiceStub, count: int, timeout: float, into: Samples
):
    """Every order sent as fast as the stream takes it; reply i answers order i."""
    sent: collections.deque[tuple[int, int]] = collections.deque()

    def requests() -> Iterator[order_pb2.Order]:
        for number in range(count):
            order = new_order(number)
            sent.append((order.requestTime.ToNanoseconds(), time.perf_counter_ns()))
            yield order

    try:
        for reply in stub.AddOrderStream(requests(), timeout=timeout):
            received = time.perf_counter_ns()
            wall, start = sent.popleft()
            into.add(wall, received - start, reply, time.time_ns())
    except (grpc.RpcError, IndexError) as exc:
        into.errors[describe(exc)] += 1


SENDERS = {"unary": send_unary, "bidi": send_bidi, "bidi_pipelined": send_bidi_pipelined}


def describe(exc: BaseException) -> str:
    if isinstance(exc, grpc.RpcError):
        return f"{exc.code().name}: {exc.details()}"
    if isinstance(exc, StopIteration):
        return "the stream ended before every order had its reply"
    return f"{type(exc).__name__}: {exc}"


def share(total: int, clients: int) -> list[int]:
    """total orders spread over the clients, the first ones taking the remainder."""
    base, extra = divmod(total, clients)
    return [base + (1 if i < extra else 0) for i in range(clients)]


def quantile(values: list[int] | list[float], q: float) -> float:
    """Nearest-rank quantile of sorted values (no interpolation: a value that occurred)."""
    index = min(len(values) - 1, max(0, int(round(q * len(values) + 0.5)) - 1))
    return float(values[index])


def distribution(name: str, values_ns: list[int]) -> list[dict[str, object]]:
    values = sorted(values_ns)
    if not values:
        return []
    rows = [
        {"metric": f"{name}_{label}", "value": quantile(values, q) / 1e3, "unit": "us"}
        for label, q in QUANTILES.items()
    ]
    rows.append({"metric": f"{name}_max", "value": values[-1] / 1e3, "unit": "us"})
    rows.append({"metric": f"{name}_mean", "value": sum(values) / len(values) / 1e3, "unit": "us"})
    return rows


def cdf(values_ns: list[int]) -> list[list[float]]:
    values = sorted(values_ns)
    return [[q, quantile(values, q) / 1e3] for q in CDF_POINTS] if values else []


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--target",
        required=True,
        help="host:port; -: read it from stdin once started (the runner starts this client "
        "while its server starts, and sends the target when the server is ready)",
    )
    parser.add_argument("--out", required=True)
    parser.add_argument("--mode", choices=MODES, default="unary")
    parser.add_argument("--clients", type=int, default=1, help="clients started together")
    parser.add_argument("--orders", type=int, default=1000, help="orders in total (seed --count)")
    parser.add_argument("--warmup", type=int, default=10, help="discarded orders per client")
    parser.add_argument("--security", choices=["plaintext", "tls"], default="plaintext")
    parser.add_argument("--tls_dir", action="append", help="folder with ca.pem (for tls)")
    parser.add_argument("--same_clock", type=int, default=1, help="1: one-way times are valid")
    parser.add_argument("--call_timeout_s", type=float, default=120.0)
    parser.add_argument(
        "--connect_batch", type=int, default=32, help="connections opened together before warm-up"
    )
    parser.add_argument(
        "--client_order", choices=CLIENT_ORDERS, default="parallel", help="parallel: together"
    )
    args = parser.parse_args()
    if args.target == "-":
        args.target = sys.stdin.readline().strip()
        if not args.target:
            parser.error("--target -: stdin ended before a target came")
    if args.connect_batch < 1:
        parser.error("need --connect_batch >= 1")
    if args.clients < 1 or args.orders < args.clients:
        parser.error("need --clients >= 1 and --orders >= --clients (every client sends one)")
    return args


@dataclass
class Connected:
    """How the clients' connections opened: their channels, in client order, and the time."""

    channels: list[grpc.Channel]
    seconds: float
    # Connections neither READY nor refused within a call's deadline, and refused ones
    # (TRANSIENT_FAILURE): their clients' first calls say why, as errors.
    not_ready: int = 0


SETTLED = (
    grpc.ChannelConnectivity.READY,
    grpc.ChannelConnectivity.TRANSIENT_FAILURE,
    grpc.ChannelConnectivity.SHUTDOWN,
)


def settle(channels: list[grpc.Channel], timeout: float) -> int:
    """Starts every channel's connection at once and waits until each is READY or refused
    (or the timeout is over); returns how many are not READY."""
    states: list[grpc.ChannelConnectivity | None] = [None] * len(channels)
    done = threading.Condition()
    callbacks = []
    for i, channel in enumerate(channels):

        def seen(state: grpc.ChannelConnectivity, i: int = i) -> None:
            if state in SETTLED:
                with done:
                    states[i] = state
                    done.notify_all()

        callbacks.append(seen)
        channel.subscribe(seen, try_to_connect=True)
    with done:
        done.wait_for(lambda: all(state is not None for state in states), timeout)
    for channel, seen in zip(channels, callbacks, strict=True):
        channel.unsubscribe(seen)
    return sum(state is not grpc.ChannelConnectivity.READY for state in states)


def connect_all(args: argparse.Namespace) -> Connected:
    """Every client's own connection, opened before any order is sent, `connect_batch` at a
    time: a batch's handshakes run together, and the next batch starts when they are all
    READY. All 1 000 at once, a loaded host's server cancelled hundreds of the warm-up
    streams that followed; one at a time, the handshakes queue behind each other. Once a
    connection is refused or late, the rest open without waiting: their calls report it."""
    start = time.perf_counter()
    channels: list[grpc.Channel] = []
    not_ready = 0
    for first in range(0, args.clients, args.connect_batch):
        batch = [
            open_channel(args) for _ in range(first, min(args.clients, first + args.connect_batch))
        ]
        channels += batch
        if not not_ready:
            not_ready += settle(batch, args.call_timeout_s)
    return Connected(channels, time.perf_counter() - start, not_ready)


@dataclass
class Warmup:
    """Each client's discarded warm-up orders, kept apart so their errors are reported."""

    samples: list[Samples]
    started: list[float]
    finished: list[float]

    def summary(
        self, args: argparse.Namespace, connected: Connected, t0: float
    ) -> dict[str, object]:
        errors = counted_errors(self.samples)
        return {
            "orders_per_client": args.warmup,
            "orders_ok": sum(len(s.rtt) for s in self.samples),
            "errors": dict(errors),
            "connect_batch": args.connect_batch,
            "connections_not_ready": connected.not_ready,
            # Seconds after the first connection was opened: the last connection READY, the
            # first warm-up order sent, and the last client warmed up.
            "connected_at_s": round(connected.seconds, 4),
            "first_order_at_s": round(min(self.started) - t0, 4) if self.started else None,
            "warmed_at_s": round(max(self.finished) - t0, 4) if self.finished else None,
        }


def run(args: argparse.Namespace) -> dict[str, object]:
    if args.client_order == "sequential":
        return run_sequential(args)
    counts = share(args.orders, args.clients)
    send = SENDERS[args.mode]
    samples = [Samples() for _ in counts]
    t0 = time.perf_counter()
    connected = connect_all(args)
    warm = Warmup([Samples() for _ in counts], [], [])
    warm_lock = threading.Lock()
    # Every client warms up on its open connection; the clock starts when the last is ready:
    # read by the barrier's action, before any client is released. Read by this thread after
    # its own wait, it came late: with 1 000 clients of one order each, most had sent and
    # finished before this thread ran again (10 ms for 1 000 orders, 96 000 orders/s).
    started: list[float] = []
    barrier = threading.Barrier(
        args.clients + 1, action=lambda: started.append(time.perf_counter())
    )
    finished: list[float] = [0.0] * args.clients

    def client(index: int) -> None:
        channel = connected.channels[index]
        stub = order_pb2_grpc.OrderServiceStub(channel)
        try:
            if args.warmup:
                begun = time.perf_counter()
                send(stub, args.warmup, args.call_timeout_s, warm.samples[index])
                with warm_lock:
                    warm.started.append(begun)
                    warm.finished.append(time.perf_counter())
        except Exception:  # noqa: BLE001 - reported with the warm-up's errors
            warm.samples[index].errors[traceback.format_exc(limit=1)] += 1
        try:
            barrier.wait()
            send(stub, counts[index], args.call_timeout_s, samples[index])
        except Exception:  # noqa: BLE001 - a client's crash is counted, the others go on
            samples[index].errors[traceback.format_exc(limit=1)] += 1
        finally:
            finished[index] = time.perf_counter()
            channel.close()

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(len(counts))]
    for thread in threads:
        thread.start()
    barrier.wait()
    for thread in threads:
        thread.join()
    elapsed = max(finished) - started[0]
    result = report(args, samples, elapsed)
    result["warmup"] = warm.summary(args, connected, t0)
    return result


def run_sequential(args: argparse.Namespace) -> dict[str, object]:
    """One client after another in this thread, each on its own new channel: no client
    overlaps another, so each client's time is its own orders' round trips end to end."""
    send = SENDERS[args.mode]
    counts = share(args.orders, args.clients)
    samples = [Samples() for _ in counts]
    # Kept apart from the measured orders, as the parallel reading's are, so a warm-up's
    # errors are reported rather than dropped.
    warm = [Samples() for _ in counts]
    client_elapsed: list[float] = []
    cumulative: list[float] = []
    start = time.perf_counter()
    for index, count in enumerate(counts):
        began = time.perf_counter()
        channel = open_channel(args)
        try:
            stub = order_pb2_grpc.OrderServiceStub(channel)
            if args.warmup:
                send(stub, args.warmup, args.call_timeout_s, warm[index])
            send(stub, count, args.call_timeout_s, samples[index])
        except Exception:  # noqa: BLE001 - this client's crash is counted, the next one goes on
            samples[index].errors[traceback.format_exc(limit=1)] += 1
        finally:
            channel.close()
        ended = time.perf_counter()
        client_elapsed.append(ended - began)
        cumulative.append(ended - start)
        print(
            f"client {index + 1}: {count} transactions and elapsed time {ended - began:.4f} "
            f"in seconds, cumulative {ended - start:.4f}",
            file=sys.stderr,
        )
    result = report(args, samples, cumulative[-1])
    result["sequential"] = {
        "client_elapsed_s": client_elapsed,
        "cumulative_s": cumulative,
    }
    result["warmup"] = {
        "orders_per_client": args.warmup,
        "orders_ok": sum(len(s.rtt) for s in warm),
        "errors": dict(counted_errors(warm)),
    }
    result["metrics"] += distribution_s("client_elapsed", client_elapsed)
    return result


def distribution_s(name: str, values_s: list[float]) -> list[dict[str, object]]:
    """Median, mean and extremes of per-client seconds (a handful of values, not a CDF)."""
    values = sorted(values_s)
    return [
        {"metric": f"{name}_p50", "value": quantile(values, 0.5), "unit": "s"},
        {"metric": f"{name}_min", "value": values[0], "unit": "s"},
        {"metric": f"{name}_max", "value": values[-1], "unit": "s"},
        {"metric": f"{name}_mean", "value": sum(values) / len(values), "unit": "s"},
    ]


def counted_errors(samples: list[Samples]) -> collections.Counter[str]:
    """Every client's errors, by message, counted together."""
    errors: collections.Counter[str] = collections.Counter()
    for s in samples:
        errors.update(s.errors)
    return errors


def report(args: argparse.Namespace, samples: list[Samples], elapsed: float) -> dict[str, object]:
    rtt = [v for s in samples for v in s.rtt]
    request_oneway = [v for s in samples for v in s.request_oneway]
    reply_oneway = [v for s in samples for v in s.reply_oneway]
    errors = counted_errors(samples)
    ok = len(rtt)
    metrics: list[dict[str, object]] = [
        {"metric": "orders_ok", "value": ok, "unit": "orders"},
        {"metric": "orders_failed", "value": args.orders - ok, "unit": "orders"},
        {"metric": "elapsed", "value": elapsed, "unit": "s"},
        {"metric": "orders_per_s", "value": ok / elapsed if elapsed > 0 else 0.0, "unit": "1/s"},
        {"metric": "elapsed_per_1000_orders", "value": 1000 * elapsed / max(ok, 1), "unit": "s"},
        {
            "metric": "stamp_violations",
            "value": sum(s.stamp_violations for s in samples),
            "unit": "orders",
        },
        *distribution("rtt", rtt),
    ]
    if args.same_clock:
        metrics += distribution("oneway_request", request_oneway)
        metrics += distribution("oneway_reply", reply_oneway)
    return {
        "metrics": metrics,
        "target": args.target,
        "mode": args.mode,
        "client_order": args.client_order,
        "clients": args.clients,
        "orders": args.orders,
        "orders_per_client": share(args.orders, args.clients),
        "warmup_per_client": args.warmup,
        "security": args.security,
        "same_clock": bool(args.same_clock),
        "errors": dict(errors),
        "cdf_us": {
            "rtt": cdf(rtt),
            **(
                {"oneway_request": cdf(request_oneway), "oneway_reply": cdf(reply_oneway)}
                if args.same_clock
                else {}
            ),
        },
    }


def main() -> None:
    args = parse_args()
    result = run(args)
    Path(args.out).write_text(json.dumps(result, indent=1))
    warmup_errors = result["warmup"]["errors"]  # type: ignore[index]
    if warmup_errors:
        print(f"warm-up orders failed (discarded, reported): {warmup_errors}", file=sys.stderr)
    if result["errors"]:
        print(f"orders failed: {result['errors']}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
