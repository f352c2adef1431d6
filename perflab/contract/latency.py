"""Latency profiles: the one-way delay a Toxiproxy adds between client and server.

Matrix data, so the contract holds them: study matrices name a profile, the host side
(`perflab.host.proxy`) applies it, and analyses describe it, all from this one table.
"""

from __future__ import annotations

# One-way delay in milliseconds each profile adds in each direction; None: no proxy at all.
LATENCY_PROFILES: dict[str, float | None] = {
    "none": None,
    "proxy_0ms": 0.0,
    "lan": 0.5,
    "region": 10.0,
    "cross_region": 70.0,
}
