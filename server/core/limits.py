"""Flow limits: a token bucket for messages (one, or one per key such as an address), a
sliding window for failed attempts, and the network an address counts against."""

from __future__ import annotations

import ipaddress
import math

import attrs


@attrs.define
class TokenBucket:
    """Allows ``rate`` events per second with bursts of up to ``burst``.

    The clock is passed in (``now``) so the bucket is plain arithmetic and easy to test.
    """

    rate: float
    burst: float
    tokens: float = attrs.field(default=None)
    stamp: float = 0.0

    def __attrs_post_init__(self) -> None:
        if self.tokens is None:
            self.tokens = self.burst

    def take(self, now: float, cost: float = 1.0) -> bool:
        """Spend ``cost`` tokens if there are enough; False means the caller is over the limit."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False


@attrs.define
class Buckets:
    """One :class:`TokenBucket` per key (an address, a room), made full on first use."""

    rate: float
    burst: float
    buckets: dict[str, TokenBucket] = attrs.Factory(dict)

    def take(self, key: str, now: float) -> bool:
        """Spend one token of ``key``'s bucket; False means ``key`` is over the limit."""
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = TokenBucket(self.rate, self.burst, stamp=now)
        return bucket.take(now)

    def sweep(self, now: float) -> None:
        """Forget the buckets that are full again: a new one would be the same."""
        refill = self.burst / self.rate if self.rate > 0 else math.inf
        for key, bucket in list(self.buckets.items()):
            if now - bucket.stamp >= refill:
                del self.buckets[key]


def recent(stamps: list[float], now: float, window: float) -> list[float]:
    """The ``stamps`` (times of past events) that fall within ``window`` seconds of ``now``."""
    return [t for t in stamps if now - t < window]


def network_of(address: str) -> str:
    """The network ``address`` counts against for the per-network limits: its /24 for IPv4
    (an IPv4-mapped IPv6 address too), its /64 for IPv6; what is not an IP address is a
    network of its own."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = 24 if ip.version == 4 else 64
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def rooms_left(addresses: set[str], held: dict[str, int], cap: int) -> dict[str, int]:
    """How many more rooms each of ``addresses`` may have (``--rooms-per-address``), given
    the rooms that count against it now (``held``): what the quick-match matcher may still
    make for its players."""
    return {a: max(0, cap - held.get(a, 0)) for a in addresses}
