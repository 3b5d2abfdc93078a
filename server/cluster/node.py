"""Several server nodes sharing one lobby: who serves which room, kept in Redis.

A node started with ``--redis`` is a member of a cluster. Every node reads and writes games in
the one PostgreSQL database they share; Redis says which node serves which room, lists every
node's public rooms, and knows where each node can be reached. (docs/deploy.md explains how
to run one.)

**Leases.** A node serves a room only while it holds the room's lease: the Redis key
``room:<id>:owner`` holding its node id, set with ``SET … NX PX ttl`` (so exactly one node can
take it) and renewed every quarter of the ttl by a script that extends it only if it is still
this node's. A node that cannot renew a lease in time (Redis unreachable, the process stalled)
stops serving that room — it closes the room's connections with code 4002 — while the lease
still has at least a quarter of its ttl to run, so before any other node can take it.

**Taking over.** When a node dies its leases run out. Every lease is also an entry of the
sorted set ``leases`` (room id → when its lease ends, in milliseconds of Redis's own clock),
moved on at every taking and renewal, to 0 when a node gives a room up, and removed when the
room is finished or gone; so a node's scan reads only the leases that ran out
(``ZRANGEBYSCORE`` up to now, at most a few per scan, :data:`ADOPT_PER_SCAN`) — what changed,
however many games are held, and never the database's every unfinished room. Only when
Redis has no ``leases:seeded`` mark (a new cluster, or a Redis that lost its data) does one
scan read the database's unfinished rooms, once, and put each in ``leases`` at 0 (without
moving an entry already there); the mark stays until Redis loses it again.
A node takes the lease of one orphan atomically, loads the room and
replays its game (:meth:`server.core.room.Room.from_record`), moves the stored version one step
(:meth:`~server.core.room.Room.take_over`) and serves it from then on; a player asking for the room
adopts it on the spot too. The players come back with their seat tokens to any node.

Every request a node serves about a room is checked against the lease first, on the node's
own clock (:meth:`ClusterNode.holds`), so a node frozen past its lease serves nothing once it
wakes. The renewals have a Redis connection of their own: they never wait behind requests.

**Fencing.** A lease alone cannot stop a node that was frozen past its lease and wakes up in
the middle of a write. So every write about a room (actions, seats, status, result, deletion)
expects the version its holder stored last (``expect_version``, :mod:`server.store`): the
taking over moves that version, and from then on the old holder's writes are refused by the
database itself; a node whose write is refused so drops the room at once (4002).

**Redis restarted.** A Redis that lost its data no longer knows who holds what, while a node
may still believe, for up to half a lease, that it does. So a room is taken over only from a
Redis up for longer than a lease and a second (the ``_ADOPT`` script checks its uptime).

**The room list.** Each held room has a summary hash ``room:<id>:info`` (its room-list line,
plus where it is served), rewritten after each change of the room and expiring with the lease;
a private room's code maps to its id (``code:<CODE>``). The public rooms are kept in list
order in the sorted set ``list`` (score :func:`list_score`; equal scores in id order), moved
by the same script that rewrites a summary, and left when the room is given up. A page is
read by one script (:data:`_PAGE`): the rank of the room ``after``, then the summaries of
the next ``limit`` + 1 entries only (an entry whose summary ran out, its node gone, is
removed as it is met), so a page costs the same at ten rooms or a million. A node keeps each
page it read for :data:`LIST_FRESH` seconds, shared by every caller asking it meanwhile;
``join_room``
for a room served elsewhere answers ``moved`` with the url of the node that serves it
(:class:`shared.errors.RoomMoved`).

**Accounts.** A push for a signed-in player (``your_turn``) goes to that account's connections
on every node: a node publishes it on the channel ``accounts``, and every node delivers what
it hears there to the account's connections it has (:meth:`ClusterNode.serve_accounts`).

Every key starts with a prefix (``castell:`` by default), so several clusters — or test runs —
can share one Redis. ``redis`` (redis-py's asyncio client) is imported only by a cluster node.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
import time
from typing import TYPE_CHECKING, Any

import attrs

from server.cluster.relay import listen
from server.core.room import Room
from server.features.moderation import refuse_closed
from server.runtime.lobby import LIST_ORDER, new_room_id, not_found
from server.runtime.loop import stop_tasks
from server.runtime.runner import RoomRunner
from shared import messages as m
from shared.errors import CastellError, RoomMoved, RoomNotFound
from shared.view import RoomStatus
from shared.wire import NODES_MAX

if TYPE_CHECKING:
    import redis.asyncio

    from server.features.accounts import Accounts
    from server.features.matchmaking import LocalQueue, RedisQueue
    from server.runtime.lobby import Lobby
    from server.store.base import Store

log = logging.getLogger("castell.cluster")

DEFAULT_PREFIX = "castell:"
@attrs.frozen
class Page:
    """A page of the cluster's public rooms as read at ``read_at`` (monotonic), whether more
    follow, and how many list entries reading it touched."""

    read_at: float
    rooms: tuple[m.RoomSummary, ...]
    more: bool
    touched: int


def list_score(status: str, created_at: float) -> float:
    """A public room's score in the ``list`` sorted set: ascending in list order
    (:func:`server.runtime.lobby.list_key`: by status, then newest first; ties go by room id)."""
    return LIST_ORDER.get(status, 3) * 1e11 - created_at


DEFAULT_LEASE_MS = 10_000
#: Shorter leases would be renewed more often than a loaded Redis answers.
MIN_LEASE_MS = 300
#: Rooms one node takes over in one scan: a node that joins late, or survives others, does
#: not grab every orphan at once while other nodes could share them.
ADOPT_PER_SCAN = 20
#: Keys asked for in one MGET.
_CHUNK = 500
#: Seconds a page of the cluster's room list, as a node read it, serves every ``list_rooms``
#: on the node asking for it before it is read again (one read at a time, shared).
LIST_FRESH = 0.3
#: Pages a node keeps (the first ones asked, mostly); past that it forgets them all.
_PAGES_KEPT = 256
#: Expired leases one scan reads, at most.
_SCAN_READ = 4 * 20

# The time on Redis's clock in milliseconds (in a script, before writing).
_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# Take a room's lease (KEYS: owner, leases; ARGV: node id, ttl, room id): 1 taken, 0 another
# node holds it (its entry in leases is set to when that lease ends, should it say otherwise),
# -1 not yet: Redis started less than a lease (and a second) ago, so it may have lost leases
# that a node still believes it holds, and will until its own clock says they ran out.
_ADOPT = _NOW + """
local info = redis.call('INFO', 'server')
local up = tonumber(string.match(info, 'uptime_in_seconds:(%d+)'))
if up * 1000 < tonumber(ARGV[2]) + 1000 then return -1 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
  return 1
end
local left = redis.call('PTTL', KEYS[1])
if left > 0 then redis.call('ZADD', KEYS[2], now + left, ARGV[3]) end
return 0
"""

# Take a new room id's lease (KEYS: owner, leases; ARGV: node id, ttl, room id): 1 taken.
_RESERVE = _NOW + """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
  return 1
end
return 0
"""

# The rooms whose leases ran out (KEYS: leases; ARGV: how many at most), first ended first.
_EXPIRED = _NOW + """
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
"""

# Extend each lease (KEYS: leases, then owner, info, code keys of each room; ARGV: node id,
# ttl, then each room's id) that is still this node's: one round trip for all of a node's
# rooms. Returns 1 or 0 per room.
_RENEW = _NOW + """
local out = {}
local ends = now + tonumber(ARGV[2])
for i = 2, #KEYS, 3 do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
    redis.call('PEXPIRE', KEYS[i + 1], ARGV[2])
    redis.call('PEXPIRE', KEYS[i + 2], ARGV[2])
    redis.call('ZADD', KEYS[1], ends, ARGV[2 + (i + 1) / 3])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
"""

# Rewrite a room's summary if its lease is still this node's (KEYS: owner, info, list,
# code; ARGV: node id, ttl, room id, has code, its list score or '' when it is not listed,
# then the summary's field/value pairs).
_PUBLISH = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 6))
redis.call('PEXPIRE', KEYS[2], ARGV[2])
if ARGV[5] == '' then
  redis.call('ZREM', KEYS[3], ARGV[3])
else
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[3])
end
if ARGV[4] == '1' then redis.call('SET', KEYS[4], ARGV[3], 'PX', ARGV[2]) end
return 1
"""

# Give a room up if its lease is still this node's (KEYS: owner, info, list, code, leases;
# ARGV: node id, room id, and in how many ms another node may take it over, or '' when it
# is finished or gone and nobody should).
_RELEASE = _NOW + """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[2])
if redis.call('GET', KEYS[4]) == ARGV[2] then redis.call('DEL', KEYS[4]) end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[5], ARGV[2])
else
  redis.call('ZADD', KEYS[5], now + tonumber(ARGV[3]), ARGV[2])
end
return 1
"""

# One page of the public rooms (KEYS: list; ARGV: prefix, the room it starts after or '',
# how many): the summaries of the ``limit`` rooms after ``after`` in list order (from the
# first when ``after`` is not listed), whether more follow, and how many entries were
# touched; an entry whose summary ran out is removed as it is met. JSON: {rooms, more,
# touched}.
_PAGE = """
local limit = tonumber(ARGV[3])
local start = 0
if ARGV[2] ~= '' then
  local rank = redis.call('ZRANK', KEYS[1], ARGV[2])
  if rank then start = rank + 1 end
end
local out = {}
local touched = 0
local more = false
while true do
  local want = limit + 1 - #out
  local ids = redis.call('ZRANGE', KEYS[1], start, start + want - 1)
  local gone = 0
  for _, id in ipairs(ids) do
    touched = touched + 1
    local info = redis.call('HGETALL', ARGV[1] .. 'room:' .. id .. ':info')
    if #info == 0 then
      redis.call('ZREM', KEYS[1], id)
      gone = gone + 1
    elseif #out == limit then
      more = true
      break
    else
      local fields = {}
      for i = 1, #info, 2 do fields[info[i]] = info[i + 1] end
      out[#out + 1] = fields
    end
  end
  if more or #ids < want or #out == limit and gone == 0 then break end
  start = start + #ids - gone
end
return cjson.encode({rooms = out, more = more, touched = touched})
"""

# Every live node's url (KEYS: node set; ARGV: prefix), forgetting nodes that expired.
_NODES = """
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local url = redis.call('GET', ARGV[1] .. 'node:' .. id)
  if url then out[#out + 1] = url else redis.call('SREM', KEYS[1], id) end
end
return out
"""

# Who holds a room (KEYS: owner, info; ARGV: prefix): {node id, its url, private flag}.
_LOCATE = """
local owner = redis.call('GET', KEYS[1])
if not owner then return false end
local url = redis.call('GET', ARGV[1] .. 'node:' .. owner)
local private = redis.call('HGET', KEYS[2], 'private')
return {owner, url or '', private or ''}
"""


@attrs.frozen
class ClusterConfig:
    """How a node joins its cluster (the ``--redis`` family of flags).

    ``advertise`` is the address players and the other nodes reach this node at (None: the
    address it listens on, ``ws://HOST:PORT``); ``lease_ms`` how long a room stays with a
    node that stopped renewing its lease before another node may take it over.
    """

    redis_url: str
    advertise: str | None = None
    prefix: str = DEFAULT_PREFIX
    lease_ms: int = DEFAULT_LEASE_MS

    def __attrs_post_init__(self) -> None:
        if self.lease_ms < MIN_LEASE_MS:
            raise ValueError(f"the lease must last at least {MIN_LEASE_MS} ms")

    @property
    def renew_every(self) -> float:
        """Seconds between renewals: a quarter of the lease, so two can fail in a row."""
        return self.lease_ms / 4000

    @property
    def scan_every(self) -> float:
        """Seconds between two scans for rooms nobody serves."""
        return self.lease_ms / 2000


@attrs.define
class Lease:
    """A room this node holds, and until when (``time.monotonic()``) it surely holds it."""

    valid_until: float


class Leases:
    """The leases this node holds, by room id, and whether it may serve a room now (the
    lobby asks before every request: :meth:`holds`)."""

    def __init__(self, config: ClusterConfig) -> None:
        #: Seconds before a lease's end this node stops serving its room (two renewals).
        self.margin = 2 * config.renew_every
        self.owned: dict[str, Lease] = {}

    def holds(self, runner: RoomRunner) -> bool:
        """Whether this node may serve the room now: its lease is this node's and, on this
        node's clock, still has the margin :meth:`ClusterNode.renew` keeps (asked before
        every request, so a node that was stalled past its lease serves nothing once it
        wakes)."""
        lease = self.owned.get(runner.id)
        return lease is not None and time.monotonic() < lease.valid_until - self.margin


class Keys:
    """The Redis key names of one cluster."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        #: The public rooms in list order (a sorted set; see "The room list" above).
        self.list = f"{prefix}list"
        #: Every room's lease and when it ends (a sorted set; see "Taking over" above).
        self.leases = f"{prefix}leases"
        #: Set once the database's unfinished rooms were put in ``leases``.
        self.seeded = f"{prefix}leases:seeded"
        self.nodes = f"{prefix}nodes"
        #: The channel of pushes for accounts (see "Accounts" above).
        self.accounts = f"{prefix}accounts"

    def owner(self, room: str) -> str:
        return f"{self.prefix}room:{room}:owner"

    def info(self, room: str) -> str:
        return f"{self.prefix}room:{room}:info"

    def code(self, code: str | None) -> str:
        # A room without a code still passes a key, one that never exists.
        return f"{self.prefix}code:{code or ''}"

    def node(self, node: str) -> str:
        return f"{self.prefix}node:{node}"


def summary_fields(room: Room[Any], url: str) -> dict[str, str]:
    """A room's line of the cluster's room list, as the strings Redis keeps."""
    return {
        "room": room.id,
        "name": room.name,
        "seats": str(room.size),
        "taken": str(room.taken),
        "variant": room.variant,
        "status": room.status,
        "turn_seconds": "" if room.turn_seconds is None else str(room.turn_seconds),
        "private": "1" if room.private else "0",
        "rated": "1" if room.rated else "0",
        "created": repr(room.created_at),
        "url": url,
    }


def summary_from_fields(fields: dict[str, str]) -> m.RoomSummary:
    return m.RoomSummary(
        room=fields["room"],
        name=fields["name"],
        seats=int(fields["seats"]),
        taken=int(fields["taken"]),
        variant=fields["variant"],
        status=fields["status"],
        turn_seconds=int(fields["turn_seconds"]) if fields["turn_seconds"] else None,
        rated=fields.get("rated") == "1",
    )


class ClusterNode:
    """This server as one node of a cluster: its leases, its share of the room list, and the
    rooms it takes over. See the module docstring."""

    def __init__(self, config: ClusterConfig, lobby: Lobby, store: Store,
                 leases: Leases | None = None) -> None:
        """``leases``: the table the lobby asks (:meth:`Leases.holds`) before serving a
        room; a node given none keeps its own (the lobby then serves what it has)."""
        self.config = config
        self.lobby = lobby
        self.store = store
        self.keys = Keys(config.prefix)
        #: This node's id in Redis: new at every start, so a restarted node never mistakes
        #: its previous life's leases for its own.
        self.node_id = secrets.token_hex(6)
        self.url = ""
        self.leases = leases or Leases(config)
        self.owned = self.leases.owned
        self.redis: redis.asyncio.Redis | None = None
        #: The leases' own connection: renewals never wait behind client traffic.
        self._lease_redis: redis.asyncio.Redis | None = None
        #: The shared room list's read side (pages, node urls).
        self.listing = ListReader(self)
        #: Leases or rows scans read (all told).
        self.scan_read = 0
        #: Until when (monotonic) rooms are not taken over: Redis lost its data lately.
        self._held_off_until = 0.0
        self._scripts: dict[str, Any] = {}
        self._dirty: set[str] = set()
        #: What each held room's summary said when last written: (seats taken, status).
        self._listed: dict[str, tuple[int, str]] = {}
        self._wake = asyncio.Event()
        self._adopting: dict[str, asyncio.Task[RoomRunner | None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loops: list[asyncio.Task[None]] = []
        lobby.subscribe(on_change=self._changed, on_remove=self._removed)

    @property
    def ttl(self) -> int:
        return self.config.lease_ms

    # -- life --------------------------------------------------------------------------------

    async def start(self, listening_url: str) -> None:
        """Connect to Redis, announce this node, take over the rooms nobody serves, and keep
        the leases renewed from now on."""
        try:
            import redis.asyncio as aioredis
        except ImportError as exc:  # the optional `cluster` extra is not installed
            raise CastellError("a cluster node needs the redis package: install "
                               "castell[cluster]") from exc
        from redis.asyncio.retry import Retry
        from redis.backoff import ExponentialBackoff
        from redis.exceptions import ConnectionError as RedisConnectionError

        self.url = self.config.advertise or listening_url
        # A command on a connection that Redis closed (it restarted) is sent again on a
        # new one, instead of failing the request that needed it.
        options: dict[str, Any] = {
            "decode_responses": True, "socket_connect_timeout": 5.0,
            "socket_timeout": max(1.0, 2 * self.config.renew_every),
            "retry": Retry(ExponentialBackoff(cap=0.5, base=0.05), 3),
            "retry_on_error": [RedisConnectionError],
        }
        client = aioredis.Redis.from_url(self.config.redis_url, **options)
        try:
            await client.ping()
        except Exception as exc:
            await client.aclose()
            raise CastellError(f"Redis is not answering at {self.config.redis_url} ({exc}); "
                               "a cluster node needs it") from exc
        self.redis = client
        self._lease_redis = aioredis.Redis.from_url(self.config.redis_url, max_connections=2,
                                                    **options)
        for name, source in (("renew", _RENEW), ("publish", _PUBLISH), ("release", _RELEASE),
                             ("page", _PAGE), ("nodes", _NODES), ("locate", _LOCATE),
                             ("adopt", _ADOPT), ("reserve", _RESERVE),
                             ("expired", _EXPIRED)):
            self._scripts[name] = client.register_script(source)
        await self._announce()
        await self._scan()
        self._loops = [asyncio.create_task(self._renewing()),
                       asyncio.create_task(self._scanning()),
                       asyncio.create_task(self._publishing())]
        log.info("node %s joined the cluster as %s", self.node_id, self.url)

    async def close(self) -> None:
        """Give up every lease at once (the other nodes take the rooms over at their next
        scan instead of waiting for the leases to run out) and leave the cluster."""
        await stop_tasks(self._loops)  # (each cancelled again if Redis swallowed it)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.redis is None:
            return
        try:
            for room_id in list(self.owned):
                runner = self.lobby.rooms.get(room_id)
                await self._release(room_id, runner.room.code if runner is not None else None,
                                    retry_ms=0)
            await self.redis.delete(self.keys.node(self.node_id))
            await self.redis.srem(self.keys.nodes, self.node_id)
        except Exception as exc:
            log.warning("could not give up this node's leases (%s); they will run out", exc)
        finally:
            self.owned.clear()
            await self.redis.aclose()
            self.redis = None
            if self._lease_redis is not None:
                await self._lease_redis.aclose()
                self._lease_redis = None

    # -- accounts ------------------------------------------------------------------------------

    async def serve_accounts(self, accounts: Accounts) -> None:
        """Deliver here the pushes the other nodes relay for ``accounts``
        (:meth:`relay_push`, ``accounts``' relay): subscribed before this returns, so no push
        published afterwards is missed."""
        pubsub = self._need_redis().pubsub()
        await pubsub.subscribe(self.keys.accounts)
        self._loops.append(asyncio.create_task(self._hearing(pubsub, accounts)))

    async def relay_push(self, account: str, push: Any) -> None:
        """Send ``push`` to ``account``'s connections on the other nodes."""
        await self._need_redis().publish(self.keys.accounts, json.dumps(
            {"node": self.node_id, "account": account, "push": m.to_wire(push)}))

    async def _hearing(self, pubsub: Any, accounts: Accounts) -> None:
        """Deliver the pushes other nodes publish for accounts with connections here."""

        def take(data: dict[str, Any]) -> None:
            if data["node"] != self.node_id:
                push = m.from_wire(data["push"], sender="server")
                accounts.deliver_here(str(data["account"]), push)

        await listen(pubsub, self.keys.accounts, "account pushes", take,
                     pause=self.config.renew_every)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _need_redis(self) -> redis.asyncio.Redis:
        if self.redis is None:
            raise CastellError("this node is not connected to its cluster")
        return self.redis

    # -- holding rooms ------------------------------------------------------------------------

    async def create(self, name: str, seats: int, variant: str, turn_seconds: int | None,
                     private: bool, *, rated: bool = False,
                     offers: dict[int, str] | None = None) -> RoomRunner:
        """A new room of this node: its id's lease taken first, so that no scanning node
        can mistake the stored room for an orphan. It is fenced from the start (stored at
        version 0, as the room is)."""
        self.lobby.check_capacity()
        room_id = await self._reserve()
        try:
            runner = await self.lobby.create(name, seats, variant, turn_seconds, private,
                                             room_id=room_id, fenced=True, rated=rated,
                                             offers=offers)
        except BaseException:
            self.owned.pop(room_id, None)
            self._spawn(self._release(room_id, None, retry_ms=None))
            raise
        await self._publish(runner)
        return runner

    async def _reserve(self) -> str:
        redis = self._need_redis()
        for _ in range(8):
            room_id = new_room_id()
            if room_id in self.lobby.rooms:
                continue
            sent = time.monotonic()
            if await self._scripts["reserve"](keys=[self.keys.owner(room_id), self.keys.leases],
                                              args=[self.node_id, self.ttl, room_id],
                                              client=redis):
                self.owned[room_id] = Lease(sent + self.ttl / 1000)
                return room_id
        raise CastellError("no free room id was found; try again", code="internal_error")

    def _changed(self, runner: RoomRunner) -> None:
        """A held room changed: its summary is rewritten soon (changes in a burst, once) —
        when its line in the list changed: most changes (actions) leave it as it was."""
        room = runner.room
        if self._listed.get(room.id) == (room.taken, room.status):
            return
        self._dirty.add(room.id)
        self._wake.set()

    async def _publishing(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            dirty, self._dirty = self._dirty, set()
            for room_id in dirty:
                runner = self.lobby.rooms.get(room_id)
                if runner is None or room_id not in self.owned:
                    continue
                try:
                    await self._publish(runner)
                except Exception as exc:
                    log.warning("room %s: its summary was not written (%s); retrying",
                                room_id, exc)
                    self._dirty.add(room_id)
            if self._dirty:
                await asyncio.sleep(self.config.renew_every)
                self._wake.set()

    async def _publish(self, runner: RoomRunner) -> None:
        room = runner.room
        listed = (room.taken, room.status)
        fields = summary_fields(room, self.url)
        flat = [part for pair in fields.items() for part in pair]
        score = "" if room.private else repr(list_score(room.status, room.created_at))
        await self._scripts["publish"](
            keys=[self.keys.owner(room.id), self.keys.info(room.id), self.keys.list,
                  self.keys.code(room.code)],
            args=[self.node_id, self.ttl, room.id, "1" if room.code else "0", score, *flat],
        )
        if room.id in self.owned:
            self._listed[room.id] = listed

    async def _release(self, room_id: str, code: str | None, *, retry_ms: int | None) -> None:
        """Give a room's lease up: another node may take it over in ``retry_ms``, or never
        (None: it is finished or gone)."""
        await self._scripts["release"](
            keys=[self.keys.owner(room_id), self.keys.info(room_id), self.keys.list,
                  self.keys.code(code), self.keys.leases],
            args=[self.node_id, room_id, "" if retry_ms is None else str(retry_ms)],
        )

    def _removed(self, runner: RoomRunner) -> None:
        """The lobby let a room go (finished long ago, or abandoned): so does the cluster."""
        self._listed.pop(runner.id, None)
        if self.owned.pop(runner.id, None) is not None and self.redis is not None:
            finished = runner.room.status == RoomStatus.FINISHED
            self._spawn(self._release(runner.id, runner.room.code,
                                      retry_ms=None if finished else 0))

    # -- keeping the leases -------------------------------------------------------------------

    async def _announce(self) -> None:
        redis = self._lease_redis or self._need_redis()
        async with redis.pipeline(transaction=False) as pipe:
            pipe.set(self.keys.node(self.node_id), self.url, px=self.ttl)
            pipe.sadd(self.keys.nodes, self.node_id)
            await pipe.execute()

    async def _renewing(self) -> None:
        while True:
            await asyncio.sleep(self.config.renew_every)
            try:
                await self.renew()
            except Exception:
                log.exception("renewing the leases failed")

    async def renew(self) -> None:
        """Extend every lease still ours; stop serving each room whose lease is gone, or
        that could not be renewed and is near its end."""
        held = list(self.owned)
        sent = time.monotonic()
        results: list[int] | None = None
        try:
            async with asyncio.timeout(self.config.renew_every):
                await self._announce()
                if held:
                    keys = [key for room_id in held for key in self._lease_keys(room_id)]
                    results = await self._scripts["renew"](
                        keys=[self.keys.leases, *keys], args=[self.node_id, self.ttl, *held],
                        client=self._lease_redis)
                else:
                    results = []
        except Exception as exc:
            log.warning("cannot renew this node's leases: %s", exc or type(exc).__name__)
        if results is not None:
            for room_id, ok in zip(held, results, strict=True):
                lease = self.owned.get(room_id)
                if lease is None:
                    continue
                if ok:
                    lease.valid_until = sent + self.ttl / 1000
                else:
                    self._lost(room_id, "another node holds its lease now")
        # Stop serving a room while its lease still has time to run, so that it is never
        # served by two nodes: renewals come every quarter lease, so that is half a lease.
        margin = 2 * self.config.renew_every
        now = time.monotonic()
        for room_id, lease in list(self.owned.items()):
            if now > lease.valid_until - margin:
                self._lost(room_id, "its lease could not be renewed in time")

    def holds(self, runner: RoomRunner) -> bool:
        """Whether this node may serve the room now (:meth:`Leases.holds`)."""
        return self.leases.holds(runner)

    def _lease_keys(self, room_id: str) -> tuple[str, str, str]:
        runner = self.lobby.rooms.get(room_id)
        return (self.keys.owner(room_id), self.keys.info(room_id),
                self.keys.code(runner.room.code if runner is not None else None))

    def _lost(self, room_id: str, why: str) -> None:
        self.owned.pop(room_id, None)
        runner = self.lobby.rooms.get(room_id)
        log.warning("room %s is no longer this node's: %s", room_id, why)
        if runner is not None:
            self._spawn(self._drop(runner))

    async def _drop(self, runner: RoomRunner) -> None:
        """Stop serving a room: its players are sent to find it again (4002); no leaving is
        written, since this node no longer writes about the room."""
        await self.lobby.drop(runner)

    # -- taking rooms over --------------------------------------------------------------------

    async def _scanning(self) -> None:
        while True:
            await asyncio.sleep(self.config.scan_every * random.uniform(0.8, 1.2))
            try:
                await self._scan()
            except Exception as exc:
                log.warning("scanning for rooms nobody serves failed: %s", exc)

    async def _scan(self) -> None:
        """Take over some unfinished rooms whose leases ran out: only those are read (see
        "Taking over" above), after the database's are put in ``leases`` once."""
        redis = self._need_redis()
        if not await redis.exists(self.keys.seeded):
            await self._seed()
        expired = await self._scripts["expired"](keys=[self.keys.leases],
                                                 args=[_SCAN_READ])
        self.scan_read += len(expired)
        orphans = [room_id for room_id in expired
                   if room_id not in self.lobby.rooms and room_id not in self.owned]
        random.shuffle(orphans)  # nodes scanning together take different rooms first
        for room_id in orphans[:ADOPT_PER_SCAN]:
            if not self.lobby.has_room_for_more:
                break
            await self.adopt(room_id)

    async def _seed(self) -> None:
        """Put every unfinished room of the database in ``leases`` (ended: at 0) unless it
        is there, then mark it done: once per life of Redis's data."""
        redis = self._need_redis()
        rooms = await self.store.unfinished_rooms()
        self.scan_read += len(rooms)
        for start in range(0, len(rooms), _CHUNK):
            chunk = rooms[start:start + _CHUNK]
            await redis.zadd(self.keys.leases, dict.fromkeys(chunk, 0), nx=True)
        await redis.set(self.keys.seeded, "1")
        log.info("the cluster's leases now list the %d unfinished rooms of the database",
                 len(rooms))

    async def adopt(self, room_id: str) -> RoomRunner | None:
        """Serve a room that no node holds: None when another node took it first, or it is
        not an unfinished room of the database. One attempt per room at a time."""
        task = self._adopting.get(room_id)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._adopt(room_id))
            self._adopting[room_id] = task
            task.add_done_callback(lambda _: self._adopting.pop(room_id, None))
        return await asyncio.shield(task)

    async def _adopt(self, room_id: str) -> RoomRunner | None:
        if room_id in self.lobby.rooms:
            return self.lobby.rooms[room_id]
        if not self.lobby.has_room_for_more:
            return None
        self._need_redis()
        sent = time.monotonic()
        taken = await self._scripts["adopt"](keys=[self.keys.owner(room_id), self.keys.leases],
                                             args=[self.node_id, self.ttl, room_id])
        if taken == -1:
            if time.monotonic() >= self._held_off_until:
                log.warning("Redis started less than a lease ago: no room is taken over "
                            "until a node that held it has surely stopped serving it")
            self._held_off_until = time.monotonic() + self.ttl / 1000
            return None  # Redis may have lost the lease its old holder still serves it by
        if not taken:
            return None  # another node was first
        self.owned[room_id] = Lease(sent + self.ttl / 1000)
        retry: int | None = None  # a room finished or gone is taken over by nobody
        try:
            record = await self.store.load(room_id)
            if record is None or record.room.status == RoomStatus.FINISHED:
                runner = None
            else:
                runner = self.lobby.runner_from_record(record)
                # Fence out the node that held it, should it still be writing.
                await runner.take_over()
        except Exception as exc:
            # version_conflict: the old holder wrote after we loaded; try again later.
            log.warning("room %s could not be taken over: %s", room_id, exc)
            runner, retry = None, self.ttl
        if runner is None or room_id not in self.owned:
            self.owned.pop(room_id, None)
            await self._release(room_id, None, retry_ms=retry if runner is None else 0)
            return None
        self.lobby.admit(runner, "taken over")
        if self.lobby.metrics is not None:
            self.lobby.metrics.takeovers.inc()
        try:
            await self._publish(runner)
        except Exception as exc:
            log.warning("room %s: its summary was not written (%s)", room_id, exc)
            self._changed(runner)
        return runner

    async def locate(self, key: str, *, by_id_private: bool) -> RoomRunner:
        """The room ``key`` (an id or a private code) names, which this node's lobby does not
        have: taken over here if no node serves it; :class:`RoomMoved` when another node
        does; ``room_not_found`` otherwise. A private room is found by id only with
        ``by_id_private`` (a seat token came with the request), as in the lobby."""
        redis = self._need_redis()
        raw = await redis.get(self.keys.code(key.upper()))
        coded = raw.decode() if isinstance(raw, bytes) else raw
        may_see_private = coded is not None or by_id_private
        room_id = coded or key
        for _ in range(2):
            runner = self.lobby.rooms.get(room_id)
            if runner is None and room_id in self._adopting:
                runner = await self.adopt(room_id)  # this node is taking it over right now
            if runner is None:
                found = await self._scripts["locate"](
                    keys=[self.keys.owner(room_id), self.keys.info(room_id)],
                    args=[self.keys.prefix])
                if found:
                    owner, url, private = found
                    if private == "1" and not may_see_private:
                        raise not_found(key)
                    if owner == self.node_id:
                        raise RoomMoved(f"room {key} is being set up on this server: ask "
                                        "again in a moment", url=None)
                    raise RoomMoved(f"room {key} is served by another server: connect there",
                                    url=url or None)
                runner = await self.adopt(room_id)
                if runner is None and time.monotonic() < self._held_off_until:
                    raise RoomMoved(f"room {key} is between two servers: ask again in a "
                                    "moment", url=None)
            if runner is not None:
                if runner.room.private and not may_see_private:
                    raise not_found(key)
                return runner
        record = await self.store.load(room_id)
        if record is not None and (may_see_private or not record.room.private):
            refuse_closed(record)  # the host closed it: no node serves it again
        raise not_found(key)

    # -- the cluster's rooms ------------------------------------------------------------------

    async def list_page(self, after: str | None, limit: int,
                        ) -> tuple[tuple[m.RoomSummary, ...], tuple[str, ...], bool]:
        """A page of the cluster's public rooms, the live nodes, and whether more rooms
        follow (:meth:`ListReader.list_page`)."""
        self._need_redis()
        return await self.listing.list_page(after, limit)


class ListReader:
    """The read side of the cluster's shared room list, for one node: a page of public rooms
    (one Lua script over one page of the ``list`` sorted set) and the live nodes' urls, each
    read at most every :data:`LIST_FRESH` seconds and shared by every caller on the node."""

    def __init__(self, node: ClusterNode) -> None:
        self.node = node
        #: Pages of the cluster's public rooms as last read, by (after, limit); the node urls.
        self._pages: dict[tuple[str | None, int], Page] = {}
        self._reading: dict[tuple[str | None, int], asyncio.Task[Page]] = {}
        self._nodes: tuple[float, tuple[str, ...]] | None = None
        self._nodes_task: asyncio.Task[tuple[str, ...]] | None = None
        #: List entries that page reads touched (all told).
        self.touched = 0

    async def list_page(self, after: str | None, limit: int,
                        ) -> tuple[tuple[m.RoomSummary, ...], tuple[str, ...], bool]:
        """A page of the cluster's public rooms (at most ``limit``, those after the room
        ``after``), the addresses of every node serving now, and whether more rooms follow:
        as read from Redis at most :data:`LIST_FRESH` seconds ago, one read of a page at a
        time shared by every caller on this node; each read costs one page (:data:`_PAGE`),
        whatever the number of rooms."""
        key = (after, limit)
        page = self._pages.get(key)
        if page is None or time.monotonic() - page.read_at > LIST_FRESH:
            reading = self._reading.get(key)
            if reading is None:
                reading = asyncio.get_running_loop().create_task(self._read_page(after, limit))
                self._reading[key] = reading
                reading.add_done_callback(lambda task: self._page_read(key, task))
            page = await asyncio.shield(reading)
        return page.rooms, await self._node_urls(), page.more

    def _page_read(self, key: tuple[str | None, int], task: asyncio.Task[Page]) -> None:
        self._reading.pop(key, None)
        if not task.cancelled() and task.exception() is None:
            if len(self._pages) >= _PAGES_KEPT:
                self._pages.clear()
            self._pages[key] = task.result()

    async def _read_page(self, after: str | None, limit: int) -> Page:
        read_at = time.monotonic()
        raw = await self.node._scripts["page"](keys=[self.node.keys.list],
                                          args=[self.node.keys.prefix, after or "", limit])
        got = json.loads(raw)
        self.touched += int(got["touched"])
        rooms = got["rooms"] if isinstance(got["rooms"], list) else []  # {}: cjson's empty
        return Page(read_at, tuple(summary_from_fields(f) for f in rooms), bool(got["more"]),
                    int(got["touched"]))

    async def _node_urls(self) -> tuple[str, ...]:
        """Every live node's url, read at most every :data:`LIST_FRESH` seconds."""
        nodes = self._nodes
        if nodes is not None and time.monotonic() - nodes[0] <= LIST_FRESH:
            return nodes[1]
        reading = self._nodes_task
        if reading is None:
            reading = asyncio.get_running_loop().create_task(self._read_nodes())
            self._nodes_task = reading

            def done(task: asyncio.Task[tuple[str, ...]]) -> None:
                self._nodes_task = None
                if not task.cancelled() and task.exception() is None:
                    self._nodes = (read_at, task.result())

            read_at = time.monotonic()
            reading.add_done_callback(done)
        return await asyncio.shield(reading)

    async def _read_nodes(self) -> tuple[str, ...]:
        keys = self.node.keys
        nodes = await self.node._scripts["nodes"](keys=[keys.nodes], args=[keys.prefix])
        return tuple(sorted(nodes))[:NODES_MAX]



class ClusterDirectory:
    """A cluster node's room directory (:class:`server.runtime.directory.Directory`): the rooms of
    every node, with :class:`ClusterNode` behind it. A room not in this node's lobby is
    located in Redis (``moved``) or taken over here."""

    shared = True

    def __init__(self, node: ClusterNode) -> None:
        self.node = node
        self.lobby = node.lobby

    @property
    def node_id(self) -> str:
        return self.node.node_id

    @property
    def url(self) -> str:
        return self.node.url

    async def start(self, url: str, accounts: Accounts) -> None:
        host = url.partition("://")[2].rpartition(":")[0]
        if self.node.config.advertise is None and host in ("0.0.0.0", "::", ""):
            raise CastellError("a cluster node listening on every address must say where it "
                               "is reached: give --advertise ws://HOST:PORT")
        await self.node.start(url)
        await self.node.serve_accounts(accounts)

    async def close(self) -> None:
        await self.node.close()

    async def create(self, name: str, seats: int, variant: str, turn_seconds: int | None,
                     private: bool, *, rated: bool = False,
                     offers: dict[int, str] | None = None) -> RoomRunner:
        return await self.node.create(name, seats, variant, turn_seconds, private,
                                      rated=rated, offers=offers)

    async def find(self, key: str, *, by_id_private: bool) -> RoomRunner:
        try:
            return self.lobby.find(key, by_id_private=by_id_private)
        except RoomNotFound:
            pass
        return await self.node.locate(key, by_id_private=by_id_private)

    async def list_page(self, after: str | None, limit: int,
                        ) -> tuple[tuple[m.RoomSummary, ...], tuple[str, ...] | None, bool]:
        return await self.node.list_page(after, limit)

    def leases(self) -> int | None:
        return len(self.node.owned)

    def queue(self) -> LocalQueue | RedisQueue:
        from server.features.matchmaking import RedisQueue

        return RedisQueue(self.node)
