"""Quick match: the queue of players waiting for a game, and the matcher that groups them.

A player asks ``quick_match`` with the seat counts they accept and whether the game is rated;
the server keeps a :class:`Wish` for them in the queue. Each round (every ``match_interval``
seconds) the matcher groups waiting wishes (:func:`find_matches`, pure: it takes ``now``):

* a group is of one seat count every member accepts, all rated or all unrated, and (rated)
  of players from different networks (:func:`server.features.ratings.may_meet`) and of ratings
  close enough: two players may be as far apart as the smaller of their
  *windows*, ``match_window`` points at first, ``match_widen`` more for every second waited,
  at most ``match_window_max`` (:func:`window`);
* the oldest wish is served first, with the largest count it accepts that can be filled,
  its closest ratings first;
* an unrated wish with ``bots_after`` that has waited that long takes whoever is compatible
  and bots for the rest (its smallest count).

A group gets a room of its own, created, seated and started by the matcher's node; each
member hears ``matched`` (room, seat, seat token, and ``url`` when it asked on another node
of the cluster) and takes its seat with ``join_room`` and the token. The room counts against
its players' room caps as one they created would (``--rooms-per-connection``,
``--rooms-per-address``): a wish is refused when its asker is at either, and waits while its
address has no room left; and its seats are held for ``--match-reserve`` seconds only
(:mod:`server.features.reservations`): a room whose players do not all come is called off. Members
still waiting hear ``match_waiting`` (how many of the closest game are found) when that
changes.
``cancel_match`` and a dropped connection leave the queue.

On a lone server the queue is in memory (:class:`LocalQueue`). In a cluster it is one for
all nodes, in Redis (:class:`RedisQueue`): a hash of wishes; one node at a time matches,
under a lease (:data:`SINGLE_HOLDER_LEASE`), and takes a group out of the hash atomically
(:data:`_TAKE`: all of its wishes, or none when one was cancelled meanwhile). A ``matched``
push for a player of another node goes through Redis too, to the node that holds the
player's connection: it is put in that node's *inbox* (a hash ``match:inbox:<node>`` of
ticket → push, kept :data:`INBOX_KEPT_MS`) before a nudge is published on the channel. The
node takes its inbox on the nudge, each time its subscription is confirmed again after a cut
(the nudge may have been published meanwhile, and a channel keeps nothing), and at each of
its matcher's rounds; it deletes an entry once delivered (a push delivered twice finds its
ticket gone the second time and is dropped), so no match waits on a message that was lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from server.cluster.relay import listen
from server.core.limits import rooms_left
from server.features.ratings import may_meet
from server.features.reservations import Reservations
from server.runtime.loop import stop_tasks
from shared import messages as m
from shared.codec import encode
from shared.errors import CastellError

if TYPE_CHECKING:
    from server.cluster.node import ClusterNode
    from server.config import ServerConfig
    from server.features.ratings import Ratings
    from server.runtime.connection import Connection
    from server.runtime.directory import Directory
    from server.runtime.lobby import Lobby
    from server.runtime.runner import RoomRunner

log = logging.getLogger("castell.match")


@attrs.frozen
class Wish:
    """One player waiting: ``ticket`` (unique), the node and connection it waits on, its
    name and account, its displayed rating, the seat counts it accepts, rated or not, since
    when (the matcher's clock), after how many seconds bots may fill (None: never), and the
    address it asked from."""

    ticket: str
    node: str
    conn: str
    name: str
    account: str | None
    rating: int
    seats: tuple[int, ...]
    rated: bool
    since: float
    bots_after: float | None = None
    #: The address it asked from: the room it gets counts against that address's rooms.
    address: str = ""
    #: The accounts its account blocks (server.features.social): never matched with it,
    #: nor it with them.
    shuns: tuple[str, ...] = ()


@attrs.frozen
class Match:
    """A group of wishes, and the seat count of its room (the free seats go to bots)."""

    wishes: tuple[Wish, ...]
    seats: int


@attrs.frozen
class Windows:
    """How close ratings must be (see the module docstring)."""

    start: float = 100.0
    widen: float = 10.0
    most: float = 1000.0
    #: Whether accounts of one network may meet in rated play (``--rated-one-network``).
    one_network: bool = False


def window(wish: Wish, now: float, w: Windows) -> float:
    """How far from ``wish``'s rating another may be, after waiting since ``wish.since``."""
    return min(w.most, w.start + w.widen * max(0.0, now - wish.since))


def compatible(a: Wish, b: Wish, now: float, w: Windows) -> bool:
    """Whether ``a`` and ``b`` may play one game (some seat count aside)."""
    if a.rated != b.rated or a.ticket == b.ticket:
        return False
    if a.account is not None and a.account == b.account:
        return False
    if (a.account is not None and a.account in b.shuns) \
            or (b.account is not None and b.account in a.shuns):
        return False  # one blocks the other (server.features.social)
    if not a.rated:
        return True
    if not w.one_network and not may_meet(a.address, b.address):
        return False  # the floor of rated play (server.features.ratings)
    return abs(a.rating - b.rating) <= min(window(a, now, w), window(b, now, w))


def _group(first: Wish, others: list[Wish], seats: int, now: float, w: Windows,
           ) -> list[Wish]:
    chosen = [first]
    for x in sorted(others, key=lambda x: (abs(x.rating - first.rating), x.since, x.ticket)):
        if len(chosen) == seats:
            break
        if seats in x.seats and all(compatible(x, y, now, w) for y in chosen):
            chosen.append(x)
    return chosen


def find_matches(wishes: list[Wish], now: float, w: Windows,
                 rooms_left: dict[str, int] | None = None) -> list[Match]:
    """The groups the queue makes at ``now`` (see the module docstring). ``rooms_left``:
    how many more rooms each address may have (``--rooms-per-address``; an address not in
    it, any number): a wish whose address has none left waits, and every group made takes
    one from each of its addresses."""
    left = dict(rooms_left) if rooms_left is not None else None

    def may(x: Wish) -> bool:
        return left is None or left.get(x.address, 1) > 0

    waiting = sorted(wishes, key=lambda x: (x.since, x.ticket))
    used: set[str] = set()
    out: list[Match] = []
    for first in waiting:
        if first.ticket in used or not may(first):
            continue
        others = [x for x in waiting if x.ticket not in used and may(x)
                  and compatible(first, x, now, w)]
        for seats in sorted(set(first.seats), reverse=True):
            chosen = _group(first, others, seats, now, w)
            if len(chosen) == seats:
                break
        else:
            if (first.rated or first.bots_after is None
                    or now - first.since < first.bots_after):
                continue
            seats = min(first.seats)
            chosen = _group(first, others, seats, now, w)
        out.append(Match(tuple(chosen), seats))
        used.update(x.ticket for x in chosen)
        if left is not None:
            for address in {x.address for x in chosen}:
                if address in left:
                    left[address] -= 1
    return out


def progress(wish: Wish, wishes: list[Wish], now: float, w: Windows) -> tuple[int, int]:
    """(found, of) for ``wish`` still waiting: how many players (itself included) of the
    game closest to being filled are waiting."""
    others = [x for x in wishes if compatible(wish, x, now, w)]
    best = (1, min(wish.seats))
    for seats in sorted(set(wish.seats)):
        found = len(_group(wish, others, seats, now, w))
        if seats - found < best[1] - best[0]:
            best = (found, seats)
    return best


def unique_names(names: list[str]) -> list[str]:
    """The players' names in a matched room, one each (names compare in any case, as in a
    room): a second ``Anna`` plays as ``Anna 2``; nobody takes the server's own name."""
    from server.core.room import RESERVED_NAMES

    taken = set(RESERVED_NAMES)
    out = []
    for name in names:
        wanted, n = name, 1
        while wanted.casefold() in taken:
            n += 1
            wanted = f"{name[:20]} {n}"
        taken.add(wanted.casefold())
        out.append(wanted)
    return out


# -- the queue --------------------------------------------------------------------------------


class Queue(Protocol):
    """Where the wishes wait (see the module docstring)."""

    async def add(self, wish: Wish) -> None: ...

    async def remove(self, ticket: str) -> None: ...

    async def wishes(self) -> list[Wish]: ...

    async def take(self, tickets: list[str]) -> bool: ...

    async def may_match(self) -> bool: ...


class LocalQueue:
    """A lone server's queue, in memory."""

    def __init__(self) -> None:
        self.waiting: dict[str, Wish] = {}

    async def add(self, wish: Wish) -> None:
        self.waiting[wish.ticket] = wish

    async def remove(self, ticket: str) -> None:
        self.waiting.pop(ticket, None)

    async def wishes(self) -> list[Wish]:
        return list(self.waiting.values())

    async def take(self, tickets: list[str]) -> bool:
        if not all(t in self.waiting for t in tickets):
            return False
        for t in tickets:
            del self.waiting[t]
        return True

    async def may_match(self) -> bool:
        return True


#: Takes every wish of a group out of the hash, or none when one is gone (KEYS[1]: the hash;
#: ARGV: the tickets). Returns 1 when taken.
_TAKE = """
for _, t in ipairs(ARGV) do
  if redis.call('HEXISTS', KEYS[1], t) == 0 then return 0 end
end
for _, t in ipairs(ARGV) do redis.call('HDEL', KEYS[1], t) end
return 1
"""

#: How long (ms) a node's inbox of ``matched`` pushes is kept after the last one put in it:
#: longer than a node cut from Redis keeps its players' wishes (its node key's lease).
INBOX_KEPT_MS = 120_000

#: The matcher's lease, and the tournaments' director's (KEYS[1]): taken when free, renewed
#: when this node's (ARGV[1]), for ARGV[2] milliseconds. Returns 1 while this node holds it.
SINGLE_HOLDER_LEASE = """
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""


class RedisQueue:
    """A cluster's queue, in Redis: one for all its nodes (see the module docstring)."""

    def __init__(self, node: ClusterNode) -> None:
        self.node = node
        prefix = node.keys.prefix
        self.key = f"{prefix}match:queue"
        self.lease = f"{prefix}match:lease"
        self.channel = f"{prefix}match:pushes"
        redis = node.redis
        assert redis is not None
        self.redis = redis
        self._take = redis.register_script(_TAKE)
        self._lease = redis.register_script(SINGLE_HOLDER_LEASE)

    async def add(self, wish: Wish) -> None:
        await self.redis.hset(self.key, wish.ticket, json.dumps(attrs.asdict(wish)))

    async def remove(self, ticket: str) -> None:
        await self.redis.hdel(self.key, ticket)

    async def wishes(self) -> list[Wish]:
        """The waiting wishes; those of a node that is gone (its players' connections went
        with it) are dropped from the queue."""
        out = []
        for raw in (await self.redis.hgetall(self.key)).values():
            try:
                data = json.loads(raw)
                data["seats"] = tuple(data["seats"])
                data["shuns"] = tuple(data.get("shuns", ()))
                out.append(Wish(**data))
            except Exception as exc:
                log.warning("a quick-match wish in Redis could not be read: %s", exc)
        nodes = sorted({w.node for w in out})
        if nodes:
            alive = await self.redis.mget([self.node.keys.node(n) for n in nodes])
            gone = {n for n, url in zip(nodes, alive, strict=True) if url is None}
            if gone:
                dead = [w.ticket for w in out if w.node in gone]
                await self.redis.hdel(self.key, *dead)
                out = [w for w in out if w.node not in gone]
        return out

    async def take(self, tickets: list[str]) -> bool:
        return bool(await self._take(keys=[self.key], args=tickets))

    async def may_match(self) -> bool:
        return bool(await self._lease(keys=[self.lease],
                                      args=[self.node.node_id, self.node.ttl]))

    def inbox(self, node: str) -> str:
        return f"{self.node.keys.prefix}match:inbox:{node}"

    async def publish(self, node: str, ticket: str, push: Any) -> None:
        """Put ``push`` in ``node``'s inbox for ``ticket``, then nudge that node."""
        inbox = self.inbox(node)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(inbox, ticket, json.dumps(m.to_wire(push)))
            pipe.pexpire(inbox, max(INBOX_KEPT_MS, 3 * self.node.ttl))
            pipe.publish(self.channel, json.dumps({"node": node, "ticket": ticket}))
            await pipe.execute()

    async def pending(self) -> dict[str, Any]:
        """This node's inbox: each ticket's push, as sent (decoded from JSON)."""
        raw = await self.redis.hgetall(self.inbox(self.node.node_id))
        out = {}
        for ticket, push in raw.items():
            try:
                out[str(ticket)] = json.loads(push)
            except Exception as exc:
                log.warning("a matched push in Redis could not be read: %s", exc)
                out[str(ticket)] = None
        return out

    async def delivered(self, tickets: list[str]) -> None:
        if tickets:
            await self.redis.hdel(self.inbox(self.node.node_id), *tickets)


# -- the matcher ------------------------------------------------------------------------------


class Matchmaker:
    """The quick-match queue of one server (or node), and its matcher. ``clock`` is the
    matcher's time (tests pass their own, and call :meth:`round` themselves)."""

    def __init__(self, config: ServerConfig, lobby: Lobby, ratings: Ratings,
                 directory: Directory, *, clock: Callable[[], float] = time.time) -> None:
        """``directory``: where the matched rooms are made, and whose queue this is (this
        server's own, or its cluster's: :meth:`server.runtime.directory.Directory.queue`)."""
        self.config = config
        self.lobby = lobby
        self.directory = directory
        self.ratings = ratings
        self.clock = clock
        self.windows = Windows(config.match_window, config.match_widen,
                               config.match_window_max, config.rated_one_network)
        self.queue: LocalQueue | RedisQueue = LocalQueue()
        #: This node's waiting connections, by ticket; and each connection's ticket.
        self.here: dict[str, Connection] = {}
        self.tickets: dict[Connection, str] = {}
        #: The last ``match_waiting`` each ticket here was sent.
        self.told: dict[str, tuple[int, int]] = {}
        #: The matched seats of the rooms this node made, held ``match_reserve`` seconds.
        self.reservations = Reservations(lobby, config.match_reserve)
        #: Groups matched and players seated by this node (for the bench, and the log).
        self.matched = 0
        self.players = 0
        self._loop: asyncio.Task[None] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        #: Taking this node's inbox: the task, and whether to take it once more after.
        self._collecting: asyncio.Task[None] | None = None
        self._collect_again = False

    @property
    def node_id(self) -> str:
        return self.directory.node_id

    async def start(self) -> None:
        """Take the directory's queue (once it is started) and match every
        ``match_interval`` seconds from now on; in a cluster, the ``matched`` pushes of
        other nodes are heard (subscribed before this returns)."""
        queue = self.directory.queue()
        if isinstance(queue, RedisQueue):
            pubsub = queue.redis.pubsub()
            await pubsub.subscribe(queue.channel)
            self._tasks.append(asyncio.get_running_loop().create_task(self._hearing(pubsub)))
        self.queue = queue
        self._loop = asyncio.get_running_loop().create_task(self._matching())

    async def close(self) -> None:
        """Stop matching: every task of the matcher cancelled and waited for, and this node's
        tickets taken out of the queue. When the caller itself is cancelled meanwhile, the
        tasks are still all cancelled and waited for, then the cancellation goes on up."""
        closer = asyncio.current_task()
        cancelling = closer.cancelling() if closer is not None else 0
        with contextlib.suppress(asyncio.CancelledError):  # (told by cancelling() below)
            await self.reservations.close()
        tasks = [task for task in (self._loop, *self._tasks, self._collecting)
                 if task is not None]
        with contextlib.suppress(asyncio.CancelledError):  # (told by cancelling() below)
            await stop_tasks(tasks)  # (each cancelled again if Redis swallowed it)
        if closer is not None and closer.cancelling() > cancelling:
            raise asyncio.CancelledError  # the closer was cancelled: it stops here
        for ticket in list(self.here):
            with contextlib.suppress(Exception):
                await self.queue.remove(ticket)

    # -- requests ----------------------------------------------------------------------------

    async def enqueue(self, conn: Connection, msg: m.QuickMatch) -> None:
        """Put ``conn`` in the queue (again: its earlier wish is replaced)."""
        if msg.rated and conn.account is None:
            raise CastellError("a rated quick match needs an account: say hello with a key",
                               code="not_signed_in")
        if msg.rated and msg.bots_after is not None:
            raise CastellError("bots never sit in a rated game: bots_after is for unrated "
                               "quick matches", code="rated_room")
        self.check_caps(conn)
        rating = 1500
        if msg.rated:
            assert conn.account is not None
            rating = (await self.ratings.of((conn.account,)))[conn.account]
        await self.cancel(conn)
        ticket = "q" + secrets.token_hex(8)
        wish = Wish(ticket, self.node_id, conn.id, conn.name or "?", conn.account, rating,
                    tuple(sorted(set(msg.seats))), msg.rated, self.clock(),
                    None if msg.bots_after is None else float(msg.bots_after),
                    conn.address, tuple(sorted(conn.blocked)))
        # Known here before it is in the queue: its match may come back at once.
        self.here[ticket] = conn
        self.tickets[conn] = ticket
        try:
            await self.queue.add(wish)
        except BaseException:
            self.here.pop(ticket, None)
            self.tickets.pop(conn, None)
            raise
        log.info("%s waits for a quick match (%s, seats %s)", conn.id,
                 "rated" if msg.rated else "unrated", "/".join(map(str, wish.seats)))

    def check_caps(self, conn: Connection) -> None:
        """A quick match's room counts against its players' room caps, as a room they
        created would: refused (``rate_limited``) when ``conn`` is at either."""
        if conn.rooms_created >= self.config.rooms_per_connection:
            raise CastellError("you have created too many rooms", code="rate_limited")
        if self.lobby.rooms_by_address()[conn.address] >= self.config.rooms_per_address:
            raise CastellError("your address has too many rooms open", code="rate_limited")

    async def cancel(self, conn: Connection) -> bool:
        """Take ``conn`` out of the queue; whether it was in it."""
        ticket = self.tickets.pop(conn, None)
        if ticket is None:
            return False
        self.here.pop(ticket, None)
        self.told.pop(ticket, None)
        await self.queue.remove(ticket)
        return True

    async def dropped(self, conn: Connection) -> None:
        """A connection closed: out of the queue (never raises)."""
        try:
            await self.cancel(conn)
        except Exception as exc:
            log.warning("%s could not be taken out of the quick-match queue: %s", conn.id, exc)

    # -- the matcher -------------------------------------------------------------------------

    async def _matching(self) -> None:
        while True:
            await asyncio.sleep(self.config.match_interval)
            try:
                await self.round()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("a round of quick matching failed; the next one will try again")

    async def round(self) -> int:
        """One round: match what can be matched (when this node may), then tell the players
        still waiting here how far their game is. Returns how many groups it started."""
        if isinstance(self.queue, RedisQueue):
            self.collect()  # should a push in this node's inbox have been missed
        wishes = await self.queue.wishes()
        now = self.clock()
        started = 0
        if wishes and await self.queue.may_match():
            taken: list[Match] = []
            left = rooms_left({w.address for w in wishes}, self.lobby.rooms_by_address(),
                              self.config.rooms_per_address)
            for match in find_matches(wishes, now, self.windows, left):
                if await self.queue.take([w.ticket for w in match.wishes]):
                    taken.append(match)
            # The rooms are set up side by side: their store writes share commits.
            done = await asyncio.gather(*(self._start(match) for match in taken),
                                        return_exceptions=True)
            for match, outcome in zip(taken, done, strict=True):
                if isinstance(outcome, BaseException):
                    log.error("a matched game could not be set up; its players wait on: %s",
                              outcome, exc_info=outcome)
                    for wish in match.wishes:
                        await self.queue.add(wish)
                    continue
                started += 1
                gone = {w.ticket for w in match.wishes}
                wishes = [w for w in wishes if w.ticket not in gone]
        for wish in wishes:
            if wish.ticket in self.here:
                told = progress(wish, wishes, now, self.windows)
                if self.told.get(wish.ticket) != told:
                    self.told[wish.ticket] = told
                    self.here[wish.ticket].send_bytes(encode(m.MatchWaitingPush(
                        found=told[0], of=told[1])))
        return started

    async def _start(self, match: Match) -> RoomRunner:
        rated = match.wishes[0].rated
        name = "Rated quick match" if rated else "Quick match"
        turn = self.config.rated_turn_seconds
        runner = await self.directory.create(name, match.seats, "normal", turn, False,
                                             rated=rated)
        tokens = [secrets.token_urlsafe(24) for _ in match.wishes]
        names = unique_names([w.name for w in match.wishes])
        runner.addresses = frozenset(w.address for w in match.wishes)
        await runner.seat_matched([(n, t, w.account) for w, n, t
                                   in zip(match.wishes, names, tokens, strict=True)])
        self.reservations.hold(runner, len(match.wishes))
        self.matched += 1
        self.players += len(match.wishes)
        log.info("room %s: a quick match of %s", runner.id,
                 ", ".join(w.name for w in match.wishes))
        for seat, (wish, token) in enumerate(zip(match.wishes, tokens, strict=True)):
            here = wish.node == self.node_id
            push = m.MatchedPush(room=runner.id, seat=seat, token=token,
                                 url=None if here else self.directory.url or None)
            if here:
                self._tell(wish.ticket, push)
            elif isinstance(self.queue, RedisQueue):
                await self.queue.publish(wish.node, wish.ticket, push)
        return runner

    def _tell(self, ticket: str, push: m.MatchedPush) -> None:
        """A player of this node was matched: it leaves the queue and hears where."""
        conn = self.here.pop(ticket, None)
        self.told.pop(ticket, None)
        if conn is None:
            return
        self.tickets.pop(conn, None)
        conn.rooms_created += 1  # the room counts against its players' caps
        conn.send_bytes(encode(push))

    async def _hearing(self, pubsub: Any) -> None:
        """Deliver the ``matched`` pushes other nodes publish for players waiting here."""
        assert isinstance(self.queue, RedisQueue)

        def take(data: dict[str, Any]) -> None:
            if data["node"] == self.node_id:
                self.collect()

        await listen(pubsub, self.queue.channel, "matches", take, pause=1.0,
                     subscribed=self.collect)

    def collect(self) -> None:
        """Take this node's inbox soon (once more after a taking under way)."""
        if self._collecting is not None and not self._collecting.done():
            self._collect_again = True
            return
        self._collecting = asyncio.get_running_loop().create_task(self._collect())

    async def _collect(self) -> None:
        """Deliver the ``matched`` pushes in this node's inbox, then delete them (a failure
        leaves them for the next taking)."""
        assert isinstance(self.queue, RedisQueue)
        again = True
        while again:
            self._collect_again = False
            try:
                pending = await self.queue.pending()
                for ticket, data in pending.items():
                    try:
                        push = None if data is None else m.from_wire(data, sender="server")
                    except Exception as exc:
                        log.warning("a matched push in Redis could not be read: %s", exc)
                        continue
                    if isinstance(push, m.MatchedPush):
                        self._tell(ticket, push)
                await self.queue.delivered(list(pending))
            except Exception as exc:
                log.warning("the matched pushes for this node could not be taken (%s); "
                            "they are taken again at the next round", exc)
            again = self._collect_again
