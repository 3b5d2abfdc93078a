"""A whole game as the terminal shows it, for ``docs/screens``: ``castell play`` against three
bots in a pseudo-terminal of the given size, the player (Anna) typing a real command for
each of her actions, the screen captured at her turn in rounds 1, 4 and 8 and at the end,
each time as it stands and with the game log open; or, with ``--plain``, the whole game as
printed.

    python -m tests.support.capture 80x24 > docs/screens/game-80x24.txt
    python -m tests.support.capture 100x40 > docs/screens/game-100x40.txt
    python -m tests.support.capture 80x24 --plain > docs/screens/game-plain.txt

Anna plays what the ``greedy`` bot would in her seat: the capture reads her game from
``play.sqlite3`` (read-only, beside the running client), asks :mod:`shared.bots` for the
action and types :func:`client.control.commands.action_to_command` of it. The bots take no pause.
"""

from __future__ import annotations

import asyncio
import io
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import pexpect

from client.control.commands import action_to_command
from server.ops.export import record_file
from server.store import open_store
from shared.actions import EndTurn
from shared.bots import greedy_action
from shared.record import replay
from shared.state import GameState
from tests.support.terminal import Terminal

ESC = "\x1b"
PAGE_DOWN = "\x1b[6~"
#: Anna's turns at which the screen is captured, by round.
ROUNDS = (1, 4, 8)


def _state(data: Path) -> tuple[GameState, int] | None:
    """The game kept in ``play.sqlite3`` under ``data`` and how many actions it holds."""

    async def read() -> tuple[GameState, int] | None:
        db = data / "castell" / "play.sqlite3"
        if not db.exists():
            return None
        async with open_store(db, read_only=True) as store:
            rooms = await store.unfinished_summaries() or []
            finished = await store.list_finished(1)
            room = rooms[0].room.room if rooms else finished[0].room if finished else None
            record = await store.load(room) if room is not None else None
        if record is None or record.room.status == "waiting":
            return None
        return replay(record_file(record))[-1][0], len(record.actions)

    return asyncio.run(read())


def _snapshot(term: Terminal, title: str, columns: int) -> str:
    head = f"── {title} "
    return head + "─" * max(0, columns - len(head)) + "\n" + term.text().rstrip() + "\n"


def capture(columns: int, rows: int, out: list[str], *, plain: bool = False) -> None:
    """Play the game and add its captures to ``out``; ``plain``: the whole ``--plain``
    transcript instead (what the client printed and the tty echoed of what Anna typed)."""
    with tempfile.TemporaryDirectory() as folder:
        state_dir = Path(folder)
        term = Terminal(["play", "--seats", "4", "--bot-delay", "0", "--name", "Anna",
                         *(["--plain"] if plain else [])],
                        state_dir, columns=columns, rows=rows)
        transcript = io.StringIO()
        term.child.logfile_read = transcript
        rng = random.Random(0)
        taken: set[int] = set()
        try:
            if not plain:
                term.wait_for(r"round 1/10", timeout=30)
            done = -1
            end = time.monotonic() + 600
            while time.monotonic() < end:
                found = _state(state_dir / "data")
                if found is None:
                    term.pump(0.2)
                    continue
                state, count = found
                if state.over and plain:
                    term.type("quit\r")
                    term.child.expect(pexpect.EOF, timeout=20)
                    out.append(transcript.getvalue().replace("\r\n", "\n"))
                    return
                if state.over:
                    term.wait_for(r"game over", timeout=20)
                    out.append(_snapshot(term, "the end", columns))
                    term.type(ESC + "log\r")
                    term.wait_for(r"──── Game log")
                    out.append(_snapshot(term, "the end, the log open", columns)
                              )
                    term.type(ESC)
                    term.quit()
                    return
                if state.turn != 0 or count == done:
                    term.pump(0.2)
                    continue
                if not plain:
                    term.wait_for(rf"round {state.round}/10 · your turn", timeout=20)
                if not plain and state.round in ROUNDS and state.round not in taken:
                    taken.add(state.round)
                    out.append(_snapshot(term, f"round {state.round}, Anna's turn", columns))
                    term.type(ESC + "log\r")
                    term.wait_for(r"──── Game log")
                    out.append(_snapshot(term, f"round {state.round}, Anna's turn, the log "
                                               "open", columns))
                    term.type(ESC)
                    term.settle()
                action = greedy_action(state, 0, rng)
                command = "end!" if isinstance(action, EndTurn) else action_to_command(action)
                done = count
                term.type(command + "\r")
                term.settle()
            raise AssertionError("the game did not end in ten minutes:\n" + term.text())
        finally:
            term.close()


def main(argv: list[str]) -> int:
    plain = "--plain" in argv
    args = [a for a in argv if a != "--plain"]
    size = re.fullmatch(r"(\d+)x(\d+)", args[0]) if len(args) == 1 else None
    if size is None:
        print("usage: python -m tests.support.capture COLUMNSxROWS [--plain]", file=sys.stderr)
        return 2
    columns, rows = int(size.group(1)), int(size.group(2))
    how = "--plain " if plain else ""
    out = [f"`castell play {how}--seats 4` against three bots in a {columns}x{rows} terminal; "
           "Anna types each of her actions as a command (the greedy bot's choice in her "
           "seat).\n"]
    capture(columns, rows, out, plain=plain)
    sys.stdout.write("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
