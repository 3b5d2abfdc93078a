"""The server under load, next to a bare websockets server taking the same load.

    python -m bench server [--rooms 100,500] [--seconds 10] [--think 1.0]
                           [--sat-rooms 50] [--sat-seconds 10] [--repeat 2] [--profile FILE]
                           [--bot-rooms 50] [--bot-seconds 20] [--patches on|off]
                           [--durable-rooms 50] [--durable-seconds 10] [--postgres URL]
                           [--loop asyncio|uvloop] [--bare websockets|sansio]

For each room count, ``castell`` (``python -m server --db :memory:`` with generous limits) and
``bare`` (:mod:`bench.bare`: echo + broadcast of a pre-encoded view, same socket settings) are
each started in their own process and driven from this one by rooms of four clients
(:mod:`bench.load`): in each room the player to act waits a think time (0.5–1.5× ``--think``)
then acts, so each room makes about one action per ``--think`` seconds and every member gets
every push. Then a saturated run: ``--sat-rooms`` rooms acting as fast as replies come.

Runs alternate between the two servers (``--repeat`` pairs, order swapped each time) so that
drift in the machine's load hits both alike; each figure is the median over the repeats.

Then the bots case: ``--bot-rooms`` rooms of one client and three ``hard`` bots (acting 0.1 s
apart, thinking in the server's worker processes), next to the same number of rooms of four
clients and no bot; the client acts as in the paced runs, and its round trip with bots
thinking beside it must stay within 1.5× of the run without them.

Then the durable case: what a real host runs. The saturated load, ``--durable-rooms`` rooms
acting as fast as replies come, on castell with a SQLite file (``synchronous=FULL``: every
commit waits for its fsync) with group commit on and off, alternating; and the same on
PostgreSQL (a fresh schema, dropped afterwards) when ``--postgres`` answers. Its figure is
acknowledged actions per second: every one of them stored before its ``ok``.

With more than one room count (``--rooms 100,500,1000,2000``) a scale curve follows: the
paced runs side by side, castell's CPU per action, round trip, bytes per action and resident
memory per room as rooms are added, each beside the bare server's in the same runs.

Both servers run on the event loop ``--loop`` names (asyncio's own by default; ``uvloop``
when it is installed), the load generator on asyncio's.

``--bare sansio`` puts :mod:`bench.bare_sansio` in the bare server's place in the paced and
saturated runs: the same echo and broadcast on websockets' sans-I/O layer under an asyncio
Protocol, which shows what the connection layer alone costs each way.

Figures, each with the bare server's and the ratio: the action round trip (send → reply) p50
and p99, the broadcast latency (send → the new state at the room's last member) p50 and p99,
actions per second, and the server's CPU time per action (from ``/proc``), which shows what
a figure is limited by: a server near 100% CPU is the limit; one well below it is waiting on
the load generator (or on the machine's other work).
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable
from typing import Any

from bench.common import machine, table
from bench.cpuprofile import summary
from bench.load import BARES, Result, run

TARGETS = {
    "rtt p50": 1.5, "rtt p99": 2.0, "broadcast p99": 1.5,
}
#: 500 rooms of 4 on one process: the absolute ceiling on the castell round trip p99.
P99_CEILING_MS = 50.0
SAT_TARGET = 0.5
#: The shortest measured window a run takes (a smoke run's; real runs measure seconds).
MIN_SECONDS = 0.1


def pairs(rooms: int, repeat: int, **kwargs: Any) -> dict[str, list[Result]]:
    """``repeat`` runs of each server, alternating (bare first, then castell first, ...)."""
    out: dict[str, list[Result]] = {"bare": [], "castell": []}
    for i in range(repeat):
        order = ("bare", "castell") if i % 2 == 0 else ("castell", "bare")
        for kind in order:
            out[kind].append(run(kind, rooms, seed=1 + i, **kwargs))
    return out


#: The durable case: acknowledged actions/s at saturation, group commit on ÷ off.
DURABLE_TARGET = 5.0
#: The PostgreSQL the durable case also runs on, when it answers ("none": not at all).
POSTGRES_URL = os.environ.get("CASTELL_BENCH_POSTGRES",
                              "postgresql://postgres@127.0.0.1:5432/test")


def _postgres_schema(url: str) -> str | None:
    """A fresh schema's store URL on the PostgreSQL at ``url``, or None when it does not
    answer (or asyncpg is not installed)."""
    import asyncio
    import secrets

    if url == "none":
        return None
    try:
        import asyncpg
    except ImportError:
        return None

    async def probe() -> bool:
        try:
            conn = await asyncpg.connect(url, timeout=3)
        except Exception:
            return False
        await conn.close()
        return True

    if not asyncio.run(probe()):
        return None
    return f"{url}{'&' if '?' in url else '?'}schema=bench_{secrets.token_hex(4)}"


def _drop_schema(url: str, store_url: str) -> None:
    import asyncio

    import asyncpg

    schema = store_url.rsplit("schema=", 1)[1]

    async def drop() -> None:
        conn = await asyncpg.connect(url, timeout=10)
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()

    asyncio.run(drop())


def durable_runs(rooms: int, repeat: int, postgres: str, **kwargs: Any,
                 ) -> dict[str, list[Result]]:
    """The saturated load on a SQLite file, and on PostgreSQL when it answers, each with
    group commit on and off (alternating, ``repeat`` runs of each)."""
    import tempfile

    out: dict[str, list[Result]] = {}
    with tempfile.TemporaryDirectory() as folder:
        stores = [("file", None)]
        pg = _postgres_schema(postgres)
        if pg is not None:
            stores.append(("postgresql", pg))
        try:
            for name, url in stores:
                for i in range(repeat):
                    order = (True, False) if i % 2 == 0 else (False, True)
                    for on in order:
                        db = url or f"{folder}/bench-{on}-{i}.sqlite3"
                        case = f"{name}, group commit {'on' if on else 'off'}"
                        out.setdefault(case, []).append(
                            run("castell", rooms, seed=1 + i, db=db, group_commit=on,
                                **kwargs))
                        if url is not None:  # the next run starts on an empty schema
                            _drop_schema(postgres, url)
        finally:
            if pg is not None:
                _drop_schema(postgres, pg)
    return out


def durable_report(rooms: int, seconds: float, repeat: int,
                   results: dict[str, list[Result]]) -> str:
    rows = [["", "acked actions/s", "rtt p50", "rtt p99", "server CPU/action", "on ÷ off",
             "target"]]
    for case, runs in results.items():
        rate = _median(runs, lambda r: r.throughput)
        ratio, target = "", ""
        if case.endswith(" on"):
            off = results.get(case[:-2] + "off")
            base = _median(off, lambda r: r.throughput) if off else 0.0
            ratio = f"{rate / base:.2f}×" if base else "-"
            target = f"≥ {DURABLE_TARGET:g}×" if case.startswith("file") else ""
        rows.append([case, f"{rate:,.0f}", f"{_median(runs, lambda r: r.rtt_at(0.5)) * 1e3:.2f}ms",
                     f"{_median(runs, lambda r: r.rtt_at(0.99)) * 1e3:.2f}ms",
                     f"{_median(runs, lambda r: r.cpu_per_action) * 1e6:,.0f}µs", ratio,
                     target])
    errors = {case: sum(r.errors + r.timeouts for r in rs) for case, rs in results.items()}
    return "\n".join([
        f"durable: {rooms} rooms × 4 clients acting as fast as replies come, every action "
        f"stored before its ok (SQLite file with synchronous FULL; PostgreSQL when it "
        f"answers), {seconds:g} s measured, median of {repeat}",
        table(rows),
        f"refused or timed out: {errors}",
    ])


#: The bots case: the client's round trip beside thinking bots, against none.
BOT_TARGET = 1.5


def bot_pairs(rooms: int, repeat: int, **kwargs: Any) -> dict[str, list[Result]]:
    """``repeat`` runs of castell with rooms of one client and three hard bots, and of
    castell with rooms of four clients, alternating."""
    out: dict[str, list[Result]] = {"no bots": [], "hard bots": []}
    for i in range(repeat):
        order = ("no bots", "hard bots") if i % 2 == 0 else ("hard bots", "no bots")
        for case in order:
            bots = "hard" if case == "hard bots" else None
            out[case].append(run("castell", rooms, seed=1 + i, bots=bots, **kwargs))
    return out


def bot_report(rooms: int, seconds: float, repeat: int,
               results: dict[str, list[Result]]) -> str:
    rows = [["", "no bots", "hard bots", "bots ÷ none", "target"]]
    for name, figure, unit in FIGURES[:2] + FIGURES[5:7]:
        base = _median(results["no bots"], figure)
        ours = _median(results["hard bots"], figure)
        fmt = "{:,.0f}" if unit in ("", "µs", "%", "/s") else "{:.2f}"
        target = f"≤ {BOT_TARGET}×" if name.startswith("rtt") else ""
        rows.append([name, fmt.format(base) + unit, fmt.format(ours) + unit,
                     f"{ours / base:.2f}×" if base else "-", target])
    counted = {case: [r.actions for r in rs] for case, rs in results.items()}
    errors = {case: sum(r.errors + r.timeouts for r in rs) for case, rs in results.items()}
    return "\n".join([
        f"bots: {rooms} rooms, one client and three hard bots each (no bots: four clients), "
        f"{seconds:g} s measured, median of {repeat}; the round trip is the clients' own",
        table(rows),
        f"client actions counted per run: {counted}; refused or timed out: {errors}",
    ])


def _median(results: list[Result], figure: Callable[[Result], float]) -> float:
    return statistics.median(figure(r) for r in results)


FIGURES: list[tuple[str, Callable[[Result], float], str]] = [
    ("rtt p50", lambda r: r.rtt_at(0.50) * 1e3, "ms"),
    ("rtt p99", lambda r: r.rtt_at(0.99) * 1e3, "ms"),
    ("broadcast p50", lambda r: r.broadcast_at(0.50) * 1e3, "ms"),
    ("broadcast p99", lambda r: r.broadcast_at(0.99) * 1e3, "ms"),
    ("actions/s", lambda r: r.throughput, ""),
    ("server CPU/action", lambda r: r.cpu_per_action * 1e6, "µs"),
    ("server CPU", lambda r: r.server_cpu / r.seconds * 100, "%"),
    ("load CPU", lambda r: r.load_cpu / r.seconds * 100, "%"),
    ("bytes/action", lambda r: r.bytes_per_action, " B"),
    ("RSS per room", lambda r: r.rss_per_room, " KiB"),
]


#: In a saturated run: what one core could serve, going by the server's CPU per action — the
#: server's own limit, whether or not the load generator could push it that far.
CAPACITY = ("capacity of 1 core", lambda r: 1 / r.cpu_per_action if r.cpu_per_action else 0.0,
            "/s")


def report(title: str, results: dict[str, list[Result]], targets: dict[str, str],
           figures: list[tuple[str, Callable[[Result], float], str]] = FIGURES) -> str:
    rows = [["", "bare", "castell", "castell ÷ bare", "target"]]
    for name, figure, unit in figures:
        bare = _median(results["bare"], figure)
        ours = _median(results["castell"], figure)
        fmt = "{:,.0f}" if unit in ("", "µs", "%", "/s", " B") else "{:.2f}"
        if unit == " KiB":
            fmt = "{:,.1f}"
        rows.append([name, fmt.format(bare) + unit, fmt.format(ours) + unit,
                     f"{ours / bare:.2f}×" if bare else "-", targets.get(name, "")])
    problems = {
        kind: (sum(r.errors for r in rs), sum(r.timeouts for r in rs), sum(r.games for r in rs))
        for kind, rs in results.items()
    }
    c_err, c_to, games = problems["castell"]
    b_err, b_to, _ = problems["bare"]
    counted = [r.actions for r in results["castell"]]
    return "\n".join([
        title,
        table(rows),
        f"actions counted per castell run: {counted}; refused {c_err}, timed out {c_to} "
        f"(bare {b_err}/{b_to}); castell games finished and restarted: {games}",
    ])


def _both(ours: list[Result], bare: list[Result],
          figure: Callable[[Result], float]) -> tuple[float, float]:
    return _median(ours, figure), _median(bare, figure)


def scale_report(curve: dict[int, dict[str, list[Result]]]) -> str:
    """The paced runs side by side: how castell's figures move as rooms are added (flat is
    the aim), with the bare server's CPU per action and round trip beside them."""
    rows = [["rooms of 4", "actions/s", "CPU/action", "÷ bare", "rtt p50", "÷ bare",
             "rtt p99", "÷ bare", "bytes/action", "RSS/room"]]
    for n, results in curve.items():
        ours, bare = results["castell"], results["bare"]
        cpu, cpu_b = _both(ours, bare, lambda r: r.cpu_per_action * 1e6)
        p50, p50_b = _both(ours, bare, lambda r: r.rtt_at(0.5) * 1e3)
        p99, p99_b = _both(ours, bare, lambda r: r.rtt_at(0.99) * 1e3)
        rows.append([f"{n:,}", f"{_median(ours, lambda r: r.throughput):,.0f}",
                     f"{cpu:,.0f}µs", f"{cpu / cpu_b:.2f}×" if cpu_b else "-",
                     f"{p50:.2f}ms", f"{p50 / p50_b:.2f}×" if p50_b else "-",
                     f"{p99:.2f}ms", f"{p99 / p99_b:.2f}×" if p99_b else "-",
                     f"{_median(ours, lambda r: r.bytes_per_action):,.0f} B",
                     f"{_median(ours, lambda r: r.rss_per_room):,.1f} KiB"])
    return "\n".join(["scale: castell's paced runs side by side (÷ bare: the bare server's "
                      "figure in the same runs)", table(rows)])


def paced_targets(rooms: int) -> dict[str, str]:
    out = {name: f"≤ {limit}×" for name, limit in TARGETS.items()}
    if rooms >= 500:
        out["rtt p99"] += f", < {P99_CEILING_MS:.0f} ms"
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench server",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", default="100,500",
                        help="room counts of the paced runs, comma-separated (4 clients each)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds first")
    parser.add_argument("--think", type=float, default=1.0,
                        help="mean seconds between a room's actions in the paced runs")
    parser.add_argument("--sat-rooms", type=int, default=50,
                        help="rooms of the saturated run (0: none)")
    parser.add_argument("--sat-seconds", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each server per case")
    parser.add_argument("--bot-rooms", type=int, default=50,
                        help="rooms of the bots case (0: none)")
    parser.add_argument("--bot-seconds", type=float, default=20.0)
    parser.add_argument("--durable-rooms", type=int, default=50,
                        help="rooms of the durable case (0: none)")
    parser.add_argument("--durable-seconds", type=float, default=10.0)
    parser.add_argument("--postgres", default=POSTGRES_URL, metavar="URL",
                        help="the PostgreSQL the durable case also runs on, when it answers "
                             "(a fresh schema, dropped afterwards; 'none': not at all; "
                             "default $CASTELL_BENCH_POSTGRES or the tests' database)")
    parser.add_argument("--patches", choices=("on", "off"), default="on",
                        help="whether castell's clients ask for view patches at hello (on, "
                             "as the castell client does) or get every view whole (off)")
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio",
                        help="the event loop both servers run on (uvloop: when installed)")
    parser.add_argument("--bare", choices=tuple(BARES), default="websockets",
                        help="the bare baseline of the paced and saturated runs: websockets' "
                             "asyncio server (bench.bare), or its sans-I/O layer under an "
                             "asyncio Protocol (bench.bare_sansio)")
    parser.add_argument("--profile", default=None, metavar="FILE",
                        help="also profile one castell run of the last case into FILE by "
                             "CPU time, and summarise it (python -m bench.cpuprofile FILE)")
    args = parser.parse_args(argv)
    rooms = [max(1, min(int(n), 2000)) for n in args.rooms.split(",") if n.strip()]
    seconds = max(MIN_SECONDS, min(args.seconds, 300.0))
    sat_seconds = max(MIN_SECONDS, min(args.sat_seconds, 300.0))
    repeat = max(1, min(args.repeat, 10))
    warmup = max(0.0, min(args.warmup, 60.0))
    patches = args.patches == "on"
    loop = args.loop
    print(f"server under load — {machine()}; both servers on the {loop} event loop; the "
          f"bare server of the paced and saturated runs: {BARES[args.bare]}")
    print(f"castell's clients take view patches: {args.patches}; bytes/action is what the "
          "four members of a room receive per action, replies and pushes")
    curve: dict[int, dict[str, list[Result]]] = {}
    for n in rooms:
        results = curve[n] = pairs(n, repeat, seconds=seconds, warmup=warmup,
                                   think=args.think, patches=patches, loop=loop,
                                   bare=args.bare)
        print(f"\n(load average now {os.getloadavg()[0]:.1f})")
        print(report(f"{n} rooms × 4 clients, about one action per room every {args.think:g} s, "
                     f"{seconds:g} s measured after {warmup:g} s, median of {repeat}",
                     results, paced_targets(n)))
    if len(curve) > 1:
        print()
        print(scale_report(curve))
    if args.sat_rooms:
        results = pairs(args.sat_rooms, repeat, seconds=sat_seconds, warmup=warmup, think=0.0,
                        patches=patches, loop=loop, bare=args.bare)
        print(f"\n(load average now {os.getloadavg()[0]:.1f})")
        print(report(f"saturated: {args.sat_rooms} rooms × 4 clients acting as fast as replies "
                     f"come, {sat_seconds:g} s measured, median of {repeat}",
                     results, {"actions/s": f"≥ {SAT_TARGET}×",
                               "capacity of 1 core": f"≥ {SAT_TARGET}×"},
                     [*FIGURES, CAPACITY]))
    if args.bot_rooms:
        bot_seconds = max(MIN_SECONDS, min(args.bot_seconds, 300.0))
        results = bot_pairs(args.bot_rooms, repeat, seconds=bot_seconds, warmup=warmup,
                            think=args.think, patches=patches, loop=loop)
        print(f"\n(load average now {os.getloadavg()[0]:.1f})")
        print(bot_report(args.bot_rooms, bot_seconds, repeat, results))
    if args.durable_rooms:
        durable_seconds = max(MIN_SECONDS, min(args.durable_seconds, 300.0))
        results = durable_runs(args.durable_rooms, repeat, args.postgres,
                               seconds=durable_seconds, warmup=warmup, think=0.0,
                               patches=patches, loop=loop)
        print(f"\n(load average now {os.getloadavg()[0]:.1f})")
        print(durable_report(args.durable_rooms, durable_seconds, repeat, results))
    if args.profile:
        saturated = bool(args.sat_rooms)
        n = args.sat_rooms if saturated else rooms[-1]
        run("castell", n, seconds=sat_seconds if saturated else seconds, warmup=warmup,
            think=0.0 if saturated else args.think, profile=args.profile, patches=patches,
            loop=loop)
        print(f"\nprofile of one castell run ({n} rooms"
              f"{', saturated' if saturated else ''}), by CPU time, in {args.profile}:")
        print(summary(args.profile))


if __name__ == "__main__":
    main()
