"""Where this server's rooms are made, found and listed: its room directory.

A lone server's directory is its lobby alone (:class:`LocalDirectory`); a node of a cluster
shares one directory with the other nodes, kept in Redis
(:class:`server.cluster.node.ClusterDirectory`,
with :class:`server.cluster.node.ClusterNode` behind it). Whoever makes, finds or lists rooms —
the requests, the rematches, the matchmaker, the server's life cycle — asks the
:class:`Directory`, never which kind it is: the shape of :mod:`server.features.matchmaking`'s
``Queue`` / ``LocalQueue`` / ``RedisQueue``. (A room's change reaches the cluster's list
through the lobby's listeners, :meth:`server.runtime.lobby.Lobby.subscribe`.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from shared import messages as m

if TYPE_CHECKING:
    from server.features.accounts import Accounts
    from server.features.matchmaking import LocalQueue, RedisQueue
    from server.runtime.lobby import Lobby
    from server.runtime.runner import RoomRunner


class Directory(Protocol):
    """The rooms this server serves and those it may reach: see the module docstring."""

    @property
    def shared(self) -> bool:
        """Whether other servers share the directory: a room this one lets go of is served
        by another (drain hands rooms over; bans are read again, other nodes write them)."""

    @property
    def node_id(self) -> str:
        """This server's id among those sharing the directory ("" for a lone server)."""

    @property
    def url(self) -> str:
        """Where players reach this server ("" for a lone server: where they already are)."""

    async def start(self, url: str, accounts: Accounts) -> None:
        """Begin serving at ``url`` (the pushes for ``accounts`` reach every server)."""

    async def close(self) -> None:
        """Stop: the rooms held here are given up (another server may take them)."""

    async def create(self, name: str, seats: int, variant: str, turn_seconds: int | None,
                     private: bool, *, rated: bool = False,
                     offers: dict[int, str] | None = None) -> RoomRunner:
        """A new room served here, stored before it is listed."""

    async def find(self, key: str, *, by_id_private: bool) -> RoomRunner:
        """The room ``key`` (an id or a private code) names: held here, loaded from the store
        or taken over; :class:`~shared.errors.RoomMoved` when another server serves it,
        ``room_not_found`` when there is none (a private room by its id only with
        ``by_id_private``)."""

    async def list_page(self, after: str | None, limit: int,
                        ) -> tuple[tuple[m.RoomSummary, ...], tuple[str, ...] | None, bool]:
        """A page of the public rooms after the room ``after`` (at most ``limit``), the
        addresses of every server sharing the directory (None: only this one), and whether
        more rooms follow."""

    def leases(self) -> int | None:
        """How many rooms this server holds the lease of (None: it takes none)."""

    def queue(self) -> LocalQueue | RedisQueue:
        """The quick-match queue of the servers sharing the directory."""


class LocalDirectory:
    """A lone server's directory: its lobby, and the store behind it."""

    shared = False
    node_id = ""
    url = ""

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby

    async def start(self, url: str, accounts: Accounts) -> None:
        pass

    async def close(self) -> None:
        pass

    async def create(self, name: str, seats: int, variant: str, turn_seconds: int | None,
                     private: bool, *, rated: bool = False,
                     offers: dict[int, str] | None = None) -> RoomRunner:
        return await self.lobby.create(name, seats, variant, turn_seconds, private,
                                       rated=rated, offers=offers)

    async def find(self, key: str, *, by_id_private: bool) -> RoomRunner:
        return await self.lobby.find_or_load(key, by_id_private=by_id_private)

    async def list_page(self, after: str | None, limit: int,
                        ) -> tuple[tuple[m.RoomSummary, ...], tuple[str, ...] | None, bool]:
        rooms, more = self.lobby.list_page(after, limit)
        return tuple(r.summary() for r in rooms), None, more

    def leases(self) -> int | None:
        return None

    def queue(self) -> LocalQueue | RedisQueue:
        from server.features.matchmaking import LocalQueue

        return LocalQueue()

