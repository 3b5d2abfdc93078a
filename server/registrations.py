"""The limits on new accounts (docs/security.md, "Accounts"): how many accounts one address,
and one network (/24 for IPv4, /64 for IPv6), may register per hour, and when an unused
account gives up its name.

The store counts registrations itself, over every node of a cluster, in the transaction that
registers (:class:`~server.store.base.Registration`, given to
:meth:`~server.store.base.Store.sign_in`). :class:`Registrations` also counts this node's
own: an address or network already over its limit here is refused at once, with no write;
and it is the only count of a server without a store.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from server.limits import network_of
from server.store.base import Registration

#: The window registrations are counted in, in seconds: an hour.
WINDOW = 3600.0
#: A day, in seconds (``account_release_days``).
DAY = 86400.0


class Registrations:
    """This node's registrations of the last :data:`WINDOW`, by address and by network."""

    def __init__(self, per_address: int, per_network: int, release_days: float | None, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.per_address = per_address
        self.per_network = per_network
        self.release_days = release_days
        self.clock = clock
        self._by_address: dict[str, list[float]] = {}
        self._by_network: dict[str, list[float]] = {}

    def for_store(self, address: str, now: float) -> Registration:
        """What a registration from ``address`` now is held to in the store."""
        release = None if self.release_days is None else now - self.release_days * DAY
        return Registration(address, network_of(address), self.per_address,
                            self.per_network, now - WINDOW, release)

    def full(self, address: str, now: float) -> bool:
        """Whether ``address``, or its network, has registered all it may this hour here."""
        return (len(self._recent(self._by_address, address, now)) >= self.per_address
                or len(self._recent(self._by_network, network_of(address), now))
                >= self.per_network)

    def add(self, address: str, now: float) -> None:
        """Count a registration from ``address``."""
        self._by_address.setdefault(address, []).append(now)
        self._by_network.setdefault(network_of(address), []).append(now)
        if len(self._by_address) > 4096:  # many addresses: forget those of an hour ago
            for counts in (self._by_address, self._by_network):
                for key in list(counts):
                    self._recent(counts, key, now)

    @staticmethod
    def _recent(counts: dict[str, list[float]], key: str, now: float) -> list[float]:
        kept = [at for at in counts.get(key, ()) if at > now - WINDOW]
        if kept:
            counts[key] = kept
        else:
            counts.pop(key, None)
        return kept
