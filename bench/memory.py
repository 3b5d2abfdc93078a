"""What an idle connection costs the server in memory, next to a bare websockets server.

    python -m bench memory [--connections 1000]

Each server is started in its own process and first takes one room of four clients (so that
lazily built code paths and first allocations are behind it); its resident memory (RSS, from
``/proc``) is read; then ``--connections`` more clients connect and sit: for ``castell`` each
said hello and holds a seat in a room of four whose game has started, for ``bare`` each
joined a room. The RSS growth divided by the number of connections is the figure, and the
ratio of Castell's to the bare server's the target (≤ 1.5×).
"""

from __future__ import annotations

import argparse
import asyncio

from bench.common import machine, rss_kib, table
from bench.load import close_rooms, open_rooms, running

TARGET = 1.5


async def _grow(url: str, kind: str, pid: int, connections: int, settle: float,
                ) -> tuple[int, int]:
    warm = await open_rooms(url, kind, 1, seed=0)
    rooms = []
    try:
        await asyncio.sleep(settle)
        before = rss_kib(pid)
        rooms = await open_rooms(url, kind, max(1, connections // 4), seed=1)
        await asyncio.sleep(settle)
        after = rss_kib(pid)
    finally:
        await close_rooms([*warm, *rooms])
    return before, after


def measure(kind: str, connections: int, settle: float = 1.0) -> tuple[int, int, int]:
    """(RSS before, RSS after, connections opened) for a fresh server of ``kind``; each
    reading waits ``settle`` seconds for the server to finish its part of the handshakes."""
    rooms = max(1, connections // 4)
    with running(kind, (rooms + 1) * 4) as server:
        before, after = asyncio.run(_grow(server.url, kind, server.pid, connections, settle))
    return before, after, rooms * 4


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench memory",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1000,
                        help="idle connections to open (rounded down to rooms of 4)")
    parser.add_argument("--settle", type=float, default=1.0,
                        help="seconds to wait before each reading")
    args = parser.parse_args(argv)
    connections = max(4, min(args.connections, 5000))
    settle = max(0.0, min(args.settle, 30.0))
    figures = {kind: measure(kind, connections, settle) for kind in ("bare", "castell")}
    per = {kind: (after - before) * 1024 / n for kind, (before, after, n) in figures.items()}
    rows = [["", "RSS before", "RSS after", "connections", "KiB per connection"]]
    for kind, (before, after, n) in figures.items():
        rows.append([kind, f"{before / 1024:.1f} MiB", f"{after / 1024:.1f} MiB", str(n),
                     f"{per[kind] / 1024:.1f}"])
    print(f"memory per idle connection — {machine()}")
    print(table(rows))
    ratio = per["castell"] / per["bare"] if per["bare"] > 0 else float("nan")
    print(f"castell ÷ bare: {ratio:.2f}× (target ≤ {TARGET}×)")


if __name__ == "__main__":
    main()
