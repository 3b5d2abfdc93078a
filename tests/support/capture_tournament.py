"""A Swiss tournament as the full-screen client shows it, for ``docs/screens`` and for
tests/test_client_tournaments.py: Anna (the real client in this process,
:func:`tests.support.screens.full_screen`, on an output of the given size) creates a 2-round
tournament of 2-seat tables from the lobby, three other accounts join it over their own
sockets, she starts it; each round's table push takes her to her table, the others resign
their games (the test's choice: Anna wins both), and the screen is captured with
``tournament 1`` shown in her round-2 game and once the tournament is over.

    python -m tests.support.capture_tournament 80x24 > docs/screens/tournament-80x24.txt
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import attrs

from client.local.keys import new_key
from client.net.net import GameClient
from shared import messages as m
from tests.support.accounts import clients
from tests.support.screens import enter, full_screen, shown, status_line, until
from tests.support.servers import TEST_CONFIG, server_url, serving

OTHERS = ("Biel", "Carme", "Dani")


async def push_of(client: GameClient, kind: type) -> Any:
    """The next push of type ``kind`` (the games' own pushes in between skipped)."""
    async with asyncio.timeout(10):
        while True:
            push = await client.pushes.get()
            if isinstance(push, kind):
                return push


async def until_moved(server: Any, tid: str, played: int) -> Any:
    """Tick the director until ``played`` rounds are paired or the tournament ended (each
    tick reads the results the store holds: a game's end is stored before its resignation
    is answered, so this waits for no timer)."""
    for _ in range(200):
        await server.tournaments.tick()
        t = await server.tournaments.get(tid)
        if len(t.played) >= played or t.status != "running":
            return t
        await asyncio.sleep(0.02)
    raise AssertionError("the director did not move on")


async def resign_table(player: GameClient, push: m.TournamentTablePush) -> None:
    """Sit at the table ``push`` gives, resign, leave."""
    await player.request(m.JoinRoom, room=push.room, token=push.token)
    await player.request(m.ResignRequest)
    await player.request(m.LeaveRoom)


@attrs.define
class Capture:
    """What the scenario saw: the screens captured, and the bells Anna's client rang."""

    screens: list[tuple[str, str]] = attrs.Factory(list)
    bells: int = 0
    #: Each tournament push Anna's client had, and the bells it rang.
    pushes: list[tuple[str, int]] = attrs.Factory(list)
    tournament: str = ""


async def scenario(state: Path, columns: int = 80, rows: int = 24) -> Capture:
    out = Capture()
    config = attrs.evolve(TEST_CONFIG, tournament_interval=3600.0)
    async with serving(config=config) as (server, url), clients(server_url(server)) as connect, \
            full_screen(url, "Anna", state, columns=columns, rows=rows) as anna:
        ctl = anna.controller

        ring = anna.bell

        def rang() -> None:  # the bells the controller rings (not those of her turns)
            out.bells += 1
            ring()

        anna.bell = rang  # type: ignore[method-assign]
        told = ctl.on_tournament

        def on_tournament(push: Any) -> None:  # which of them the tournament's pushes rang
            before = out.bells
            told(push)
            out.pushes.append((type(push).__name__, out.bells - before))

        ctl.on_tournament = on_tournament  # type: ignore[method-assign]
        await ctl.start()
        others = {name: await connect(name, new_key()) for name in OTHERS}
        await enter(anna, "tournament create Spring cup rounds=2 seats=2 timer=2m")
        assert "made (id" in status_line(anna), shown(anna)
        tid = out.tournament = ctl.tournaments[0].tournament
        await enter(anna, "tournament join 1")
        for c in others.values():
            await c.request(m.TournamentJoin, tournament=tid)
        await enter(anna, "tournaments")
        out.screens.append(("`tournaments` in the lobby, four players in", shown(anna)))
        await enter(anna, "tournament start 1")
        # round 1 by seed: Anna–Biel, Carme–Dani; Anna's client sits at hers by itself
        pushes = {name: await push_of(c, m.TournamentTablePush) for name, c in others.items()}
        await until(lambda: ctl.session.room == pushes["Biel"].room and ctl.mode == "game")
        for name in ("Biel", "Dani"):
            await resign_table(others[name], pushes[name])
        await until(lambda: ctl.view is not None and ctl.view.status == "finished")
        t = await until_moved(server, tid, 2)
        # round 2: Anna–Carme (1 point each), Biel–Dani; from her finished game to the next
        pushes = {name: await push_of(c, m.TournamentTablePush) for name, c in others.items()}
        await until(lambda: ctl.session.room == pushes["Carme"].room and ctl.mode == "game")
        await resign_table(others["Biel"], pushes["Biel"])
        await others["Carme"].request(m.JoinRoom, room=pushes["Carme"].room,
                                      token=pushes["Carme"].token)
        for _ in range(200):  # Biel–Dani is over: the round waits on Anna's table
            await server.tournaments.tick()
            t = await server.tournaments.get(tid)
            if any(table["places"] is not None for table in t.played[-1]["tables"]):
                break
            await asyncio.sleep(0.02)
        await enter(anna, "tournament 1")
        out.screens.append(("`tournament 1` typed in her round-2 game", shown(anna)))
        await others["Carme"].request(m.ResignRequest)
        t = await until_moved(server, tid, 3)
        assert t.status == "finished"
        await until(lambda: "is over" in status_line(anna))
        await enter(anna, "leave")
        await until(lambda: "is over" in status_line(anna) or ctl.mode == "lobby")
        await enter(anna, f"tournament {tid}")
        out.screens.append(("`tournament ID` in the lobby once it is over", shown(anna)))
    return out


def main(argv: list[str]) -> None:
    size = argv[0] if argv else "80x24"
    columns, rows = (int(n) for n in size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        got = asyncio.run(scenario(Path(tmp), columns, rows))
    print(f"The full-screen client in a {columns}x{rows} terminal: Anna plays a 2-round "
          "Swiss\ntournament of 2-seat tables against three other accounts (each round's "
          "table\npush seats her, with the bell).")
    for title, text in got.screens:
        print()
        print(f"── {title} ".ljust(columns, "─"))
        print("\n".join(line.rstrip() for line in text.splitlines()))


if __name__ == "__main__":
    main(sys.argv[1:])
