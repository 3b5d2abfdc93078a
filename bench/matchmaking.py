"""How many queued players one node matches per second: a real server in this process, on a
SQLite file, with ``--players`` real websocket clients waiting in its quick-match queue.

    python -m bench matchmaking [--players 200] [--seats 2] [--rated] [--dir DIR]

Every player asks ``quick_match`` (``--seats`` players a game; ``--rated``: accounts of equal
ratings), then one matcher round is timed: grouping the queue, and for each group a room
created, its seats stored, its game started and its players told (``matched``). Figures:
players matched per second, and groups (rooms) per second.

Baseline, measured in the same run: the grouping alone (:func:`server.features.matchmaking.
find_matches` on the same wishes), what the matcher's arithmetic costs without the rooms.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import tempfile
import time
from pathlib import Path

from bench.common import machine, table
from client.net.net import GameClient
from server.app import CastellServer
from server.config import ServerConfig
from server.features.matchmaking import find_matches
from server.store import open_store
from shared import messages as m


async def measure(players: int, seats: int, rated: bool, folder: Path) -> dict[str, float]:
    config = ServerConfig(host="127.0.0.1", port=0, bot_delay=0.0, bot_workers=0,
                          ping_interval=None, rate=1e6, burst=1e6, address_rate=1e6,
                          address_burst=1e6, match_interval=86_400.0, max_rooms=100_000,
                          rooms_per_address=100_000, rated_one_network=True)
    server = CastellServer(config, open_store(folder / "match.sqlite3"))
    await server.start()
    clients: list[GameClient] = []
    try:
        url = f"ws://127.0.0.1:{server.port}"
        for n in range(players):
            client = await GameClient.connect(url)
            await client.hello(f"P{n}", secrets.token_urlsafe(48) if rated else None)
            clients.append(client)
        await asyncio.gather(*(c.request(m.QuickMatch, seats=[seats], rated=rated)
                               for c in clients))
        matcher = server.requests.matchmaker
        wishes = await matcher.queue.wishes()
        start = time.perf_counter()
        groups = find_matches(wishes, matcher.clock(), matcher.windows)
        grouping = time.perf_counter() - start
        start = time.perf_counter()
        started = await matcher.round()
        elapsed = time.perf_counter() - start
        assert started == len(groups) == players // seats, (started, len(groups))
        return {"players": players // seats * seats / elapsed, "rooms": started / elapsed,
                "grouping": len(wishes) / grouping if grouping else float("inf")}
    finally:
        for client in clients:
            await client.close()
        await server.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench matchmaking",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--seats", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--rated", action="store_true")
    parser.add_argument("--dir", type=Path, default=None, help="where the SQLite file goes")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        got = asyncio.run(measure(args.players, args.seats, args.rated, Path(folder)))
    print(f"{machine()}; {args.players} players queued, {args.seats} a game, "
          f"{'rated' if args.rated else 'unrated'}")
    print(table([
        ("", "per second"),
        ("players matched (rooms made, seated, started)", f"{got['players']:,.0f}"),
        ("rooms started", f"{got['rooms']:,.0f}"),
        ("grouping alone (baseline), players", f"{got['grouping']:,.0f}"),
    ]))


if __name__ == "__main__":
    main()
