"""Bots' fair share of the workers: another address's hard bot beside one address's many.

    python -m bench botshare [--rooms 100] [--turns 3] [--think 1.5] [--workers 2]
                             [--hog-seconds 300] [--server-root DIR]

A real ``castell-server`` process (its bots thinking in ``--workers`` worker processes, for
``--think`` seconds a ``hard`` decision, acting ``--bot-delay`` apart as a host's would) is
given ``--rooms`` rooms of one client and three ``hard`` bots, all from 127.0.0.1 (the hog:
its client ends each of its turns at once, so its bots think all the time); then one room of
one client and one ``hard`` bot from 127.0.0.2 (the honest room). Measured in the honest room
over ``--turns`` of its bot's turns: from the client's ``end_turn`` answered to its bot's
first action (the decision's wait for a worker, and its thought); and the same in the hog's
rooms, as many turns (waited for at most ``--hog-seconds``). ``--server-root`` runs the
server of another checkout (its ``server`` package), so that a change can be measured
against the code before it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.common import machine
from client.net.net import GameClient
from shared import messages as m
from shared.actions import EndTurn

ROOT = Path(__file__).resolve().parent.parent


def _start(root: Path, args: argparse.Namespace) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, PYTHONPATH=str(root))
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", "--port", "0", "--db", ":memory:", "--rate", "100000",
         "--address-rate", "100000", "--address-burst", "100000",
         "--rooms-per-address", str(args.rooms + 10), "--log-level", "error",
         "--bot-workers", str(args.workers), "--bot-think", str(args.think),
         "--bot-delay", str(args.bot_delay)],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "ws://" not in line:
        proc.kill()
        raise RuntimeError("the server did not start")
    return proc, line[line.index("ws://"):].split()[0]


async def _room(url: str, bots: int, name: str, **connect: object) -> GameClient:
    client = await GameClient.connect(url, **connect)
    await client.hello(name)
    await client.request(m.CreateRoom, name="Bots", seats=bots + 1)
    for _ in range(bots):
        await client.request(m.AddBot, level="hard")
    await client.request(m.StartGame)
    await client.wait_state(lambda p: p.view["status"] == "playing")
    return client


async def _waits(client: GameClient, waits: list[float], wanted: int, *,
                 say: str | None = None) -> None:
    """End each of seat 0's turns at once; time the bot that plays next, ``wanted`` times."""
    while len(waits) < wanted:
        client.drain()
        assert client.state is not None
        if client.state.view["status"] != "playing":
            return
        if client.state.view["turn"] != 0:
            await client.wait_state(lambda p, v=client.state.version: p.version > v, 600)
            continue
        version = await client.act(EndTurn())
        asked = time.monotonic()
        after = await client.wait_state(lambda p, v=version: p.version >= v, 600)
        if after.view["turn"] == 0 or after.view["status"] != "playing":
            continue
        await client.wait_state(lambda p, v=version: p.version > v, 600)
        waits.append(time.monotonic() - asked)
        if say is not None:
            print(f"  {say}: {waits[-1]:.2f} s", flush=True)


def _line(label: str, waits: list[float]) -> str:
    if not waits:
        return f"{label:<28} (none measured)"
    return (f"{label:<28} p50 {statistics.median(waits):6.2f} s   max {max(waits):6.2f} s   "
            f"({len(waits)} turns)")


async def run(args: argparse.Namespace) -> None:
    root = Path(args.server_root).resolve() if args.server_root else ROOT
    proc, url = _start(root, args)
    hogs: list[GameClient] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        started = time.monotonic()
        for _ in range(args.rooms):
            hogs.append(await _room(url, 3, "Hog"))
        hog_waits: list[float] = []
        tasks = [asyncio.create_task(_waits(c, hog_waits, 1_000_000)) for c in hogs]
        honest = await _room(url, 1, "Honest", local_addr=("127.0.0.2", 0))
        honest_waits: list[float] = []
        await _waits(honest, honest_waits, args.turns, say="honest room's bot")
        await honest.close()
        # the hog's own bots, for comparison: as many turns as the honest room's (bounded)
        deadline = time.monotonic() + args.hog_seconds
        while len(hog_waits) < args.turns and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        print(f"{args.rooms} rooms of 3 hard bots from one address, 1 from another; "
              f"{args.workers} workers, think {args.think} s, bot delay {args.bot_delay} s "
              f"({root.name}: {time.monotonic() - started:.0f} s)")
        print(_line("honest room's bot", honest_waits))
        print(_line("the hog's rooms' bots", hog_waits))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for client in hogs:
            await client.close()
        proc.terminate()
        proc.wait(30)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench botshare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, default=100)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--think", type=float, default=1.5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--bot-delay", type=float, default=0.6)
    parser.add_argument("--hog-seconds", type=float, default=300.0,
                        help="how long to wait, at most, for the hog's rooms' turns to time")
    parser.add_argument("--server-root", default=None,
                        help="a checkout whose server to run (default: this one)")
    args = parser.parse_args(argv)
    print(machine())
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
