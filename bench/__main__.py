"""``python -m bench NAME [options]``: run one benchmark, or ``all`` of them at a small size.

Each benchmark is also ``python -m bench.NAME``; ``python -m bench NAME --help`` lists its
options. A benchmark that needs what the machine may lack (``peer``: Node and the Colyseus
packages) says so through its module's ``missing()``, and ``all`` then skips it.
"""

from __future__ import annotations

import importlib
import sys
import time

#: Each benchmark's module, and the options ``all`` runs it with (small and bounded).
BENCHMARKS: dict[str, list[str]] = {
    "engine": ["--seconds", "2"],
    "codec": ["--number", "50"],
    "server": ["--rooms", "20", "--seconds", "3", "--warmup", "1", "--sat-rooms", "10",
               "--bot-rooms", "5", "--bot-seconds", "3",
               "--sat-seconds", "3", "--repeat", "1"],
    "scale": ["--rooms", "20,40", "--load-procs", "2", "--seconds", "2", "--warmup", "1"],
    "memory": ["--connections", "200"],
    "idle": ["--games", "200", "--connections", "200"],
    "store": ["--count", "100", "--writers", "20", "--writer-seconds", "1"],
    "solver": ["--runs", "10"],
    "cluster": ["--count", "100"],
    "bots": ["--games", "10", "--seats", "2"],
    "matchmaking": ["--players", "60"],
    "lobby": ["--rooms", "100,1000", "--calls", "50"],
    "mygames": ["--games", "20", "--turns", "6", "--calls", "20"],
    "botshare": ["--rooms", "5", "--turns", "1", "--think", "0.1"],
    "review": ["--games", "1"],
    "web": ["--rooms", "50", "--played", "5", "--seconds", "2", "--page-rate", "50",
            "--repeat", "1"],
    "peer": ["--rooms", "20", "--seconds", "3", "--warmup", "1", "--sat-rooms", "10",
             "--repeat", "1"],
}


def run(name: str, argv: list[str]) -> None:
    importlib.import_module(f"bench.{name}").main(argv)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = [*BENCHMARKS, "all"]
    if not argv or argv[0] not in names:
        print(f"usage: python -m bench {{{','.join(names)}}} [options]\n{__doc__}",
              file=sys.stderr)
        return 2
    name, rest = argv[0], argv[1:]
    if name != "all":
        run(name, rest)
        return 0
    for bench, small in BENCHMARKS.items():
        start = time.perf_counter()
        print(f"== {bench} {' '.join(small)}", flush=True)
        why = getattr(importlib.import_module(f"bench.{bench}"), "missing", lambda: None)()
        if why is not None:
            print(f"(skipped: {why})\n", flush=True)
            continue
        run(bench, small)
        print(f"({time.perf_counter() - start:.1f} s)\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
