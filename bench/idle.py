"""Rooms that cost nothing while they wait: many stored correspondence games held by one
server, next to the same server holding none.

    python -m bench idle [--games 10000] [--actions 12] [--connections 1000] [--settle 1.0]
                         [--server-root DIR] [--before DIR]

A SQLite file is filled with ``--games`` correspondence games through the store's own API
(:class:`~server.store.SQLiteStore`, the calls a server makes as a game goes): 2, 3 and 4
seats in turn, a person with a seat token in every seat, a turn timer of seven days, and
``--actions`` legal actions played (a few turns in); nobody is connected. Then a real
``castell-server`` (``python -m server``) is started on that file, and on an empty one, each
holding every game it has (``--max-rooms`` above the games, and no unloading of games nobody
attends: as a cluster node holds its games) and counted by :mod:`bench.loopstats`. Figures:

* **start-up**: from the process's start until ``/ready`` answers 200 (its stored games
  read back and replayed, their timers armed), beside the empty file's start;
* **memory per idle game**: the resident memory (RSS, ``/proc``, after a garbage
  collection) of the server holding the games minus that of the empty one, over the games;
* **the event loop**: its tasks and the timer handles in its queue, with every game loaded
  and with none: what the waiting games add (nothing, with one heap of deadlines: one handle
  for all of them);
* **memory per idle connection**: :mod:`bench.memory`'s measurement, castell beside the bare
  websockets server.

``--server-root`` runs the server of another checkout (its ``server`` package) instead;
``--before DIR`` runs DIR's server first and then this one on the same files, and sets them
side by side, so that a change is measured against the code before it (the store is filled
by this checkout; the connections' figure is this checkout's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import attrs

from bench import memory
from bench.common import NAMES, ROOT, machine, rss_kib, table
from server.config import ServerConfig
from server.store import ActionRecord, RoomRecord, SeatRecord, SQLiteStore, hash_token
from server.store.records import Progress
from shared import engine
from shared.actions import EndTurn
from shared.codec import pack_action

#: A correspondence game's turn: seven days (the longest a room may have).
WEEK = 7 * 24 * 3600
#: Seconds any one step (a start-up, a count) may take before the bench gives up.
WAIT = 600.0
MAX_GAMES = 50_000
#: Readings of the event loop's counts per server start (the fewest is kept).
COUNTS = 5


def token(room: str, seat: int) -> str:
    """The seat token of ``seat`` in ``room`` (what a player would come back with)."""
    return f"token-{room}-{seat}"


async def store_games(store: SQLiteStore, games: int, *, actions: int = 12, seed: int = 1,
                      turn_seconds: int = WEEK) -> list[str]:
    """``games`` correspondence games stored through ``store``'s API: 2, 3 and 4 seats in
    turn, people in every seat (seat ``s`` of room ``r`` holds :func:`token` (r, s)), the
    turn timer ``turn_seconds``, and ``actions`` legal actions played (random ones, an end
    of the turn three times in ten). Returns the room ids."""
    ids = []
    now = time.time() - 3600.0
    for n in range(games):
        room = f"r{n:08x}"
        seats = 2 + n % 3
        game_seed = seed * 1_000_003 + n
        rng = random.Random(game_seed)
        state = engine.new_game(list(NAMES[:seats]), "normal", game_seed)
        started = 1 + seats + 1  # created, each seat taken, started
        await store.create_room(RoomRecord(
            room, f"Correspondence {n}", seats, "normal", turn_seconds, False, None,
            game_seed, status="playing", version=started, created_at=now + n * 1e-3,
            started_at=now + n * 1e-3, started_version=started))
        for seat in range(seats):
            await store.put_seat(SeatRecord(room, seat, NAMES[seat],
                                            token_hash=hash_token(token(room, seat))))
        version = started
        for seq in range(actions):
            if state.over or state.turn is None:
                break
            seat = state.turn
            legal = engine.legal_actions(state, seat)
            ends = [a for a in legal if isinstance(a, EndTurn)]
            action = ends[0] if ends and rng.random() < 0.3 else rng.choice(legal)
            state, _ = engine.apply(state, seat, action)
            version += 1
            await store.append_action(
                ActionRecord(room, seq, seat, pack_action(action), now + n * 1e-3, version),
                progress=Progress.of(state))
        ids.append(room)
    return ids


async def fill(path: Path, games: int, actions: int) -> float:
    """Fill the SQLite file ``path`` with ``games`` stored games; the seconds it took."""
    began = time.perf_counter()
    # On the event loop, without waiting for the disk at each commit: the store's own API,
    # written as fast as it goes (the server reads the file with its own settings).
    async with SQLiteStore(str(path), synchronous="NORMAL", thread=False) as store:
        await store_games(store, games, actions=actions)
    return time.perf_counter() - began


@attrs.frozen
class Held:
    """What one server start measured."""

    startup: float  # seconds from the process's start until /ready answered 200
    rss_kib: int  # after a garbage collection, all the games loaded
    tasks: int
    handles: int
    playing: int  # games in the server's memory, by its metrics
    back: float | None = None  # seconds a player coming back waited for their game's view


def _command(db: Path, games: int, out: Path, holding: bool) -> list[str]:
    """The server's command line: holding every game it has (``holding``: no unloading of
    a game nobody attends), or with a lone server's own residency (the defaults)."""
    limit = str(max(games + 100, 2000))
    held = ["--room-unattended-after", "0", "--room-unload-after", "0"] if holding else []
    return [sys.executable, str(ROOT / "bench" / "loopstats.py"), str(out), "-m", "server",
            "--port", "0", "--db", str(db), "--admin-socket", "off", "--log-level", "warning",
            "--max-rooms", limit, *held, "--bot-workers", "0"]


@contextmanager
def _started(root: Path, db: Path, games: int, out: Path, holding: bool,
             ) -> Iterator[tuple[subprocess.Popen[str], str, float]]:
    """A server on ``db`` (the checkout ``root``'s), its URL and its start-up time."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    began = time.perf_counter()
    proc = subprocess.Popen(_command(db, games, out, holding), cwd=root, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "ws://" not in line:
            raise RuntimeError(f"the server did not start: {line!r}")
        url = line[line.index("ws://"):].split()[0]
        http = "http" + url[2:]  # ws://HOST:PORT → http://HOST:PORT
        deadline = began + WAIT
        while True:
            with suppress(OSError), urllib.request.urlopen(f"{http}/ready", timeout=5) as answer:
                if answer.status == 200:
                    break
            if time.perf_counter() > deadline:
                raise RuntimeError("the server was not ready in time")
            time.sleep(0.01)
        yield proc, url, time.perf_counter() - began
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _count(proc: subprocess.Popen[str], out: Path, answered: int) -> dict[str, int]:
    """Ask the server's loop for its counts (SIGUSR1, :mod:`bench.loopstats`), and wait for
    its answer number ``answered``."""
    proc.send_signal(signal.SIGUSR1)
    deadline = time.perf_counter() + WAIT
    while time.perf_counter() < deadline:
        with suppress(OSError, ValueError):
            got = json.loads(out.read_text())
            if got["answered"] >= answered:
                return {"tasks": got["tasks"], "handles": got["handles"]}
        time.sleep(0.01)
    raise RuntimeError("the server's loop did not answer its count")


def _playing(url: str) -> int:
    """Games in the server's memory, as its ``/metrics`` say."""
    with urllib.request.urlopen(f"http{url[2:]}/metrics", timeout=30) as answer:
        text = answer.read().decode()
    for line in text.splitlines():
        if line.startswith('castell_rooms{status="playing"}'):
            return int(float(line.split()[-1]))
    return 0


async def _come_back(url: str, room: str) -> float:
    """Seconds from a player's ``join_room`` with their seat token to their game's view."""
    from client.net.net import GameClient
    from shared import messages as m

    client = await GameClient.connect(url)
    try:
        await client.hello("Anna")
        began = time.perf_counter()
        await client.request(m.JoinRoom, room=room, token=token(room, 0))
        await client.wait_state(timeout=WAIT)
        return time.perf_counter() - began
    finally:
        await client.close()


def hold(root: Path, db: Path, games: int, settle: float, *, holding: bool = True,
         come_back: str | None = None) -> Held:
    """Start a server on ``db`` and measure it once it is ready (see the module docstring);
    then, with ``come_back``, a player comes back to that room (:attr:`Held.back`)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "loop.json"
        with _started(root, db, games, out, holding) as (proc, url, startup):
            time.sleep(settle)
            _count(proc, out, 1)  # a first collection: what start-up left is gone
            time.sleep(settle)
            # the fewest of a few readings: a server's own loops wake now and then (a
            # sleep's timer is not there while its loop runs), the rooms' cost stays
            readings = []
            for answered in range(2, 2 + COUNTS):
                readings.append(_count(proc, out, answered))
                time.sleep(0.1)
            counted = {key: min(r[key] for r in readings) for key in ("tasks", "handles")}
            rss = rss_kib(proc.pid)
            playing = _playing(url)
            back = asyncio.run(_come_back(url, come_back)) if come_back else None
    return Held(startup, rss, counted["tasks"], counted["handles"], playing, back)


def report(games: int, base: Held, held: Held) -> str:
    """The table of one server's two starts, on the empty file and on the games'."""
    per_game = (held.rss_kib - base.rss_kib) / games
    rows = [["", "no game", f"{games:,} games", "added", "per game"],
            ["start-up until /ready", f"{base.startup:.2f} s", f"{held.startup:.2f} s",
             f"{held.startup - base.startup:.2f} s",
             f"{(held.startup - base.startup) / games * 1e3:.2f} ms"],
            ["RSS after gc", f"{base.rss_kib / 1024:.1f} MiB", f"{held.rss_kib / 1024:.1f} MiB",
             f"{(held.rss_kib - base.rss_kib) / 1024:.1f} MiB", f"{per_game:.1f} KiB"],
            ["event loop tasks", str(base.tasks), str(held.tasks),
             str(held.tasks - base.tasks), f"{(held.tasks - base.tasks) / games:.3f}"],
            ["timer handles", str(base.handles), str(held.handles),
             str(held.handles - base.handles), f"{(held.handles - base.handles) / games:.3f}"]]
    return "\n".join([
        table(rows),
        f"per idle game: {per_game:.1f} KiB; the event loop: {held.tasks - base.tasks:+d} "
        f"tasks, {held.handles - base.handles:+d} timer handles"])


def measure(root: Path, empty: Path, full: Path, games: int, settle: float,
            ) -> tuple[Held, Held, Held]:
    """The server of checkout ``root`` started on the empty file, then on the games' holding
    them all, then on the games' with a lone server's own residency (a player then comes
    back to one of them)."""
    base = hold(root, empty, games, settle)
    held = hold(root, full, games, settle)
    if held.playing != games:
        raise RuntimeError(f"the server held {held.playing} games of {games}")
    lone = hold(root, full, games, settle, holding=False, come_back=f"r{games // 2:08x}")
    return base, held, lone


def lone_report(games: int, base: Held, lone: Held) -> str:
    return (f"a lone server's own residency (unloading a game nobody is in after "
            f"{ServerConfig().room_unattended_after:g} s): start-up until /ready "
            f"{lone.startup:.2f} s (no game: {base.startup:.2f} s), {lone.playing:,} of the "
            f"{games:,} games read into memory, RSS {lone.rss_kib / 1024:.1f} MiB; a player "
            f"coming back to one waited {(lone.back or 0.0) * 1e3:.1f} ms for its view "
            f"(joined, loaded and replayed)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench idle",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000,
                        help="stored correspondence games (2-4 seats, 7-day turn timers)")
    parser.add_argument("--actions", type=int, default=12,
                        help="actions played in each stored game")
    parser.add_argument("--connections", type=int, default=1000,
                        help="idle connections of the per-connection figure (0: not measured)")
    parser.add_argument("--settle", type=float, default=1.0,
                        help="seconds to wait before each reading")
    parser.add_argument("--server-root", default=None,
                        help="a checkout whose server to run (default: this one)")
    parser.add_argument("--before", default=None, metavar="DIR",
                        help="also run the server of the checkout DIR on the same files, "
                             "first, and set the two side by side (the code before a change)")
    args = parser.parse_args(argv)
    games = max(1, min(args.games, MAX_GAMES))
    actions = max(0, min(args.actions, 200))
    settle = max(0.0, min(args.settle, 30.0))
    root = Path(args.server_root).resolve() if args.server_root else ROOT
    before = Path(args.before).resolve() if args.before else None
    print(f"idle rooms — {machine()}")
    with tempfile.TemporaryDirectory() as folder:
        empty, full = Path(folder) / "empty.sqlite3", Path(folder) / "games.sqlite3"
        asyncio.run(fill(empty, 0, actions))
        took = asyncio.run(fill(full, games, actions))
        print(f"{games:,} correspondence games stored through the store's API in {took:.1f} s "
              f"({actions} actions each, 2-4 seats, {WEEK // 86400}-day turn timers)")
        runs: list[tuple[str, Path]] = []
        if before is not None:
            runs.append((f"before ({before.name})", before))
        runs.append(("this checkout" if root == ROOT else root.name, root))
        results = {}
        for name, where in runs:
            print(f"\n(load average now {os.getloadavg()[0]:.1f})")
            base, held, lone = results[name] = measure(where, empty, full, games, settle)
            print(f"{name}: one server holding {games:,} idle correspondence games (all in "
                  f"memory, as a cluster node holds its games), beside the same server "
                  f"holding none")
            print(report(games, base, held))
            print(lone_report(games, base, lone))
    if before is not None:
        (was_base, was, was_lone), (now_base, now, now_lone) = results.values()
        rows = [["", "before", "after"]]
        rows.append(["per idle game", f"{(was.rss_kib - was_base.rss_kib) / games:.1f} KiB",
                     f"{(now.rss_kib - now_base.rss_kib) / games:.1f} KiB"])
        rows.append(["start-up, the games added", f"{was.startup - was_base.startup:.2f} s",
                     f"{now.startup - now_base.startup:.2f} s"])
        rows.append([f"tasks at {games:,} games (none: {was_base.tasks} / {now_base.tasks})",
                     str(was.tasks), str(now.tasks)])
        rows.append([f"timer handles at {games:,} games (none: {was_base.handles} / "
                     f"{now_base.handles})", str(was.handles), str(now.handles)])
        rows.append(["lone server: start-up", f"{was_lone.startup:.2f} s",
                     f"{now_lone.startup:.2f} s"])
        rows.append(["lone server: games read at start", f"{was_lone.playing:,}",
                     f"{now_lone.playing:,}"])
        print("\nbefore → after")
        print(table(rows))
    if args.connections:
        connections = max(4, min(args.connections, 5000))
        print(f"\n(load average now {os.getloadavg()[0]:.1f})")
        figures = {kind: memory.measure(kind, connections, settle) for kind in ("bare", "castell")}
        per = {kind: (after - b) * 1024 / n for kind, (b, after, n) in figures.items()}
        rows = [["", "RSS before", "RSS after", "connections", "KiB per connection"]]
        for kind, (b, after, n) in figures.items():
            rows.append([kind, f"{b / 1024:.1f} MiB", f"{after / 1024:.1f} MiB", str(n),
                         f"{per[kind] / 1024:.1f}"])
        print("memory per idle connection (bench.memory, this checkout: a seat each in a "
              "started room of 4)")
        print(table(rows))
        ratio = per["castell"] / per["bare"] if per["bare"] > 0 else float("nan")
        print(f"per idle connection: castell {per['castell'] / 1024:.1f} KiB, "
              f"castell ÷ bare: {ratio:.2f}×")


if __name__ == "__main__":
    main()
