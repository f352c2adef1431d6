"""Toxiproxy in front of a server: added network latency for one cell, on loopback.

    from perflab.contract.latency import LATENCY_PROFILES
    from perflab.host.proxy import LatencyProxy
    lan = LATENCY_PROFILES["lan"]
    with LatencyProxy.start(binary, upstream="127.0.0.1:50051", one_way_ms=lan) as p:
        ...  # clients call p.listen ("127.0.0.1:<port>") instead of the server

`LatencyProxy.start` runs its own toxiproxy-server (API and proxy on free 127.0.0.1 ports),
creates one proxy to `upstream` and, when one_way_ms is not None, a latency toxic on each
direction, so a round trip gains twice the one-way delay. `stop()` (or leaving the `with`)
ends the server it started. The runner starts one per latency_proxies entry of a cell.

Toxiproxy's latency toxic takes whole milliseconds, so a sub-millisecond delay (the `lan`
profile's 0.5 ms) cannot be applied exactly: it is rounded up to 1 ms and `applied_ms`
says what was applied. Profile `proxy_0ms` goes through the proxy with no toxic: it
measures the proxy's own cost.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from perflab.host.net import free_port

READY_TIMEOUT_S = 15.0
# Ports tried for the listening side before the cell fails (see _listen_on_a_free_port).
BIND_ATTEMPTS = 5


class ProxyError(RuntimeError):
    """The proxy could not be started or configured; the message says which step."""


def applied_delay_ms(one_way_ms: float) -> int:
    """The delay Toxiproxy can apply: whole milliseconds, never less than asked (0 stays 0)."""
    if one_way_ms < 0:
        raise ProxyError(f"a delay cannot be negative: {one_way_ms} ms")
    return math.ceil(one_way_ms)


@dataclass
class LatencyProxy:
    proc: subprocess.Popen[bytes]
    api: str  # http://127.0.0.1:<port>
    listen: str  # host:port clients call
    upstream: str
    one_way_ms: float | None
    applied_ms: int | None
    toxics: list[dict[str, object]] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        binary: str | Path,
        upstream: str,
        one_way_ms: float | None,
        host: str = "127.0.0.1",
        log_path: str | Path | None = None,
    ) -> LatencyProxy:
        binary = Path(binary)
        if not binary.is_file():
            raise ProxyError(f"{binary}: no toxiproxy-server (roles/toxiproxy installs it)")
        api_port, listen_port = free_port(host), free_port(host)
        log = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
        proc = subprocess.Popen(
            [str(binary), "-host", host, "-port", str(api_port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            # Its default level logs four lines per connection; 1 000 clients fill megabytes.
            env={**os.environ, "LOG_LEVEL": "info"},
        )
        proxy = cls(
            proc, f"http://{host}:{api_port}", f"{host}:{listen_port}", upstream, one_way_ms, None
        )
        try:
            proxy._wait_ready()
            proxy._listen_on_a_free_port(host)
            if one_way_ms is not None and one_way_ms > 0:
                proxy.applied_ms = applied_delay_ms(one_way_ms)
                for stream in ("upstream", "downstream"):
                    toxic = {
                        "name": f"latency_{stream}",
                        "type": "latency",
                        "stream": stream,
                        "toxicity": 1.0,
                        "attributes": {"latency": proxy.applied_ms, "jitter": 0},
                    }
                    proxy.toxics.append(proxy._request("POST", "/proxies/perflab/toxics", toxic))
            elif one_way_ms is not None:
                proxy.applied_ms = 0
        except BaseException:
            proxy.stop()
            raise
        return proxy

    def _listen_on_a_free_port(self, host: str) -> None:
        """Creates the proxy. The port free_port found may be taken before Toxiproxy binds it
        (with a thousand clients connecting, an outgoing socket can get it): then another."""
        for attempt in range(1, BIND_ATTEMPTS + 1):
            body = {
                "name": "perflab",
                "listen": self.listen,
                "upstream": self.upstream,
                "enabled": True,
            }
            try:
                self._request("POST", "/proxies", body)
                return
            except ProxyError as exc:
                if "address already in use" not in str(exc) or attempt == BIND_ATTEMPTS:
                    raise
                self.listen = f"{host}:{free_port(host)}"

    def _request(self, method: str, path: str, body: dict[str, object] | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.api + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            raise ProxyError(f"toxiproxy {method} {path}: {exc.code} {exc.read()!r}") from exc

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ProxyError(f"toxiproxy-server exited with code {self.proc.returncode}")
            try:
                self._request("GET", "/version")
                return
            except (OSError, ProxyError):
                time.sleep(0.05)
        raise ProxyError(
            f"toxiproxy-server not answering on {self.api} within {READY_TIMEOUT_S:.0f} s"
        )

    def describe(self) -> dict[str, object]:
        """What was applied, for the cell's raw output."""
        return {
            "pid": self.proc.pid,
            "listen": self.listen,
            "upstream": self.upstream,
            "one_way_ms": self.one_way_ms,
            "applied_ms": self.applied_ms,
            "toxics": self.toxics,
        }

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> LatencyProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
