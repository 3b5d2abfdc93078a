"""Profile a module by the CPU time its thread uses, and summarise where that time went.

    python -m bench.cpuprofile OUT -m MODULE [ARGS...]   # run MODULE under the profiler
    python -m bench.cpuprofile OUT                       # summarise a profile written before

A server under load waits a lot and, on a busy machine, is often preempted: a profile by
wall-clock time charges that to whatever call was running (a socket ``send`` that woke the
load generator looks a hundred times dearer than it is). Counting the thread's CPU time
(``time.thread_time``) charges each function only for what it computed. The profile is
written when the module exits, on SIGTERM too (the server stops cleanly on it).
"""

from __future__ import annotations

import cProfile
import pstats
import runpy
import sys
import time
from collections import Counter
from pathlib import Path

#: Where a function's file lives → the area it is counted in. Our folders are matched whole
#: (``/shared/``), so a checkout in a folder such as ``castell-shared/`` is not taken for one.
AREAS = (
    ("/shared/", "ours: shared/"), ("/server/", "ours: server/"), ("/bench/", "bench/"),
    ("websockets/", "websockets"), ("asyncio/", "asyncio"), ("cattrs/", "cattrs"),
    ("attr/", "attrs"), ("msgpack/", "msgpack"), ("sqlite", "sqlite3"),
)


def _area(filename: str, name: str) -> str:
    if filename == "~":  # a builtin: its name says where it belongs
        for needle, area in (("socket", "socket syscalls"), ("epoll", "waiting (epoll)"),
                             ("sqlite3", "sqlite3")):
            if needle in name:
                return area
        return "builtins"
    for needle, area in AREAS:
        if needle in filename:
            return area
    return "other (stdlib, imports)"


def summary(path: str | Path, top: int = 15) -> str:
    """CPU time by area, and the functions that used the most of it themselves."""
    stats = pstats.Stats(str(path))
    total = stats.total_tt or 1.0  # type: ignore[attr-defined]
    areas: Counter[str] = Counter()
    rows = []
    for (filename, line, name), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        areas[_area(filename, name)] += own
        where = filename.split("site-packages/")[-1] if filename != "~" else ""
        for root in ("shared/", "server/", "bench/"):
            if f"/{root}" in where:
                where = root + where.split(f"/{root}", 1)[1]
        rows.append((own, calls, cumulative, f"{where}:{line}({name})" if where else name))
    lines = [f"CPU time profiled: {total:.2f} s", "by area:"]
    lines += [f"  {own / total:6.1%}  {area}" for area, own in areas.most_common()]
    lines.append(f"the {top} functions using the most CPU themselves (own, calls, with callees):")
    for own, calls, cumulative, name in sorted(rows, reverse=True)[:top]:
        lines.append(f"  {own / total:6.1%} {calls:9,d} {cumulative / total:7.1%}  {name}")
    lines.append(f"our {top} costliest paths (with callees, calls):")
    ours = [row for row in rows if row[3].startswith(("shared/", "server/"))]
    for _, calls, cumulative, name in sorted(ours, key=lambda row: -row[2])[:top]:
        lines.append(f"  {cumulative / total:6.1%} {calls:9,d}  {name}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) == 1:
        print(summary(argv[0]))
        return
    if len(argv) < 3 or argv[1] != "-m":
        raise SystemExit("usage: python -m bench.cpuprofile OUT [-m MODULE [ARGS...]]")
    out, module, args = argv[0], argv[2], argv[3:]
    sys.argv = [module, *args]
    profiler = cProfile.Profile(time.thread_time)
    profiler.enable()
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
    finally:
        profiler.disable()
        profiler.dump_stats(out)


if __name__ == "__main__":
    main()
