"""The web pages under load: pages per second of ``/`` and of a live game's page with many
rooms, and what fetching pages costs the players' round trip.

    python -m bench web [--rooms 500] [--played 40] [--seconds 5] [--fetchers 8]
                        [--page-rate 100] [--think 0.5] [--repeat 3]

A real ``python -m server`` (in its own process, web pages on, every rate limit lifted) gets
``--rooms`` rooms of four clients each, every game started, from this process. The pages are
fetched over 127.0.0.1 from a process of their own (browsers are not the players' machines:
this one's event loop must measure round trips, not wait behind the fetches), each request a
new connection as a browser's is:

* **pages/s**: ``--fetchers`` fetchers, each asking for the next page as soon as the last
  came (a closed loop), for ``--seconds``: the front page ``/``, then a live game's page
  ``/rooms/ID`` of a room drawn at random among them all; with the server's CPU per page
  (from ``/proc``). Pages are cached (``/`` two seconds, a game's page by its version), so
  this is what serving them costs once made, the way they are served;
* **the players' round trip**: ``--played`` of the rooms play (an action every 0.5–1.5 ×
  ``--think`` seconds, as :mod:`bench.load` drives rooms), for ``--seconds`` a run, in four
  runs: with no page fetched (the baseline); while ``/health`` is fetched at ``--page-rate``
  a second (what a plain HTTP request costs the server whatever it answers: a connection
  of websockets' made and let go, no page made); while pages are fetched at that rate (a
  live game's page four times in five, ``/`` the fifth: 500 spectators in browsers, each
  reloading every five seconds, ask 100 a second); and while the fetchers fetch pages as
  fast as they can. The four runs are repeated ``--repeat`` times, interleaved, and each
  case's round trips pooled (a shared machine's load drifts: interleaving spreads it over
  every case alike). Figures: the round trip's p50 and p99 (action sent → its ``ok``), and
  their ratio to the baseline's (the target: no worse than 1.2× at the paced rate).

The p99 of every case with HTTP requests is at the mercy of the collector's full
collections: each request leaves a connection's worth of objects (websockets', with their
cycles) for it, and a full collection walks every object of a server holding thousands of
connections (``/health`` shows the same).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.common import ROOT, cpu_seconds, machine, percentile, ratio, table
from bench.load import Room, Stats, open_rooms, running

#: Flags of the server under test: the web pages' rate limit lifted (one address asks all).
WEB_FLAGS = ("--web", "on", "--web-rate", "1000000", "--web-burst", "1000000")
#: Fetches in flight at once at a paced rate, at most (a slow answer must not pile up more).
IN_FLIGHT = 64
MAX_ROOMS = 2000
#: Seconds a fetcher process is given to start before its run begins (``--startup``).
STARTUP = 1.0


async def get(host: str, port: int, path: str) -> int:
    """One page, as a browser asks it (a connection of its own): the status (0: failed)."""
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
                     .encode())
        data = await reader.read()
        writer.close()
    except OSError:
        return 0
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0


def _paths(which: str, ids: list[str], rng: random.Random) -> Callable[[], str]:
    """What a fetcher asks for: ``home`` (``/``), ``live`` (a room drawn at random) or
    ``mixed`` (a room four times in five, ``/`` the fifth)."""
    def live() -> str:
        return f"/rooms/{rng.choice(ids)}"

    if which == "each":  # every room once, in turn
        rooms = iter(ids * 1000)
        return lambda: f"/rooms/{next(rooms)}"
    if which == "home":
        return lambda: "/"
    if which == "health":
        return lambda: "/health"
    if which == "live":
        return live
    return lambda: "/" if rng.random() < 0.2 else live()


async def closed_loop(host: str, port: int, paths: Callable[[], str], fetchers: int,
                      stop: float, count: int | None = None) -> tuple[int, int]:
    """``fetchers`` fetching one page after another until ``stop`` (Unix time), or until
    ``count`` pages were asked for: pages answered 200, and any other answer."""
    ok = bad = 0
    asked = 0

    async def fetcher() -> None:
        nonlocal ok, bad, asked
        while time.time() < stop and (count is None or asked < count):
            asked += 1
            if await get(host, port, paths()) == 200:
                ok += 1
            else:
                bad += 1

    await asyncio.gather(*(fetcher() for _ in range(fetchers)))
    return ok, bad


async def paced(host: str, port: int, paths: Callable[[], str], rate: float,
                stop: float) -> tuple[int, int]:
    """Pages fetched at ``rate`` a second until ``stop`` (Unix time; at most
    :data:`IN_FLIGHT` at once): answered 200, and not."""
    gate = asyncio.Semaphore(IN_FLIGHT)
    ok = bad = 0
    tasks: set[asyncio.Task[None]] = set()

    async def one(path: str) -> None:
        nonlocal ok, bad
        async with gate:
            if await get(host, port, path) == 200:
                ok += 1
            else:
                bad += 1

    start = time.time()
    n = 0
    while (now := time.time()) < stop:
        due = start + n / rate
        if due > now:
            await asyncio.sleep(due - now)
            continue
        n += 1
        task = asyncio.create_task(one(paths()))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks)
    return ok, bad


async def fetch_load(order: dict[str, Any]) -> dict[str, Any]:
    """The browsers' side (run in its own process, :func:`fetching`): wait for the order's
    ``start`` (Unix time), then fetch as it says until ``start + seconds``."""
    host, port = _where(order["url"])
    paths = _paths(order["paths"], order["ids"], random.Random(order["seed"]))
    await asyncio.sleep(max(0.0, order["start"] - time.time()))
    stop = order["start"] + order["seconds"]
    if order["rate"]:
        ok, bad = await paced(host, port, paths, order["rate"], stop)
    else:
        ok, bad = await closed_loop(host, port, paths, order["fetchers"], stop,
                                    order.get("count"))
    return {"ok": ok, "bad": bad, "seconds": time.time() - order["start"]}


async def fetching(order: dict[str, Any]) -> dict[str, Any]:
    """:func:`fetch_load` in a process of its own (``python -m bench.web --fetch``, the
    order on its stdin): what it fetched."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.web", "--fetch", cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate(json.dumps(order).encode())
    if proc.returncode != 0:
        raise RuntimeError(f"the page fetcher failed (exit {proc.returncode})")
    result: dict[str, Any] = json.loads(out)
    return result


def _where(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("ws://").rsplit(":", 1)
    return host, int(port)


async def round_trips(rooms: list[Room], think: float, seconds: float,
                      order: dict[str, Any] | None) -> tuple[Stats, int]:
    """The played rooms' round trips over ``seconds``, while a fetcher process fetches
    pages as ``order`` says (None: none); the pages it had answered 200."""
    begin = time.time() + (order["startup"] if order is not None else 0.0)
    load = fetching({**order, "start": begin, "seconds": seconds}) \
        if order is not None else None
    task = asyncio.ensure_future(load) if load is not None else None
    await asyncio.sleep(max(0.0, begin - time.time()))
    start = time.perf_counter()
    stop = start + seconds
    stats = Stats(window=(start + min(1.0, seconds / 4), stop))
    await asyncio.gather(*(room.drive(stats, stop, think) for room in rooms))
    pages = (await task)["ok"] if task is not None else 0
    return stats, pages


def _rtt(stats: Stats) -> tuple[float, float]:
    ordered = sorted(stats.rtt)
    return percentile(ordered, 0.5), percentile(ordered, 0.99)


async def measure(url: str, pid: int, args: argparse.Namespace) -> None:
    rooms = await open_rooms(url, "castell", args.rooms, args.seed)
    ids = [room.view["room"] for room in rooms]
    base = {"url": url, "ids": ids, "seed": args.seed, "fetchers": args.fetchers, "rate": 0,
            "startup": args.startup}
    print(f"{len(rooms)} rooms of four players, every game started; pages fetched from a "
          "process of their own")
    rows = [["page", "pages/s", "server CPU/page", "not 200"]]
    runs = (("/", "home", None), ("/rooms/ID, each room's first (made)", "each", len(ids)),
            ("/rooms/ID (live game, made)", "live", None))
    for name, which, count in runs:
        order = {**base, "paths": which, "seconds": min(1.0, args.seconds)}
        if count is None:
            await fetching({**order, "start": time.time() + args.startup})  # warm
        cpu0 = cpu_seconds(pid)
        got = await fetching({**order, "seconds": args.seconds if count is None else 600.0,
                              "count": count, "start": time.time() + args.startup})
        cpu = cpu_seconds(pid) - cpu0
        rows.append([name, f"{got['ok'] / max(got['seconds'], 1e-3):,.0f}",
                     f"{cpu / max(got['ok'], 1) * 1e3:.2f}ms", str(got["bad"])])
    print(f"pages/s: {args.fetchers} fetchers in a closed loop, {args.seconds:g} s each (each "
          "room's first page: until every room's is made)")
    print(table(rows))

    played = rooms[:args.played]
    mixed = {**base, "paths": "mixed"}
    cases: dict[str, dict[str, Any] | None] = {
        "none (baseline)": None,
        f"{args.page_rate:g}/s of /health, no page made": {**base, "paths": "health",
                                                           "rate": args.page_rate},
        f"{args.page_rate:g}/s pages, paced": {**mixed, "rate": args.page_rate},
        f"pages, {args.fetchers} fetchers flat out": mixed,
    }
    pooled = {name: Stats(window=(0.0, 0.0)) for name in cases}
    fetched = dict.fromkeys(cases, 0)
    for _ in range(args.repeat):
        for name, asked in cases.items():
            stats, pages = await round_trips(played, args.think, args.seconds, asked)
            pooled[name].rtt += stats.rtt
            pooled[name].errors += stats.errors
            pooled[name].timeouts += stats.timeouts
            fetched[name] += pages
    base50, base99 = _rtt(pooled["none (baseline)"])
    print(f"the players' round trip: {len(played)} rooms playing (think {args.think:g} s), "
          f"{args.repeat} × {args.seconds:g} s a case, interleaved")
    rows = [["requests meanwhile", "answered/s", "actions", "rtt p50", "rtt p99",
             "p50 ÷ none", "p99 ÷ none"]]
    for name, stats in pooled.items():
        p50, p99 = _rtt(stats)
        rate = fetched[name] / (args.seconds * args.repeat)
        rows.append([name, f"{rate:,.0f}", str(len(stats.rtt)), f"{p50 * 1e3:.2f}ms",
                     f"{p99 * 1e3:.2f}ms", ratio(p50, base50), ratio(p99, base99)])
    print(table(rows))
    refused = {name: (stats.errors, stats.timeouts) for name, stats in pooled.items()}
    print(f"actions refused, timed out: {list(refused.values())}")
    for room in rooms:
        for member in room.members:
            await member.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench web",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=500, help="rooms, each of four players")
    parser.add_argument("--played", type=int, default=40,
                        help="of them, the rooms that play during the round-trip runs")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each run")
    parser.add_argument("--fetchers", type=int, default=8,
                        help="fetchers of the closed-loop runs")
    parser.add_argument("--page-rate", type=float, default=100.0,
                        help="pages a second of the paced run")
    parser.add_argument("--think", type=float, default=0.5,
                        help="seconds between two actions of a played room (0.5–1.5×)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="times the four round-trip runs are made, interleaved")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--startup", type=float, default=STARTUP,
                        help="seconds a fetcher process is given to start before its run (one "
                             "that starts later loses that time from its run)")
    parser.add_argument("--fetch", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.fetch:  # the fetcher process: its order on stdin, its counts on stdout
        print(json.dumps(asyncio.run(fetch_load(json.loads(sys.stdin.read())))))
        return
    args.rooms = max(1, min(args.rooms, MAX_ROOMS))
    args.played = max(1, min(args.played, args.rooms))
    args.seconds = max(0.1, min(args.seconds, 120.0))
    args.fetchers = max(1, min(args.fetchers, 64))
    args.page_rate = max(1.0, min(args.page_rate, 5000.0))
    args.repeat = max(1, min(args.repeat, 20))
    print(f"web pages at {args.rooms} rooms — {machine()}")
    with running("castell", args.rooms * 4 + args.fetchers * 4 + IN_FLIGHT,
                 extra=WEB_FLAGS) as server:
        asyncio.run(measure(server.url, server.pid, args))


if __name__ == "__main__":
    main()
