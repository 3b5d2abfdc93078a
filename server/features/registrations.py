"""The limits on new accounts (docs/security.md, "Accounts"): how many accounts one address,
and one network (/24 for IPv4, /64 for IPv6), may register per hour, and when an unused
account gives up its name.

The store counts registrations itself, over every node of a cluster, in the transaction that
registers (:class:`~server.store.base.Registration`, given to
:meth:`~server.store.base.Store.sign_in`); :class:`Registrations` says what each registration
is held to.
"""

from __future__ import annotations

from server.core.limits import network_of
from server.store.base import Registration

#: The window registrations are counted in, in seconds: an hour.
WINDOW = 3600.0
#: A day, in seconds (``account_release_days``).
DAY = 86400.0


class Registrations:
    """The limits on new accounts of one server."""

    def __init__(self, per_address: int, per_network: int,
                 release_days: float | None) -> None:
        self.per_address = per_address
        self.per_network = per_network
        self.release_days = release_days

    def for_store(self, address: str, now: float) -> Registration:
        """What a registration from ``address`` now is held to in the store."""
        release = None if self.release_days is None else now - self.release_days * DAY
        return Registration(address, network_of(address), self.per_address,
                            self.per_network, now - WINDOW, release)
