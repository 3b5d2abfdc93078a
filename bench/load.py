"""The load generator: servers in their own processes, and rooms of four clients driving them.

Two kinds of server take the same load from this (separate) process over 127.0.0.1:

* ``castell`` — ``python -m server --port 0 --db :memory:`` with limits raised so nothing is
  rate-limited; each room is a real game created, joined and started over the protocol;
* ``bare`` — :mod:`bench.bare`, a websockets server with the same settings that only echoes
  each frame to its sender and broadcasts a pre-encoded state push of a real mid-game view to
  the sender's room.

A room's driver loops: the client whose turn it is picks an action from its latest view
(:func:`next_action`), sends it and waits for the reply (the *round trip*) and for the new
state to reach every member of the room (the *broadcast* latency, measured at the last
member). Paced runs wait a think time (0.5–1.5× ``think``) before each action; saturated runs
(``think`` 0) go as fast as replies come. Every run is bounded: it stops by itself after its
seconds, every wait has a timeout, and a room that times out stops being driven.

Castell's clients ask for view patches at ``hello``, packed (:mod:`shared.packed`), unless
told not to (``patches=False``): each then applies every ``patch`` (or ``p``) push to the
view it holds, as the real client does. Every member counts the bytes it receives, so a run
says how many bytes each action costs the room's members (its ``bytes_per_action``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgpack
from websockets.asyncio.client import ClientConnection, connect

from bench.common import ROOT, cpu_seconds, percentile, rss_kib
from server.config import SUBPROTOCOL, ServerConfig
from shared import packed
from shared.board import ADJACENT, ALL_SEGMENT, MAX_RANK, REGIONS, SPECIAL_TILE, Variant
from shared.patch import apply

#: Seconds any one reply, push or setup step may take before the room is given up.
WAIT = 10.0
#: Connections opened at once while setting up.
CONNECT_AT_ONCE = 32


# Servers in their own processes -----------------------------------------------------------------


#: The load generator's first collector threshold while it measures (CPython's: 700).
QUIET_COLLECTOR = 50_000


@attrs.define
class ServerProcess:
    """A server started as a subprocess that announces its URL on its first line of stdout."""

    kind: str
    proc: subprocess.Popen[str]
    url: str
    log: Any

    @property
    def pid(self) -> int:
        return self.proc.pid


#: The bare baselines, by the name ``python -m bench server --bare`` gives them: websockets'
#: asyncio server (:mod:`bench.bare`), or its sans-I/O layer under an asyncio Protocol
#: (:mod:`bench.bare_sansio`).
BARES = {"websockets": "bench.bare", "sansio": "bench.bare_sansio"}


def server_command(kind: str, connections: int, profile: str | None = None,
                   db: str = ":memory:", group_commit: bool = True,
                   loop: str = "asyncio", extra: Sequence[str] = (),
                   bare: str = "websockets") -> list[str]:
    """The command line of a ``castell`` or ``bare`` server sized for ``connections``
    (profiled by CPU time into ``profile``, when given: :mod:`bench.cpuprofile`), on the
    database ``db`` with group commit on or off, on the event loop ``loop``
    (:mod:`server.runtime.loop`), with the ``extra`` flags of a castell server; a ``bare``
    one is the baseline ``bare`` names (:data:`BARES`). Its bots (the ``bots`` case) act
    0.1 s apart, so that they think often in a short run."""
    python = [sys.executable, *(["-m", "bench.cpuprofile", profile] if profile else [])]
    if kind == "bare":
        return [*python, "-m", BARES[bare], "--port", "0", "--loop", loop]
    limit = str(max(connections * 2, 100))
    return [
        *python, "-m", "server", "--port", "0", "--db", db,
        "--group-commit", "on" if group_commit else "off", "--loop", loop,
        "--max-connections", limit, "--max-per-address", limit,
        "--max-rooms", str(max(connections * 50, 2000)), "--rooms-per-connection", "100000",
        "--rooms-per-address", "100000", "--rate", "1000000",
        # every bench client connects from 127.0.0.1: lift the budget of one address too
        "--address-rate", "1000000", "--address-burst", "1000000", "--bot-delay", "0.1",
        # thousands of clients opened from one process may say hello late: not measured here
        "--hello-timeout", "300", *extra,
    ]


@contextlib.contextmanager
def running(kind: str, connections: int, profile: str | None = None, db: str = ":memory:",
            group_commit: bool = True, loop: str = "asyncio",
            extra: Sequence[str] = (), bare: str = "websockets") -> Iterator[ServerProcess]:
    """Start a server of ``kind`` (a castell one with the ``extra`` flags; a bare one of the
    baseline ``bare`` names) and stop it (SIGTERM, then SIGKILL) on the way out."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = server_command(kind, connections, profile, db, group_commit, loop, extra, bare)
    with started(kind, command, ROOT, env) as server:
        yield server


@contextlib.contextmanager
def started(kind: str, command: Sequence[str], cwd: Path,
            env: dict[str, str] | None = None) -> Iterator[ServerProcess]:
    """Run ``command`` in ``cwd``, a server of ``kind`` that says its ``ws://`` URL on its
    first line of stdout, and stop it (SIGTERM, then SIGKILL) on the way out; its stderr is
    kept in :attr:`ServerProcess.log`."""
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(list(command), cwd=cwd, env=env,
                                stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if "ws://" not in line:
                proc.wait(5)
                log.seek(0)
                raise RuntimeError(f"the {kind} server did not start: {line}{log.read()[-2000:]}")
            yield ServerProcess(kind, proc, line[line.index("ws://"):].split()[0], log)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


# One client -------------------------------------------------------------------------------------


def peek(data: bytes) -> tuple[str | None, int | None]:
    """A frame's ``type`` and ``version`` read off its head, without decoding the rest (a
    state push's view is decoded only when someone looks at it)."""
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(data)
    kind = version = None
    for _ in range(unpacker.read_map_header()):
        key = unpacker.unpack()
        if key == "type":
            kind = unpacker.unpack()
        elif key == "version" or key == "v":  # (a packed patch's version: shared.packed)
            version = unpacker.unpack()
        else:
            unpacker.skip()
        if kind is not None and version is not None:
            break
    return kind, version


class Member:
    """One client connection: its latest state, its one outstanding request."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.seat: int | None = None
        self.version = -1
        self._push: bytes | None = None  # the latest state push, decoded on demand
        self._view: dict[str, Any] | None = None
        self.reply: asyncio.Future[tuple[dict[str, Any], float]] | None = None
        self.want: tuple[int, asyncio.Future[float]] | None = None
        #: Bytes of every frame received.
        self.received = 0
        self.reader = asyncio.create_task(self._read())

    @property
    def view(self) -> dict[str, Any] | None:
        if self._view is None and self._push is not None:
            self._view = msgpack.unpackb(self._push)["view"]
        return self._view

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for data in self.ws:
                now = time.perf_counter()
                self.received += len(data)
                kind, version = peek(data)
                if kind == "patch" or kind == packed.TYPE:
                    # applied at once: the next one applies to its result
                    if kind == "patch":
                        changes = msgpack.unpackb(data)["changes"]
                    else:
                        changes = packed.unpack(msgpack.unpackb(data, strict_map_key=False))[2]
                    view = apply(self.view, changes)
                    self._push, self._view = None, view
                    kind = "patch"
                if kind == "state" and version is not None and version >= self.version:
                    self._push, self._view = data, None
                if kind == "state" or kind == "patch":
                    if version is not None and version > self.version:
                        self.version = version
                        want = self.want
                        if want is not None and version >= want[0] and not want[1].done():
                            want[1].set_result(now)
                elif kind != "chat":
                    msg = msgpack.unpackb(data)
                    if kind == "joined":  # a new room counts its versions afresh
                        self.version, self._push, self._view = -1, None, None
                        self.seat = msg["seat"]
                    if self.reply is not None and not self.reply.done():
                        self.reply.set_result((msg, now))

    def expect(self, version: int) -> asyncio.Future[float]:
        """A future set to the arrival time of the first state at ``version`` or later."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.want = (version, future)
        return future

    async def send(self, fields: dict[str, Any]) -> asyncio.Future[tuple[dict[str, Any], float]]:
        """Send one request; the future is set to (reply, arrival time)."""
        self.reply = asyncio.get_running_loop().create_future()
        await self.ws.send(msgpack.packb({**fields, "id": next(self.ids)}))
        return self.reply

    async def request(self, fields: dict[str, Any]) -> dict[str, Any]:
        async with asyncio.timeout(WAIT):
            reply, _ = await (await self.send(fields))
        if reply.get("type") == "error":
            raise RuntimeError(f"{fields['type']} refused: {reply.get('message')}")
        return reply

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(WAIT):
                await self.ws.close()
        self.reader.cancel()


async def open_member(url: str, gate: asyncio.Semaphore) -> Member:
    # The same client settings for both servers: no compression, the server's frame limit.
    async with gate:
        ws = await connect(url, subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
                           compression=None, max_size=ServerConfig().max_frame,
                           open_timeout=WAIT, ping_interval=None)
    return Member(ws)


# What to play -----------------------------------------------------------------------------------


def _neighbours(region: str) -> list[str]:
    return [r for r in REGIONS if r in ADJACENT[region]]


def next_action(view: dict[str, Any], seat: int, rng: random.Random) -> dict[str, Any]:
    """A legal action for ``seat`` read off a raw view: move, recruit one casteller, train
    what the wheel shows (unless it is special or maxed), then end the turn — cheap to pick,
    and it grows teams and skills as a game would."""
    me = view["players"][seat]
    done = view["done"]
    region = me["region"]
    if "move" not in done:
        targets = list(REGIONS) if region is None else _neighbours(region)
        return {"kind": "move", "region": rng.choice(targets)}
    castellers = view["regions"][region]["castellers"]
    if "recruit" not in done and castellers:
        return {"kind": "recruit", "sizes": [rng.choice(castellers)]}
    if "train" not in done:
        segments = [("region", region)]
        if view["variant"] == Variant.NORMAL:
            segments.append(("all", ALL_SEGMENT))
        for choice, segment in segments:
            tile = view["wheel"][segment]
            if tile != SPECIAL_TILE and me["skills"][tile] < MAX_RANK:
                return {"kind": "train", "choice": choice}
    return {"kind": "end_turn"}


# Rooms ------------------------------------------------------------------------------------------


@attrs.define
class Stats:
    """What the drivers measured inside the window, and what went wrong at any time."""

    window: tuple[float, float]
    rtt: list[float] = attrs.Factory(list)
    broadcast: list[float] = attrs.Factory(list)
    errors: int = 0
    timeouts: int = 0
    games: int = 0

    def record(self, start: float, rtt: float, broadcast: float) -> None:
        if self.window[0] <= start < self.window[1]:
            self.rtt.append(rtt)
            self.broadcast.append(broadcast)


class Room:
    """The members of one room (four; or one beside three ``bots`` of that level), and how
    this kind of server wants to be spoken to."""

    def __init__(self, kind: str, index: int, members: list[Member], seed: int,
                 bots: str | None = None, patches: bool = True) -> None:
        self.kind = kind
        self.patches = patches
        self.index = index
        self.members = members
        self.bots = bots
        self.rng = random.Random(seed)
        self.turns = 0  # bare: the actor turns round the members
        self.games = 0

    async def setup(self) -> None:
        if self.kind == "bare":
            for member in self.members:
                await member.request({"type": "join", "room": f"b{self.index}"})
            return
        if self.bots is not None:
            (person,) = self.members
            await person.request({"type": "create_room", "name": f"bots {self.index}",
                                  "seats": 4})
            for _ in range(3):
                await person.request({"type": "add_bot", "level": self.bots})
            await person.request({"type": "start_game"})
            async with asyncio.timeout(WAIT):
                while person.view is None or person.view["status"] != "playing":
                    await asyncio.sleep(0.005)
            return
        creator = self.members[self.games % len(self.members)]
        others = [m for m in self.members if m is not creator]
        joined = await creator.request({"type": "create_room", "name": f"load {self.index}",
                                        "seats": len(self.members)})
        for member in others:
            await member.request({"type": "join_room", "room": joined["room"]})
        await creator.request({"type": "start_game"})
        self.members.sort(key=lambda m: m.seat if m.seat is not None else -1)
        async with asyncio.timeout(WAIT):
            while not all(m.view is not None and m.view["status"] == "playing"
                          for m in self.members) or len({m.version for m in self.members}) > 1:
                await asyncio.sleep(0.005)

    async def hello(self) -> None:
        if self.kind != "bare":
            for i, member in enumerate(self.members):
                await member.request({"type": "hello", "name": f"load{self.index}-{i}",
                                      **({"patches": True, "packed": True}
                                         if self.patches else {})})

    @property
    def view(self) -> dict[str, Any]:
        view = self.members[0].view
        assert view is not None
        return view

    def next(self, fallback: bool) -> tuple[Member, dict[str, Any]]:
        """Who acts now, and with what (``end_turn`` after a refusal)."""
        view = self.view
        seat = view["turn"]
        if self.kind == "bare":
            self.turns += 1
            actor = self.members[self.turns % len(self.members)]
        else:
            actor = self.members[seat]
        fields = {"kind": "end_turn"} if fallback else next_action(view, seat, self.rng)
        return actor, {"type": "action", **fields}

    async def next_game(self) -> None:
        for member in self.members:
            await member.request({"type": "leave_room"})
        self.games += 1
        await self.setup()

    async def _my_turn(self, stop: float) -> bool:
        """Wait (for the bots) until the one member is to act or the game is over; False
        when the run is over first."""
        (person,) = self.members
        while time.perf_counter() < stop:
            view = person.view
            if view is not None and (view["status"] == "finished"
                                     or view["turn"] == person.seat):
                return True
            await asyncio.sleep(0.005)
        return False

    async def drive(self, stats: Stats, stop: float, think: float) -> None:
        fallback = False
        if think:
            await asyncio.sleep(self.rng.uniform(0, think))
        while True:
            if self.bots is not None and not await self._my_turn(stop):
                return
            if self.bots is not None and self.view["status"] == "finished":
                stats.games += 1
                await self.next_game()
                continue
            if think:
                await asyncio.sleep(think * self.rng.uniform(0.5, 1.5))
            if time.perf_counter() >= stop:
                return
            actor, fields = self.next(fallback)
            target = max(m.version for m in self.members) + 1
            arrivals = [m.expect(target) for m in self.members]
            try:
                async with asyncio.timeout(WAIT):
                    start = time.perf_counter()
                    reply, replied = await (await actor.send(fields))
                    if reply.get("type") == "error":
                        stats.errors += 1
                        fallback = True
                        for future in arrivals:
                            future.cancel()
                        continue
                    fallback = False
                    last = max(await asyncio.gather(*arrivals))
            except TimeoutError:
                stats.timeouts += 1
                return
            stats.record(start, replied - start, last - start)
            if self.kind != "bare" and self.view["status"] == "finished":
                stats.games += 1
                await self.next_game()


async def open_rooms(url: str, kind: str, rooms: int, seed: int,
                     bots: str | None = None, patches: bool = True, *,
                     first: int = 0) -> list[Room]:
    """``rooms`` rooms of four connected clients (or one, and three ``bots``), said hello,
    seated, game started; numbered from ``first`` (their numbers name them, so the shares
    of several load processes never meet in one room)."""
    gate = asyncio.Semaphore(CONNECT_AT_ONCE)
    size = 1 if bots else 4
    members = await asyncio.gather(*(open_member(url, gate) for _ in range(rooms * size)))
    out = [Room(kind, first + i, list(members[size * i: size * i + size]), seed + first + i,
                bots, patches)
           for i in range(rooms)]

    async def ready(room: Room) -> None:
        async with gate:
            await room.hello()
            await room.setup()

    await asyncio.gather(*(ready(room) for room in out))
    return out


async def close_rooms(rooms: list[Room]) -> None:
    gate = asyncio.Semaphore(CONNECT_AT_ONCE * 4)

    async def close(member: Member) -> None:
        async with gate:
            await member.close()

    await asyncio.gather(*(close(m) for room in rooms for m in room.members))


# One run ----------------------------------------------------------------------------------------


@attrs.frozen
class Result:
    kind: str
    rooms: int
    seconds: float
    think: float
    rtt: list[float]
    broadcast: list[float]
    errors: int
    timeouts: int
    games: int
    server_cpu: float  # seconds of CPU the server used inside the window
    load_cpu: float  # seconds of CPU this process used inside the window
    received: int = 0  # bytes the clients received inside the window
    rss_kib: int = 0  # the server's resident memory at the end of the window

    @property
    def rss_per_room(self) -> float:
        """The server's resident memory per room of 4 (KiB), start-up included."""
        return self.rss_kib / self.rooms if self.rooms else 0.0

    @property
    def bytes_per_action(self) -> float:
        """Bytes the members of a room received per action (replies and pushes)."""
        return self.received / self.actions if self.actions else 0.0

    @property
    def actions(self) -> int:
        return len(self.rtt)

    @property
    def throughput(self) -> float:
        return self.actions / self.seconds

    def rtt_at(self, fraction: float) -> float:
        return percentile(sorted(self.rtt), fraction)

    def broadcast_at(self, fraction: float) -> float:
        return percentile(sorted(self.broadcast), fraction)

    @property
    def cpu_per_action(self) -> float:
        return self.server_cpu / self.actions if self.actions else 0.0


async def drive(server: ServerProcess, rooms: int, *, seconds: float, warmup: float,
                think: float, seed: int, bots: str | None = None,
                patches: bool = True) -> Result:
    """Open ``rooms`` rooms on ``server``, drive them for ``warmup + seconds``, close them.
    Only actions started inside the last ``seconds`` are counted."""
    opened = await open_rooms(server.url, server.kind, rooms, seed, bots, patches)

    def received() -> int:
        return sum(m.received for room in opened for m in room.members)

    # The load generator's own collector must not set the round trips it measures (one
    # process holds every client): what the rooms opened is frozen (no whole collection
    # first: in a test's process that would cost more than the run), and collections are
    # rare while they play, for either server alike; put back after the run.
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(QUIET_COLLECTOR, *thresholds[1:])
    try:
        begin = time.perf_counter() + warmup
        stats = Stats(window=(begin, begin + seconds))
        tasks = [asyncio.create_task(room.drive(stats, begin + seconds, think))
                 for room in opened]
        await asyncio.sleep(max(0.0, begin - time.perf_counter()))
        cpu0, load0, bytes0 = cpu_seconds(server.pid), time.process_time(), received()
        await asyncio.sleep(max(0.0, begin + seconds - time.perf_counter()))
        cpu1, load1, bytes1 = cpu_seconds(server.pid), time.process_time(), received()
        rss = rss_kib(server.pid)
        async with asyncio.timeout(WAIT + think * 2 + 5):
            await asyncio.gather(*tasks)
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
        await close_rooms(opened)
    return Result(server.kind, rooms, seconds, think, stats.rtt, stats.broadcast, stats.errors,
                  stats.timeouts, stats.games, cpu1 - cpu0, load1 - load0, bytes1 - bytes0,
                  rss)


def run(kind: str, rooms: int, *, seconds: float, warmup: float, think: float,
        seed: int = 1, profile: str | None = None, bots: str | None = None,
        patches: bool = True, db: str = ":memory:", group_commit: bool = True,
        loop: str = "asyncio", bare: str = "websockets") -> Result:
    """One bounded load run against a fresh server of ``kind`` (profiled into ``profile``;
    with ``bots``, each room one client and three bots of that level; ``patches``: the
    clients ask for view patches; castell on the database ``db``, group commit on or off;
    a bare one the baseline ``bare`` names)."""
    with running(kind, rooms * 4, profile, db, group_commit, loop, bare=bare) as server:
        return asyncio.run(drive(server, rooms, seconds=seconds, warmup=warmup, think=think,
                                 seed=seed, bots=bots, patches=patches))
