"""A challenge as the full-screen client shows it, for ``docs/screens``: Anna challenges Biel
to a 3-seat game from the lobby; Biel's screen when the challenge arrives, then both when
Biel has accepted and they sit in the started game (a bot in the third seat). The real
clients in this process (:func:`tests.support.screens.full_screen`) against a real server.

    python -m tests.support.capture_challenge 80x24 > docs/screens/challenge-80x24.txt
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from tests.support.screens import enter, full_screen, shown, status_line, until
from tests.support.servers import serving


def _snapshot(text: str, title: str, columns: int) -> str:
    head = f"── {title} "
    return head + "─" * max(0, columns - len(head)) + "\n" + text.rstrip() + "\n"


async def capture(columns: int, rows: int) -> str:
    out: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        async with serving() as (_, url), \
                full_screen(url, "Anna", home / "anna", columns=columns, rows=rows) as anna, \
                full_screen(url, "Biel", home / "biel", columns=columns, rows=rows) as biel:
            await anna.controller.start()
            await biel.controller.start()
            await enter(anna, "challenge Biel seats=3 timer=120")
            out.append(_snapshot(shown(anna), "Anna: challenge Biel seats=3 timer=120",
                                 columns))
            await until(lambda: "challenges you" in status_line(biel))
            out.append(_snapshot(shown(biel), "Biel: the challenge arrives (the bell rings)",
                                 columns))
            await enter(biel, "accept")
            for screen in (anna, biel):
                await until(lambda s=screen: "matched!" in status_line(s))
                await until(lambda s=screen: s.controller.view is not None)
            out.append(_snapshot(shown(biel), "Biel: accept — seated in the started game",
                                 columns))
    return "".join(out)


def main(argv: list[str]) -> int:
    columns, rows = (int(n) for n in (argv[0] if argv else "80x24").split("x"))
    sys.stdout.write(asyncio.run(capture(columns, rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
