"""What the cluster adds to an action's round trip: a lone server on its SQLite file, the same
server on PostgreSQL, and a cluster node (PostgreSQL + Redis), driven by the same script.

    python -m bench cluster [--count 300] [--dir DIR] [--postgres URL] [--redis URL]

Each setup is a real ``python -m server`` process on 127.0.0.1 with a two-seat room of two
players (clients in this process); the player to act sends an action (:func:`bench.load.
next_action`: move, recruit, train, end the turn) and the time from send to ``ok`` is its
round trip — an action durable in the store, then acknowledged. A finished game is replaced
by a new room. The setups take turns in rounds, so that drift in the machine's load hits them
alike. Figures: mean, p50 and p99 per action, and each setup's mean over the SQLite one.

* ``sqlite`` — ``--db FILE`` (the default setup: fsync per action, ``synchronous=FULL``);
* ``postgresql`` — ``--db postgresql://…`` alone: what the database itself costs;
* ``cluster node`` — the same with ``--redis``: what the lease and the room list add (the
  summary rewrite after each change runs beside the action, not in its path).

The PostgreSQL schema and the Redis keys it makes are its own and are removed at the end.
As with ``bench.store``, give ``--dir`` a folder on the disk a server would use.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.common import ROOT, machine, percentile, table
from bench.load import next_action
from client.net.net import GameClient
from shared import messages as m

ROUNDS = 10
WARMUP = 4
POSTGRES = os.environ.get("CASTELL_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
REDIS = os.environ.get("CASTELL_TEST_REDIS", "redis://127.0.0.1:6379/0")


@contextlib.contextmanager
def servers(*setups: tuple[str, ...]) -> Iterator[list[str]]:
    """``python -m server ARGS`` for each ARGS of ``setups``, started side by side on free
    ports; yields their urls in that order, stops them all on the way out."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs: list[subprocess.Popen[str]] = []
    try:
        for args in setups:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "server", "--port", "0", "--rate", "100000",
                 "--address-rate", "100000", "--address-burst", "100000",
                 "--log-level", "warning", *args],
                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                text=True))
        urls = []
        for proc, args in zip(procs, setups, strict=True):
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if "ws://" not in line:
                raise RuntimeError(f"the server {' '.join(args)} did not start")
            urls.append(line[line.index("ws://"):].split()[0])  # the address alone
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class Table:
    """One server's room of two players, replaced when its game is over."""

    def __init__(self, url: str, rng: random.Random) -> None:
        self.url = url
        self.rng = rng
        self.clients: list[GameClient] = []

    async def open(self) -> None:
        await self.close()
        anna = await GameClient.connect(self.url)
        await anna.hello("Anna")
        made = await anna.request(m.CreateRoom, name="Bench", seats=2)
        biel = await GameClient.connect(self.url)
        await biel.hello("Biel")
        await biel.request(m.JoinRoom, room=made.room)
        await anna.request(m.StartGame)
        for client in (anna, biel):
            await client.wait_state(lambda p: p.view["status"] == "playing")
        self.clients = [anna, biel]

    async def act(self) -> float:
        """One action's round trip, in seconds (after the pushes it caused are in)."""
        view = self.clients[0].state.view
        if view["status"] != "playing":
            await self.open()
            view = self.clients[0].state.view
        seat = view["turn"]
        # Picked off the clock: only the way to the server and back is timed.
        fields = next_action(view, seat, self.rng)
        request = m.from_wire({"type": "action", "id": 1, **fields}, sender="client")
        assert isinstance(request, m.ActionRequest)
        action = request.action
        start = time.perf_counter()
        version = await self.clients[seat].act(action)
        took = time.perf_counter() - start
        for client in self.clients:
            await client.wait_state(lambda p, v=version: p.version >= v)
        return took

    async def close(self) -> None:
        for client in self.clients:
            with contextlib.suppress(Exception):
                await client.close()
        self.clients = []


async def drop_schema(url: str, schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url, timeout=10)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


async def drop_keys(url: str, prefix: str) -> None:
    import redis.asyncio as redis

    client = redis.Redis.from_url(url)
    try:
        keys = [key async for key in client.scan_iter(match=prefix + "*", count=500)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


async def measure(urls: dict[str, str], count: int) -> dict[str, list[float]]:
    tables = {name: Table(url, random.Random(1)) for name, url in urls.items()}
    times: dict[str, list[float]] = {name: [] for name in tables}
    try:
        for table_ in tables.values():
            await table_.open()
            for _ in range(WARMUP):
                await table_.act()
        per_round = max(1, count // ROUNDS)
        for n in range(ROUNDS):
            names = list(tables)
            for name in names[n % len(names):] + names[: n % len(names)]:
                for _ in range(per_round):
                    times[name].append(await tables[name].act())
    finally:
        for table_ in tables.values():
            await table_.close()
    return times


def report(times: dict[str, list[float]]) -> str:
    base = statistics.fmean(times["sqlite"])
    rows = [["setup", "mean", "p50", "p99", "× sqlite"]]
    for name, values in times.items():
        ordered = sorted(values)
        mean = statistics.fmean(ordered)
        rows.append([name, f"{mean * 1e3:.2f} ms", f"{percentile(ordered, 0.5) * 1e3:.2f} ms",
                     f"{percentile(ordered, 0.99) * 1e3:.2f} ms", f"{mean / base:.2f}×"])
    return table(rows)


async def run(count: int, folder: Path, postgres: str, redis_url: str) -> str:
    schema = "bench_" + secrets.token_hex(4)
    prefix = f"castell-bench-{secrets.token_hex(4)}:"
    lone = f"{postgres}{'&' if '?' in postgres else '?'}schema={schema}_lone"
    shared = f"{postgres}{'&' if '?' in postgres else '?'}schema={schema}_node"
    try:
        with servers(("--db", str(folder / "bench.sqlite3")), ("--db", lone),
                     ("--db", shared, "--redis", redis_url, "--redis-prefix", prefix),
                     ) as (sqlite, alone, node):
            times = await measure({"sqlite": sqlite, "postgresql": alone,
                                   "cluster node": node}, count)
    finally:
        for suffix in ("_lone", "_node"):
            await drop_schema(postgres, schema + suffix)
        await drop_keys(redis_url, prefix)
    return report(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench cluster", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=300, help="actions per setup")
    parser.add_argument("--dir", type=Path, default=None,
                        help="folder for the SQLite file (default: a temporary one)")
    parser.add_argument("--postgres", default=POSTGRES, help="PostgreSQL to use")
    parser.add_argument("--redis", default=REDIS, help="Redis to use")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        out = asyncio.run(run(max(1, args.count), Path(folder), args.postgres, args.redis))
    print(f"action round trip (send → ok), {max(1, args.count)} actions per setup, "
          f"{ROUNDS} interleaved rounds")
    print(machine())
    print(out)


if __name__ == "__main__":
    main()
