"""The lobby's ``friends`` and ``inbox`` as the full-screen client shows them, for
``docs/screens``: a server in this process, a few players set up through real sockets, and
Anna's client (tests/support/screens.py ``full_screen``) on an output of the given size.

    python -m tests.support.capture_social 80x24 > docs/screens/social-80x24.txt

Anna follows Biel (who follows her back and plays in a room), Carme (offline) and Dani
(who hides where she is), and blocks Eloi; her inbox holds a follow, a correspondence
game's turn and the host's announcement.
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path

from client.local.keys import new_key
from client.net.net import GameClient
from shared import messages as m
from tests.support.screens import enter, full_screen, shown
from tests.support.servers import serving


async def _signed_in(url: str, name: str) -> GameClient:
    client = await GameClient.connect(url)
    await client.hello(name, new_key())
    return client


async def capture(columns: int, rows: int) -> list[str]:
    """The two screens, each under a title line."""
    out: list[str] = []
    with tempfile.TemporaryDirectory() as home:
        async with serving() as (server, url):
            anna_home = Path(home) / "anna"
            async with full_screen(url, "Anna", anna_home, columns=columns, rows=rows) as anna:
                await anna.controller.start()
            players = {n: await _signed_in(url, n) for n in ("Biel", "Carme", "Dani", "Eloi")}
            for name in ("Carme", "Eloi"):
                await players[name].close()
            await players["Dani"].request(m.PresenceRequest, visible=False)
            made = await players["Biel"].request(m.CreateRoom, name="Dissabte", seats=3)
            async with full_screen(url, "Anna", anna_home, columns=columns, rows=rows) as anna:
                await anna.controller.start()
                for line in ("follow Biel", "follow Carme", "follow Dani", "block Eloi"):
                    await enter(anna, line)
                await players["Biel"].request(m.Follow, name="Anna")
                ids = [c.account for c in server.connections if c.name == "Anna"]
                assert ids[0] is not None
                await server.inbox.notify(ids[0], "your_turn", "your turn in Cartes",
                                          room=made.room, push=False)
                await server.inbox.notify(ids[0], "announcement",
                                          "the server restarts at noon for ten minutes",
                                          push=False)
                await enter(anna, "friends")
                out.append(_titled("friends", shown(anna), columns))
                await enter(anna, "inbox")
                out.append(_titled("inbox", shown(anna), columns))
            for client in players.values():
                await client.close()
    return out


def _titled(title: str, text: str, columns: int) -> str:
    head = f"── {title} "
    # Room ids and the port vary from run to run.
    text = re.sub(r"\br[0-9a-f]{8}\b", "r7f3a09c1", text)
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:8765", text)
    return head + "─" * max(0, columns - len(head)) + "\n" + text + "\n"


def main(argv: list[str]) -> int:
    size = re.fullmatch(r"(\d+)x(\d+)", argv[0]) if len(argv) == 1 else None
    if size is None:
        print("usage: python -m tests.support.capture_social COLUMNSxROWS", file=sys.stderr)
        return 2
    columns, rows = int(size.group(1)), int(size.group(2))
    screens = asyncio.run(capture(columns, rows))
    sys.stdout.write(f"The lobby's `friends` and `inbox` in a {columns}x{rows} terminal "
                     "(the full-screen client).\n\n" + "\n".join(screens))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
