"""The web pages under load: pages per second of ``/`` and of a live game's page with many
rooms, and what fetching pages costs the players' round trip.

    python -m bench web [--rooms 500] [--played 20] [--seconds 5] [--fetchers 8]
                        [--page-rate 100] [--think 0.5]

A real ``python -m server`` (in its own process, web pages on, every rate limit lifted) gets
``--rooms`` rooms of four clients each, every game started. Then, from this process over
127.0.0.1, each request a new connection as a browser's is:

* **pages/s**: ``--fetchers`` fetchers, each asking for the next page as soon as the last
  came (a closed loop), for ``--seconds``: the front page ``/``, then a live game's page
  ``/rooms/ID`` of a room drawn at random among them all; with the server's CPU per page
  (from ``/proc``). Pages are cached (``/`` two seconds, a game's page by its version), so
  this is what serving them costs once made, the way they are served;
* **the players' round trip**: ``--played`` of the rooms play (an action every 0.5–1.5 ×
  ``--think`` seconds, as :mod:`bench.load` drives rooms), for ``--seconds``: first with no
  page fetched (the baseline), then while pages are fetched at ``--page-rate`` pages a
  second (a live game's page four times in five, ``/`` the fifth: 500 spectators in
  browsers, each reloading every five seconds, ask 100 a second), then while the fetchers
  fetch as fast as they can. Figures: the round trip's p50 and p99 (action sent → its
  ``ok``), and its ratio to the baseline (the target: no worse than 1.2× at the paced
  rate).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable

from bench.common import cpu_seconds, machine, percentile, ratio, table
from bench.load import Room, Stats, open_rooms, running

#: Flags of the server under test: the web pages' rate limit lifted (one address asks all).
WEB_FLAGS = ("--web", "on", "--web-rate", "1000000", "--web-burst", "1000000")
#: Fetches in flight at once at a paced rate, at most (a slow answer must not pile up more).
IN_FLIGHT = 64
MAX_ROOMS = 2000


async def get(host: str, port: int, path: str) -> int:
    """One page, as a browser asks it (a connection of its own): the status."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
                 .encode())
    data = await reader.read()
    writer.close()
    return int(data.split(b" ", 2)[1])


def _where(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("ws://").rsplit(":", 1)
    return host, int(port)


async def closed_loop(url: str, paths: Callable[[], str], fetchers: int,
                      seconds: float) -> tuple[int, int]:
    """``fetchers`` fetching one page after another for ``seconds``: pages answered 200,
    and any other answer."""
    host, port = _where(url)
    stop = time.perf_counter() + seconds
    ok = bad = 0

    async def fetcher() -> None:
        nonlocal ok, bad
        while time.perf_counter() < stop:
            try:
                status = await get(host, port, paths())
            except OSError:
                status = 0
            if status == 200:
                ok += 1
            else:
                bad += 1

    await asyncio.gather(*(fetcher() for _ in range(fetchers)))
    return ok, bad


async def paced(url: str, paths: Callable[[], str], rate: float, stop: float) -> int:
    """Pages fetched at ``rate`` a second until ``stop`` (at most :data:`IN_FLIGHT` at
    once): how many were answered 200."""
    host, port = _where(url)
    gate = asyncio.Semaphore(IN_FLIGHT)
    ok = 0
    tasks: set[asyncio.Task[None]] = set()

    async def one(path: str) -> None:
        nonlocal ok
        async with gate:
            with contextlib.suppress(OSError):
                ok += await get(host, port, path) == 200

    start = time.perf_counter()
    n = 0
    while (now := time.perf_counter()) < stop:
        due = start + n / rate
        if due > now:
            await asyncio.sleep(due - now)
            continue
        n += 1
        task = asyncio.create_task(one(paths()))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks)
    return ok


async def round_trips(rooms: list[Room], think: float, seconds: float,
                      load: Callable[[float], Awaitable[int]] | None) -> tuple[Stats, int]:
    """The played rooms' round trips over ``seconds``, while ``load(stop)`` fetches pages
    (None: none); the pages it fetched."""
    start = time.perf_counter()
    stop = start + seconds
    stats = Stats(window=(start + min(1.0, seconds / 4), stop))
    drives = [room.drive(stats, stop, think) for room in rooms]
    results = await asyncio.gather(*drives, *([load(stop)] if load is not None else []))
    pages = results[-1] if load is not None else 0
    return stats, int(pages)


def _rtt(stats: Stats) -> tuple[float, float]:
    ordered = sorted(stats.rtt)
    return percentile(ordered, 0.5), percentile(ordered, 0.99)


async def measure(url: str, pid: int, args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    rooms = await open_rooms(url, "castell", args.rooms, args.seed)
    ids = [room.view["room"] for room in rooms]

    def live() -> str:
        return f"/rooms/{rng.choice(ids)}"

    def mixed() -> str:
        return "/" if rng.random() < 0.2 else live()

    print(f"{len(rooms)} rooms of four players, every game started")
    rows = [["page", "pages/s", "server CPU/page", "not 200"]]
    for name, paths in (("/", lambda: "/"), ("/rooms/ID (live game)", live)):
        await closed_loop(url, paths, args.fetchers, min(1.0, args.seconds))  # warm
        cpu0 = cpu_seconds(pid)
        ok, bad = await closed_loop(url, paths, args.fetchers, args.seconds)
        cpu = cpu_seconds(pid) - cpu0
        rows.append([name, f"{ok / args.seconds:,.0f}", f"{cpu / max(ok, 1) * 1e3:.2f}ms",
                     str(bad)])
    print(f"pages/s: {args.fetchers} fetchers in a closed loop, {args.seconds:g} s each")
    print(table(rows))

    played = rooms[:args.played]
    baseline, _ = await round_trips(played, args.think, args.seconds, None)
    with_paced, pages = await round_trips(
        played, args.think, args.seconds,
        lambda stop: paced(url, mixed, args.page_rate, stop))

    async def flat_out(stop: float) -> int:
        ok, _ = await closed_loop(url, mixed, args.fetchers, stop - time.perf_counter())
        return ok

    with_flood, flooded = await round_trips(played, args.think, args.seconds, flat_out)
    base50, base99 = _rtt(baseline)
    print(f"the players' round trip: {len(played)} rooms playing (think {args.think:g} s), "
          f"{args.seconds:g} s a run")
    rows = [["pages fetched meanwhile", "actions", "rtt p50", "rtt p99", "p50 ÷ none",
             "p99 ÷ none"]]
    for name, stats in (("none (baseline)", baseline),
                        (f"{pages / args.seconds:,.0f}/s paced ({args.page_rate:g}/s asked)",
                         with_paced),
                        (f"{flooded / args.seconds:,.0f}/s, {args.fetchers} fetchers flat out",
                         with_flood)):
        p50, p99 = _rtt(stats)
        rows.append([name, str(len(stats.rtt)), f"{p50 * 1e3:.2f}ms", f"{p99 * 1e3:.2f}ms",
                     ratio(p50, base50), ratio(p99, base99)])
    print(table(rows))
    refused = {"none": (baseline.errors, baseline.timeouts),
               "paced": (with_paced.errors, with_paced.timeouts),
               "flat out": (with_flood.errors, with_flood.timeouts)}
    print(f"actions refused, timed out: {refused}")
    for room in rooms:
        for member in room.members:
            await member.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench web",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=500, help="rooms, each of four players")
    parser.add_argument("--played", type=int, default=20,
                        help="of them, the rooms that play during the round-trip runs")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each run")
    parser.add_argument("--fetchers", type=int, default=8,
                        help="fetchers of the closed-loop runs")
    parser.add_argument("--page-rate", type=float, default=100.0,
                        help="pages a second of the paced run")
    parser.add_argument("--think", type=float, default=0.5,
                        help="seconds between two actions of a played room (0.5–1.5×)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    args.rooms = max(1, min(args.rooms, MAX_ROOMS))
    args.played = max(1, min(args.played, args.rooms))
    args.seconds = max(0.1, min(args.seconds, 120.0))
    args.fetchers = max(1, min(args.fetchers, 64))
    args.page_rate = max(1.0, min(args.page_rate, 5000.0))
    print(f"web pages at {args.rooms} rooms — {machine()}")
    with running("castell", args.rooms * 4 + args.fetchers * 4 + IN_FLIGHT,
                 extra=WEB_FLAGS) as server:
        asyncio.run(measure(server.url, server.pid, args))


if __name__ == "__main__":
    main()
