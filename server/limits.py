"""Flow limits: a token bucket for messages, a sliding window for failed resumes."""

from __future__ import annotations

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


def recent(stamps: list[float], now: float, window: float) -> list[float]:
    """The ``stamps`` (times of past events) that fall within ``window`` seconds of ``now``."""
    return [t for t in stamps if now - t < window]
