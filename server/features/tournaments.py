"""Swiss tournaments: their director, which pairs each round, makes its rooms and reads
their results.

A tournament (:class:`Tournament`) is created by an account, joined and left by accounts
while it is ``open``, and started by its creator (or at ``starts_at``). Each round the
director pairs the players by standings (:func:`server.core.swiss.pair_round`: the rules of
pairing, points and tie-break are told there), makes one room per table with the players
seated in it and its game started (as a quick match does: :meth:`RoomRunner.seat_matched`)
and tells each player their table (:func:`tell`). A player who does not come has their seat
played out by the room's turn timer. When every table's game is over (read from the store,
so any node serving the room will do) the round's places and scores are recorded and the next
round paired; after the last, the tournament is ``finished`` and its standings final.

The whole state of a tournament is one document in the store
(:meth:`server.store.base.Store.put_tournament`), written with the version it expects: the
director that lost its lease and wakes late writes nothing. One director runs at a time: on
a lone server, the server's; in a cluster, the node holding its lease in Redis
(:data:`server.features.matchmaking.SINGLE_HOLDER_LEASE`)
(renewed every tick, lost when the node dies; another node takes it within the lease's time
and carries on from the stored document). Rooms made but not yet stored with their round
when a director dies are left to play out; the next director pairs that round again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

from server.core import swiss
from server.features.matchmaking import SINGLE_HOLDER_LEASE
from server.runtime.loop import stop_tasks
from server.store.records import TournamentRow
from shared import messages as m
from shared.errors import CastellError
from shared.scoring import places

if TYPE_CHECKING:
    from server.features.inbox import Inbox
    from server.runtime.directory import Directory
    from server.store.base import Store

log = logging.getLogger("castell.tournaments")

#: The statuses a tournament goes through.
OPEN, RUNNING, FINISHED, CANCELLED = "open", "running", "finished", "cancelled"

#: How many tournaments the ``tournaments`` reply shows (the newest).
LISTED = 50



@attrs.define
class Entrant:
    """A player of a tournament: their name, seed (the order they joined in) and whether
    they left (they are paired no more)."""

    name: str
    seed: int
    withdrawn: bool = False


@attrs.define
class Tournament:
    """A tournament's whole state (stored as a JSON document)."""

    id: str
    name: str
    creator: str
    rounds: int
    seats: int
    #: Each table's turn timer (a tournament always has one: docs/protocol.md
    #: ``tournament_create``).
    turn_seconds: int
    rated: bool
    starts_at: float | None
    created_at: float
    status: str = OPEN
    players: dict[str, Entrant] = attrs.Factory(dict)
    #: The rounds paired so far, each a list of tables {room, players, places, scores} and
    #: the bye.
    played: list[dict[str, Any]] = attrs.Factory(list)
    version: int = 0
    #: The creator's name (as shown).
    creator_name: str | None = None

    def swiss_rounds(self) -> list[swiss.Round]:
        """The rounds as :mod:`server.core.swiss` reads them."""
        out = []
        for r in self.played:
            tables = tuple(swiss.Table(tuple(t["players"]),
                                       None if t["places"] is None else tuple(t["places"]),
                                       None if t["scores"] is None else tuple(t["scores"]))
                           for t in r["tables"])
            out.append(swiss.Round(tables, r["bye"]))
        return out

    def seeds(self) -> dict[str, int]:
        return {a: p.seed for a, p in self.players.items()}

    def standings(self) -> list[swiss.Standing]:
        return swiss.standings(self.seeds(), self.swiss_rounds())

    def reply(self, re: int) -> m.TournamentReply:
        """The tournament as the ``tournament`` reply shows it: standings, and the
        current round's tables by the players' names."""
        names = {a: p.name for a, p in self.players.items()}
        standings = [m.StandingEntry(s.rank, names[s.player], s.points, s.buchholz, s.score,
                                     s.games, self.players[s.player].withdrawn)
                     for s in self.standings()]
        current = self.played[-1] if self.played else {"tables": [], "bye": None}
        tables = [m.TableEntry(t["room"], [names[a] for a in t["players"]], t["places"])
                  for t in current["tables"]]
        bye = current["bye"]
        return m.TournamentReply(
            re=re, tournament=self.id, name=self.name, creator=self.creator_name,
            status=self.status, rounds=self.rounds, seats=self.seats,
            turn_seconds=self.turn_seconds, rated=self.rated, round=len(self.played),
            standings=standings, tables=tables, bye=None if bye is None else names[bye])

    def entry(self) -> m.TournamentEntry:
        """Its line of the ``tournaments`` reply."""
        return m.TournamentEntry(self.id, self.name, self.status, self.rounds, self.seats,
                                 len(self.played), len(self.players))

    def row(self) -> TournamentRow:
        doc = attrs.asdict(self)
        return TournamentRow(self.id, self.name, self.status, self.created_at, self.version,
                             json.dumps(doc))

    @classmethod
    def from_row(cls, row: TournamentRow) -> Tournament:
        doc = json.loads(row.doc)
        doc["players"] = {a: Entrant(**p) for a, p in doc["players"].items()}
        doc["version"] = row.version
        # a tournament stored before its timer was required gets the default one
        doc["turn_seconds"] = doc.get("turn_seconds") or m.TOURNAMENT_TURN_SECONDS
        return cls(**doc)


def table_result(result: dict[str, Any], size: int) -> tuple[list[int], list[int]]:
    """Each seat's place and score from a stored game result (docs/rules.md §9, §10: the
    winners first, then by total, those who resigned last); a game called off or closed
    unplayed places everyone equal with no score."""
    scores = result.get("scores")
    if not scores:
        return [1] * size, [0] * size
    totals = [(int(s["seat"]), int(s["total"])) for s in scores]
    place = places(totals, set(result.get("winners", ())), result.get("resigned", ()))
    by_seat = dict(totals)
    return [place[i] for i in range(size)], [by_seat[i] for i in range(size)]


class Tournaments:
    """The tournaments of a server (or cluster), and their director."""

    def __init__(self, store: Store, directory: Directory,
                 tell: Callable[[str, Any], Awaitable[None]], *,
                 organisers: frozenset[str] | None = None, interval: float = 1.0,
                 clock: Callable[[], float] = time.time,
                 redis: Callable[[], Any] | None = None,
                 lease_key: str = "", node_id: str = "", lease_ms: int = 5000) -> None:
        """``tell(account, push)``: the push to a player (:func:`told_and_kept`: live, and kept
        in their inbox);
        ``organisers``: the names of the accounts that may create tournaments, casefolded
        (None: any account);
        ``redis``: a function giving a cluster's Redis client (None until the node joined
        its cluster), for the director's lease."""
        self.store = store
        self.directory = directory
        self.tell = tell
        self.organisers = organisers
        self.interval = interval
        self.clock = clock
        self.redis = redis
        self.lease_key = lease_key
        self.node_id = node_id
        self.lease_ms = lease_ms
        self._lease: Any = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        """Direct every ``interval`` seconds from now on."""
        self._task = asyncio.get_running_loop().create_task(self._directing())

    async def close(self) -> None:
        if self._task is not None:
            await stop_tasks([self._task])

    async def _directing(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("a tick of the tournament director failed; the next one retries")

    async def directs(self) -> bool:
        """Whether this node is the director now (always, on a lone server)."""
        if self.redis is None:
            return True
        client = self.redis()
        if client is None:  # not joined yet (or leaving): someone else directs
            return False
        if self._lease is None:
            self._lease = client.register_script(SINGLE_HOLDER_LEASE)
        return bool(await self._lease(keys=[self.lease_key],
                                      args=[self.node_id, self.lease_ms]))

    # -- requests -----------------------------------------------------------------------------

    async def create(self, account: str | None, name: str, rounds: int, seats: int,
                     turn_seconds: int | None, rated: bool,
                     starts_at: float | None = None, *,
                     creator_name: str | None = None) -> Tournament:
        if account is None:
            raise CastellError("a tournament needs an account: say hello with a key",
                               code="not_signed_in")
        if self.organisers is not None \
                and (creator_name or "").casefold() not in self.organisers:
            raise CastellError("only the host's organisers create tournaments here",
                               code="not_organiser")
        if not 1 <= rounds <= 20 or not 2 <= seats <= 4 or not name.strip():
            raise CastellError("a tournament has a name, 1 to 20 rounds and 2 to 4 seats",
                               code="bad_tournament")
        if turn_seconds is None:  # an absent player's game would never end
            raise CastellError("a tournament's tables need a turn timer",
                               code="bad_tournament")
        t = Tournament("t" + secrets.token_hex(4), name.strip()[:40], account, rounds, seats,
                       turn_seconds, rated, starts_at, self.clock(), version=1,
                       creator_name=creator_name)
        if not await self.store.put_tournament(t.row(), expect_version=None):
            raise CastellError("that tournament id is taken; try again", code="bad_tournament")
        return t

    async def get(self, tid: str) -> Tournament:
        row = await self.store.load_tournament(tid)
        if row is None:
            raise CastellError("no such tournament", code="no_tournament")
        return Tournament.from_row(row)

    async def listed(self) -> list[Tournament]:
        """The newest :data:`LISTED` tournaments, open, running or finished, newest first."""
        rows = await self.store.list_tournaments((OPEN, RUNNING, FINISHED), LISTED,
                                                 newest_first=True)
        return [Tournament.from_row(r) for r in rows]

    async def _save(self, t: Tournament) -> None:
        expect = t.version
        t.version += 1
        if not await self.store.put_tournament(t.row(), expect_version=expect):
            t.version = expect
            raise CastellError("the tournament changed meanwhile; try again",
                               code="tournament_busy")

    async def join(self, account: str | None, name: str, tid: str) -> Tournament:
        if account is None:
            raise CastellError("a tournament needs an account", code="not_signed_in")
        async with self._lock:
            t = await self.get(tid)
            if t.status != OPEN:
                raise CastellError("that tournament has started", code="tournament_started")
            if account not in t.players:
                t.players[account] = Entrant(name, len(t.players) + 1)
            else:
                t.players[account].withdrawn = False
            await self._save(t)
            return t

    async def leave(self, account: str | None, tid: str) -> Tournament:
        """Leave: before the start, out of the list; after it, paired no more."""
        if account is None:
            raise CastellError("a tournament needs an account", code="not_signed_in")
        async with self._lock:
            t = await self.get(tid)
            if account not in t.players:
                raise CastellError("you are not in that tournament", code="not_entered")
            if t.status == OPEN:
                del t.players[account]
            else:
                t.players[account].withdrawn = True
            await self._save(t)
            return t

    async def begin(self, account: str | None, tid: str) -> Tournament:
        """The creator starts it now: its first round is paired."""
        if account is None:
            raise CastellError("a tournament needs an account", code="not_signed_in")
        async with self._lock:
            t = await self.get(tid)
            if t.creator != account:
                raise CastellError("only its creator starts a tournament", code="not_organiser")
            if t.status != OPEN:
                raise CastellError("that tournament has started", code="tournament_started")
            if len(t.players) < 2:
                raise CastellError("a tournament needs two players", code="bad_tournament")
            t.status = RUNNING
            await self._pair(t)
            return t

    async def cancel(self, tid: str) -> Tournament:
        """The host calls it off (admin ``tournament cancel``): no more rounds."""
        async with self._lock:
            t = await self.get(tid)
            if t.status in (FINISHED, CANCELLED):
                raise CastellError("that tournament has ended", code="tournament_started")
            t.status = CANCELLED
            await self._save(t)
        for account in t.players:
            await self._tell(account, m.TournamentEndedPush(t.id, t.name, CANCELLED))
        return t

    # -- the director -------------------------------------------------------------------------

    async def tick(self) -> int:
        """Move every tournament on that can move (when this node directs); how many
        moved."""
        if not await self.directs():
            return 0
        moved = 0
        async with self._lock:
            # every one, however many: a limit would leave the newest unmoved
            for row in await self.store.list_tournaments((OPEN, RUNNING), None):
                t = Tournament.from_row(row)
                if t.status == OPEN:
                    if t.starts_at is not None and t.starts_at <= self.clock():
                        if len(t.players) < 2:
                            t.status = CANCELLED
                            await self._save(t)
                        else:
                            t.status = RUNNING
                            await self._pair(t)
                        moved += 1
                elif await self._collect(t):
                    moved += 1
        return moved

    async def _collect(self, t: Tournament) -> bool:
        """Read the current round's results; when all are in, pair the next round or finish.
        Whether anything changed."""
        if not t.played:
            await self._pair(t)
            return True
        current = t.played[-1]
        changed = False
        for table in current["tables"]:
            if table["places"] is not None:
                continue
            record = await self.store.load(table["room"])
            if record is None or record.result is None:
                continue
            table["places"], table["scores"] = table_result(record.result,
                                                            len(table["players"]))
            changed = True
        if all(table["places"] is not None for table in current["tables"]):
            if len(t.played) >= t.rounds:
                t.status = FINISHED
                await self._save(t)
                ranks = {s.player: s.rank for s in t.standings()}
                for account in t.players:
                    await self._tell(account, m.TournamentEndedPush(
                        t.id, t.name, FINISHED, ranks.get(account)))
            else:
                await self._pair(t)
            return True
        if changed:
            await self._save(t)
        return changed

    async def _pair(self, t: Tournament) -> None:
        """Pair the next round, make its rooms, store it, tell its players."""
        withdrawn = [a for a, p in t.players.items() if p.withdrawn]
        r = swiss.pair_round(t.seeds(), t.swiss_rounds(), t.seats, withdrawn)
        number = len(t.played) + 1
        tables = []
        told = []
        for i, table in enumerate(r.tables):
            runner = await self.directory.create(
                f"{t.name} r{number} t{i + 1}"[:40], len(table.players), "normal",
                t.turn_seconds, False, rated=t.rated)
            tokens = [secrets.token_urlsafe(24) for _ in table.players]
            await runner.seat_matched([(t.players[a].name, tok, a) for a, tok
                                       in zip(table.players, tokens, strict=True)])
            tables.append({"room": runner.id, "players": list(table.players),
                           "places": None, "scores": None})
            told += [(a, m.TournamentTablePush(t.id, t.name, number, runner.id, s, tok))
                     for s, (a, tok) in enumerate(zip(table.players, tokens, strict=True))]
        t.played.append({"tables": tables, "bye": r.bye})
        await self._save(t)
        log.info("tournament %s: round %d paired, %d tables", t.id, number, len(tables))
        for account, push in told:
            await self._tell(account, push)
        if r.bye is not None:
            await self._tell(r.bye, m.TournamentTablePush(t.id, t.name, number, bye=True))

    async def _tell(self, account: str, push: Any) -> None:
        try:
            await self.tell(account, push)
        except Exception as exc:
            log.warning("tournament push to %s failed: %s", account, exc)


def told_and_kept(deliver: Callable[[str, Any], Awaitable[None]], inbox: Inbox
                  ) -> Callable[[str, Any], Awaitable[None]]:
    """The director's ``tell``: a push ``deliver``ed live to every connection of the
    account, and what it says kept in its inbox (server.features.inbox, quietly: the live
    push said it), so that a player who was away learns of their table and of the end."""

    async def tell(account: str, push: Any) -> None:
        await deliver(account, push)
        if isinstance(push, m.TournamentTablePush):
            text = (f"{push.name}: round {push.round}, you sit it out (a bye)" if push.bye
                    else f"{push.name}: round {push.round}, your table is room {push.room}")
        elif isinstance(push, m.TournamentEndedPush):
            place = f", you placed {push.rank}" if push.rank is not None else ""
            text = f"{push.name} is {push.status}{place}"
        else:
            return
        await inbox.notify(account, "tournament", text, room=getattr(push, "room", None),
                           ref=push.tournament, push=False)

    return tell

