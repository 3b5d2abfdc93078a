"""The room list at scale: ``list_rooms`` with thousands of waiting rooms.

    python -m bench lobby [--rooms 100,10000] [--calls 200]

For each count, a SQLite file is filled with that many waiting rooms (public, one seat
taken, each created a second after the last), and a real ``python -m server`` started on
it restores them all into memory, as after a restart. One client then asks for the list
``--calls`` times, a page at a time: the first page, then each next page (``after`` the
page's last room) until the list ends, then the first again. Figures: the round trip of one
page (send → ``rooms``) p50 and p99, the server's CPU per call (from ``/proc``), and the
pages it took to walk the whole list once. What a page costs should not grow with the
rooms it leaves out.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import connect

from bench.common import cpu_seconds, machine, percentile, table
from bench.load import running
from server.store import RoomRecord, SeatRecord, SQLiteStore
from shared import messages as m
from shared.codec import decode_server, encode

MAX_ROOMS = 20_000


async def fill(path: Path, rooms: int) -> None:
    """A store at ``path`` holding ``rooms`` public waiting rooms, one seat taken in each."""
    async with SQLiteStore(str(path)) as store:
        for i in range(rooms):
            room = f"r{i:08x}"
            await store.create_room(RoomRecord(room, f"Sala {i}", 4, "normal", None, False,
                                               None, seed=i + 1, created_at=1.7e9 + i))
            await store.put_seat(SeatRecord(room, 0, f"P{i}", token_hash=b"\x00" * 32))


async def walk(url: str, calls: int) -> tuple[list[float], int, int]:
    """``calls`` list requests, paging through the list and around; the round trips, the
    pages of one whole walk, and the rooms it saw."""
    times: list[float] = []
    pages = seen = 0
    walks = 0
    async with connect(url, subprotocols=[m.SUBPROTOCOL], max_size=None) as ws:  # type: ignore[list-item]
        await ws.send(encode(m.Hello(id=1, name="Lister")))
        await ws.recv()
        after: str | None = None
        for i in range(calls):
            started = time.perf_counter()
            await ws.send(encode(m.ListRooms(id=2 + i, after=after)))
            reply = decode_server(await ws.recv())
            times.append(time.perf_counter() - started)
            assert isinstance(reply, m.Rooms), reply
            if walks == 0:
                pages += 1
                seen += len(reply.rooms)
            after = reply.rooms[-1].room if reply.more and reply.rooms else None
            if after is None:
                walks += 1
    return times, pages, seen


def measure(rooms: int, calls: int) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "lobby.sqlite3"
        asyncio.run(fill(path, rooms))
        with running("castell", 400, db=str(path)) as server:
            asyncio.run(walk(server.url, 5))  # restored and warm
            cpu0 = cpu_seconds(server.pid)
            times, pages, seen = asyncio.run(walk(server.url, calls))
            cpu = cpu_seconds(server.pid) - cpu0
    times.sort()
    return [f"{rooms:,}", f"{percentile(times, 0.5) * 1e3:.2f}ms",
            f"{percentile(times, 0.99) * 1e3:.2f}ms", f"{cpu / calls * 1e6:,.0f}µs",
            f"{pages:,} ({seen:,} rooms)"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench lobby",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", default="100,10000",
                        help="waiting rooms of each run, comma-separated")
    parser.add_argument("--calls", type=int, default=200, help="list requests per run")
    args = parser.parse_args(argv)
    counts = [max(1, min(int(n), MAX_ROOMS)) for n in args.rooms.split(",") if n.strip()]
    calls = max(1, min(args.calls, 10_000))
    print(f"list_rooms with many waiting rooms — {machine()}")
    rows = [["waiting rooms", "page rtt p50", "page rtt p99", "server CPU/call",
             "pages of one walk"]]
    rows += [measure(n, calls) for n in counts]
    print(table(rows))


if __name__ == "__main__":
    main()
