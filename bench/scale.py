"""The scale curve: one server process as rooms are added, its load from several processes.

    python -m bench scale [--rooms 100,500,1000,2000] [--load-procs 4] [--seconds 10]
                          [--warmup 3] [--think 1.0] [--repeat 1] [--patches on|off]

For each room count, ``castell`` and ``bare`` (:mod:`bench.load`: the same servers and the
same rooms of four clients as ``python -m bench server``, each room acting about once every
``--think`` seconds) are each started in their own process, alternating (``--repeat`` pairs,
the order swapped each time; each figure the median). The load does not come from one
process, which at a thousand rooms is itself the limit (one Python process driving 4,000
clients): ``--load-procs`` worker processes each drive a share of the rooms (``python -m
bench.scale --worker``: they open their rooms, say so, and all start at once when told; each
measures the same window, and their samples are merged here). What a figure is limited by
shows in the CPU columns: the server's share of one core, and the load generator's, all its
processes together. A server keeps up while its actions per second are what the rooms ask
(one per room per ``--think``); where castell stops, the report says so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from bench.common import ROOT, cpu_seconds, machine, rss_kib, table
from bench.load import (
    WAIT,
    Result,
    Stats,
    close_rooms,
    open_rooms,
    running,
)

#: The most rooms a curve's point may have.
MAX_ROOMS = 4000
#: A server keeps up while it serves at least this share of the actions its rooms ask for.
KEEPS_UP = 0.95
#: A server's share of one core (%) from which it is taken to be at its own limit.
FULL_CORE = 80.0


async def _work(url: str, kind: str, rooms: int, first: int, seed: int, think: float,
                patches: bool) -> None:
    """A worker: open its rooms, say ``ready``, wait for the window (a line on stdin:
    ``{"begin": monotonic seconds, "seconds": ...}``), drive them, print what it measured."""
    opened = await open_rooms(url, kind, rooms, seed, patches=patches, first=first)
    print(json.dumps({"ready": rooms}), flush=True)
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    told = json.loads(line)
    begin, seconds = float(told["begin"]), float(told["seconds"])
    # time.monotonic and time.perf_counter are one clock on Linux, and the same clock in
    # every process: the window is the same in all of them
    offset = time.perf_counter() - time.monotonic()
    start, stop = begin + offset, begin + offset + seconds
    stats = Stats(window=(start, stop))

    def received() -> int:
        return sum(m.received for room in opened for m in room.members)

    try:
        tasks = [asyncio.create_task(room.drive(stats, stop, think)) for room in opened]
        await asyncio.sleep(max(0.0, start - time.perf_counter()))
        cpu0, bytes0 = time.process_time(), received()
        await asyncio.sleep(max(0.0, stop - time.perf_counter()))
        cpu1, bytes1 = time.process_time(), received()
        async with asyncio.timeout(WAIT + think * 2 + 5):
            await asyncio.gather(*tasks)
    finally:
        await close_rooms(opened)
    print(json.dumps({"rtt": stats.rtt, "broadcast": stats.broadcast, "errors": stats.errors,
                      "timeouts": stats.timeouts, "games": stats.games, "cpu": cpu1 - cpu0,
                      "received": bytes1 - bytes0}), flush=True)


def _shares(rooms: int, procs: int) -> list[tuple[int, int]]:
    """(first room, rooms) of each worker: the rooms split as evenly as they go."""
    out, first = [], 0
    for i in range(procs):
        count = rooms // procs + (1 if i < rooms % procs else 0)
        if count:
            out.append((first, count))
        first += count
    return out


def waited_seconds(pid: int) -> float:
    """Seconds the threads of process ``pid`` have spent runnable but waiting for a CPU (on
    a run queue) so far (Linux ``/proc/PID/task/*/schedstat``, its second field)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        with suppress(OSError, ValueError, IndexError):
            total += int(stat.read_text().split()[1])
    return total / 1e9


def run(kind: str, rooms: int, *, procs: int, seconds: float, warmup: float, think: float,
        seed: int = 1, patches: bool = True) -> tuple[Result, float]:
    """One bounded run: a fresh server of ``kind``, ``rooms`` rooms of four driven by
    ``procs`` worker processes for ``warmup + seconds``; their samples merged, and the
    seconds the server waited for a CPU in the window (:func:`waited_seconds`)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with running(kind, rooms * 4) as server:
        workers = [subprocess.Popen(
            [sys.executable, "-m", "bench.scale", "--worker", server.url, kind, str(count),
             str(first), str(seed), str(think), "on" if patches else "off"],
            cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for first, count in _shares(rooms, procs)]
        try:
            for worker in workers:
                assert worker.stdout is not None
                line = worker.stdout.readline()
                if "ready" not in line:
                    raise RuntimeError(f"a load worker did not get its rooms ready: {line!r}")
            begin = time.monotonic() + warmup
            for worker in workers:
                assert worker.stdin is not None
                worker.stdin.write(json.dumps({"begin": begin, "seconds": seconds}) + "\n")
                worker.stdin.flush()
            time.sleep(max(0.0, begin - time.monotonic()))
            cpu0, wait0 = cpu_seconds(server.pid), waited_seconds(server.pid)
            time.sleep(max(0.0, begin + seconds - time.monotonic()))
            cpu1, wait1 = cpu_seconds(server.pid), waited_seconds(server.pid)
            rss = rss_kib(server.pid)
            got = []
            for worker in workers:
                assert worker.stdout is not None
                out, _ = worker.communicate(timeout=WAIT * 3 + think * 2 + 30)
                got.append(json.loads(out.strip().splitlines()[-1]))
        finally:
            for worker in workers:
                if worker.poll() is None:
                    worker.kill()
                    worker.wait()
    return Result(kind, rooms, seconds, think,
                  [t for g in got for t in g["rtt"]], [t for g in got for t in g["broadcast"]],
                  sum(g["errors"] for g in got), sum(g["timeouts"] for g in got),
                  sum(g["games"] for g in got), cpu1 - cpu0, sum(g["cpu"] for g in got),
                  sum(g["received"] for g in got), rss), wait1 - wait0


def _median(results: list[Result], figure: Callable[[Result], float]) -> float:
    return statistics.median(figure(r) for r in results)


#: One point of the curve: each server's runs.
Point = dict[str, list[Result]]


def curve_report(curve: dict[int, Point], waits: dict[int, dict[str, list[float]]],
                 think: float, procs: int, loads: dict[int, float]) -> str:
    """The curve as one table (castell beside bare at each point), and where castell stops
    keeping up, and why."""
    rows = [["rooms of 4", "", "asked/s", "actions/s", "CPU/action", "÷ bare", "rtt p50",
             "rtt p99", "server CPU", "waiting", "load CPU", "refused/timed out", "load avg"]]
    stops: int | None = None
    for n, results in curve.items():
        asked = n / think if think else 0.0
        cpu_b = _median(results["bare"], lambda r: r.cpu_per_action)
        for kind in ("bare", "castell"):
            runs = results[kind]
            rate = _median(runs, lambda r: r.throughput)
            cpu = _median(runs, lambda r: r.cpu_per_action)
            ratio = f"{cpu / cpu_b:.2f}×" if kind == "castell" and cpu_b else ""
            rows.append([f"{n:,}" if kind == "bare" else "", kind, f"{asked:,.0f}",
                         f"{rate:,.0f}", f"{cpu * 1e6:,.0f}µs", ratio,
                         f"{_median(runs, lambda r: r.rtt_at(0.5)) * 1e3:.2f}ms",
                         f"{_median(runs, lambda r: r.rtt_at(0.99)) * 1e3:.2f}ms",
                         f"{_median(runs, lambda r: r.server_cpu / r.seconds * 100):.0f}%",
                         f"{statistics.median(waits[n][kind]):.0f}%",
                         f"{_median(runs, lambda r: r.load_cpu / r.seconds * 100):.0f}%",
                         f"{sum(r.errors for r in runs)}/{sum(r.timeouts for r in runs)}",
                         f"{loads[n]:.1f}" if kind == "bare" else ""])
        if asked and stops is None and not _keeps_up(results["castell"], asked):
            stops = n
    lines = [f"the scale curve: each room about one action every {think:g} s, the load from "
             f"{procs} processes; server CPU: its share of one core; waiting: its share of "
             f"the window spent runnable, waiting for a CPU (the machine's other work and "
             f"the load generator had it); load CPU: the load processes' together; load avg: "
             f"the machine's, after the point's runs; median of the runs", table(rows)]
    if not think:
        return "\n".join(lines)
    last = curve[max(curve)]["castell"]
    cpu = _median(last, lambda r: r.cpu_per_action)
    if cpu:
        lines.append(f"by its CPU per action at {max(curve):,} rooms, one castell process "
                     f"fills one core at about {1 / cpu:,.0f} actions/s: "
                     f"{think / cpu:,.0f} rooms acting once every {think:g} s")
    if stops is None:
        lines.append(f"castell kept up at every point (≥ {KEEPS_UP:.0%} of the actions asked)")
        return "\n".join(lines)
    c, b = curve[stops]["castell"], curve[stops]["bare"]
    rate = _median(c, lambda r: r.throughput)
    server = _median(c, lambda r: r.server_cpu / r.seconds * 100)
    waiting = statistics.median(waits[stops]["castell"])
    load = _median(c, lambda r: r.load_cpu / r.seconds * 100)
    bare = _median(b, lambda r: r.throughput)
    limits = []
    if server >= FULL_CORE:
        limits.append("castell is near a full core, its own limit (one process, one core)")
    elif server + waiting >= FULL_CORE:
        limits.append(f"castell was runnable most of the window but had a CPU for only "
                      f"{server:.0f}% of it (waiting {waiting:.0f}%): the machine's cores "
                      f"were the limit")
    if not _keeps_up(b, stops / think):
        limits.append("the bare server did not keep up either: the machine (its cores, "
                      "shared by the server, the load generator and any other work) is a "
                      "limit there")
    elif server + waiting < FULL_CORE:
        limits.append("the bare server did, on the same machine, and castell was neither "
                      "busy nor waiting for a CPU all the time: castell waits on something "
                      "of its own")
    lines.append(f"castell stops keeping up at {stops:,} rooms: {rate:,.0f} of the "
                 f"{stops / think:,.0f} actions/s asked (bare {bare:,.0f}), the server at "
                 f"{server:.0f}% of a core, the load generator at {load:.0f}% (on "
                 f"{os.cpu_count()} cpu(s)); " + "; ".join(limits))
    return "\n".join(lines)


def _keeps_up(runs: list[Result], asked: float) -> bool:
    return _median(runs, lambda r: r.throughput) >= KEEPS_UP * asked


def main(argv: list[str] | None = None) -> None:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["--worker"]:
        url, kind, rooms, first, seed, think, patches = args_in[1:8]
        asyncio.run(_work(url, kind, int(rooms), int(first), int(seed), float(think),
                          patches == "on"))
        return
    parser = argparse.ArgumentParser(prog="python -m bench scale",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", default="100,500,1000,2000",
                        help="room counts of the curve, comma-separated (4 clients each)")
    parser.add_argument("--load-procs", type=int, default=4,
                        help="processes the load generator runs in")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=3.0,
                        help="unmeasured seconds first (at least one think time)")
    parser.add_argument("--think", type=float, default=1.0,
                        help="mean seconds between a room's actions")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each server per point")
    parser.add_argument("--patches", choices=("on", "off"), default="on",
                        help="whether castell's clients ask for view patches at hello")
    args = parser.parse_args(args_in)
    counts = [max(1, min(int(n), MAX_ROOMS)) for n in args.rooms.split(",") if n.strip()]
    procs = max(1, min(args.load_procs, 16))
    seconds = max(0.1, min(args.seconds, 300.0))
    think = max(0.0, min(args.think, 60.0))
    # every room has begun acting (each waits up to one think time first) before the window
    warmup = max(think, min(args.warmup, 60.0))
    repeat = max(1, min(args.repeat, 10))
    print(f"scale curve — {machine()}")
    curve: dict[int, Point] = {}
    waits: dict[int, dict[str, list[float]]] = {}
    loads: dict[int, float] = {}
    for n in counts:
        results: Point = {"bare": [], "castell": []}
        waited: dict[str, list[float]] = {"bare": [], "castell": []}
        for i in range(repeat):
            order = ("bare", "castell") if i % 2 == 0 else ("castell", "bare")
            for kind in order:
                result, wait = run(kind, n, procs=procs, seconds=seconds, warmup=warmup,
                                   think=think, seed=1 + i, patches=args.patches == "on")
                results[kind].append(result)
                waited[kind].append(wait / seconds * 100)
        curve[n], waits[n] = results, waited
        loads[n] = os.getloadavg()[0]
        print(f"({n:,} rooms done; load average {os.getloadavg()[0]:.1f})", flush=True)
    print()
    print(curve_report(curve, waits, think, procs, loads))


if __name__ == "__main__":
    main()
