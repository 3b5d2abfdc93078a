"""What ``my_games`` costs the server: a page of an account's unfinished games, none in memory.

    python -m bench mygames [--games 100] [--turns 18] [--calls 100]

Two accounts play ``--games`` two-seat games on a real ``python -m server`` over a SQLite
file, each to ``--turns`` turns (every turn ended at once), and leave them unfinished. The
server is restarted on the file, so that no game is in memory (they have no turn timer and
no bots: they stay in the store), and one of the two asks for ``my_games`` with a limit of
``--games``, ``--calls`` times. Figures: the round trip of one request, p50 and p99, and the
server's CPU per request (from ``/proc``). Where each game stands is stored with its room
(schema 11): a page is read from the store and no game is replayed, so what a request costs
should not grow with the games' length.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from bench.common import cpu_seconds, machine, percentile, table
from bench.load import running
from client.local.keys import new_key
from client.net.net import GameClient
from shared import messages as m
from shared.actions import EndTurn

MAX_GAMES = 100  # a page of my_games
MAX_TURNS = 200


async def play(url: str, games: int, turns: int, keys: tuple[str, str]) -> None:
    """``games`` games of the two accounts, each played ``turns`` turns, left unfinished."""
    anna, biel = await GameClient.connect(url), await GameClient.connect(url)
    try:
        await anna.hello("Anna", keys[0])
        await biel.hello("Biel", keys[1])
        players = [anna, biel]
        for i in range(games):
            anna.state = biel.state = None
            made = await anna.request(m.CreateRoom, name=f"Joc {i}", seats=2)
            await biel.request(m.JoinRoom, room=made.room)
            await anna.request(m.StartGame)
            push = await anna.wait_state(lambda p: p.view["status"] == "playing")
            for _ in range(turns):
                if push.view["status"] != "playing":
                    break
                await players[push.view["turn"]].act(EndTurn())
                push = await anna.wait_state(lambda p, v=push.version: p.version > v)
            await anna.request(m.LeaveRoom)
            await biel.request(m.LeaveRoom)
    finally:
        await anna.close()
        await biel.close()


async def ask(url: str, key: str, games: int, calls: int) -> list[float]:
    """``calls`` ``my_games`` requests of one page; their round trips."""
    client = await GameClient.connect(url)
    times = []
    try:
        await client.hello("Anna", key)
        for _ in range(calls):
            started = time.perf_counter()
            reply = await client.request(m.MyGames, limit=games)
            times.append(time.perf_counter() - started)
            assert len(reply.entries) == games, reply
    finally:
        await client.close()
    return times


def measure(games: int, turns: int, calls: int) -> list[str]:
    keys = (new_key(), new_key())
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "mygames.sqlite3")
        with running("castell", 10, db=path) as server:
            asyncio.run(play(server.url, games, turns, keys))
        with running("castell", 10, db=path) as server:  # restarted: nothing in memory
            asyncio.run(ask(server.url, keys[0], games, 1))  # connected and warm
            cpu0 = cpu_seconds(server.pid)
            times = asyncio.run(ask(server.url, keys[0], games, calls))
            cpu = cpu_seconds(server.pid) - cpu0
    times.sort()
    return [f"{games} × {turns} turns", f"{percentile(times, 0.5) * 1e3:.2f}ms",
            f"{percentile(times, 0.99) * 1e3:.2f}ms", f"{cpu / calls * 1e3:.2f}ms"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench mygames",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="100",
                        help="unfinished games of the account (up to a page, 100), "
                             "comma-separated for several runs")
    parser.add_argument("--turns", type=int, default=18, help="turns played in each game")
    parser.add_argument("--calls", type=int, default=100, help="my_games requests per run")
    args = parser.parse_args(argv)
    counts = [max(1, min(int(n), MAX_GAMES)) for n in args.games.split(",") if n.strip()]
    turns = max(0, min(args.turns, MAX_TURNS))
    calls = max(1, min(args.calls, 10_000))
    print(f"my_games, every game in the store — {machine()}")
    rows = [["games", "rtt p50", "rtt p99", "server CPU/request"]]
    rows += [measure(n, turns, calls) for n in counts]
    print(table(rows))


if __name__ == "__main__":
    main()
