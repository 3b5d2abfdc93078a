"""``castell review FILE`` as the terminal shows it, for ``docs/screens``: a seeded 4-seat game
of bots (hard, normal, easy, normal: Anna, Biel, Carme, Dani) written to a record, reviewed
at the default budget in a pseudo-terminal of the given size; the screen captured with the
progress bar half way, then the summary, the costliest turn (its board as it stood and after
the better line) and the three charts; or, with ``--plain``, the whole review as printed.

    python -m tests.support.capture_review 80x24 > docs/screens/review-80x24.txt
    python -m tests.support.capture_review 100x40 > docs/screens/review-100x40.txt
    python -m tests.support.capture_review 80x24 --plain > docs/screens/review-plain.txt
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs
import pexpect

from bench.review import LINEUP, bot_game
from shared.review import DEFAULT_BUDGET
from tests.support.terminal import ROOT, Terminal, client_env

NAMES = ("Anna", "Biel", "Carme", "Dani")
SEED = 4


def _snapshot(term: Terminal, title: str, columns: int) -> str:
    head = f"── {title} "
    return head + "─" * max(0, columns - len(head)) + "\n" + term.text().rstrip() + "\n"


def _halfway(term: Terminal, timeout: float = 120.0) -> None:
    """Pump until the bar shows between a third and two thirds of the turns (no settling:
    the bar moves on)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        term.pump(0.05)
        found = re.search(r"(\d+)/(\d+) turns", term.text())
        if found and 1 / 3 <= int(found.group(1)) / int(found.group(2)) <= 2 / 3:
            return
    raise AssertionError("the progress bar never showed half way:\n" + term.text())


def capture(columns: int, rows: int, out: list[str], *, plain: bool = False) -> None:
    record = attrs.evolve(bot_game(LINEUP, SEED, DEFAULT_BUDGET), name="Friday night",
                          seats=NAMES, bots=(False, True, True, True))
    with tempfile.TemporaryDirectory() as folder:
        state = Path(folder)
        path = state / "game.json"
        path.write_text(record.to_json())
        if plain:
            done = subprocess.run([sys.executable, "-m", "client", "review", str(path),
                                   "--plain"], cwd=ROOT, env=client_env(state),
                                  capture_output=True, text=True, timeout=600, check=True)
            out.append(done.stdout)
            return
        term = Terminal(["review", str(path)], state, columns=columns, rows=rows)
        try:
            _halfway(term)
            out.append(_snapshot(term, "the review under way: its progress bar", columns))
            term.wait_for(r" · summary", timeout=300)
            out.append(_snapshot(term, "the summary", columns))
            term.type("x")
            term.wait_for(r" · turn \d+/40")
            out.append(_snapshot(term, "x: the costliest turn, the board as it stood", columns))
            term.type("bb")
            term.wait_for(r"the board after the better line")
            out.append(_snapshot(term, "b b: the board after the better line", columns))
            for i, name in enumerate(("score race", "final score by category",
                                      "points lost"), 1):
                term.type("c")
                term.wait_for(rf"chart {i}/3: {name}")
                out.append(_snapshot(term, f"c: chart {i}, {name}", columns))
            term.type("q")
            term.child.expect(pexpect.EOF, timeout=10)
        finally:
            term.close()


def main(argv: list[str]) -> int:
    plain = "--plain" in argv
    args = [a for a in argv if a != "--plain"]
    size = re.fullmatch(r"(\d+)x(\d+)", args[0]) if len(args) == 1 else None
    if size is None:
        print("usage: python -m tests.support.capture_review COLUMNSxROWS [--plain]",
              file=sys.stderr)
        return 2
    columns, rows = int(size.group(1)), int(size.group(2))
    how = " --plain" if plain else ""
    out = [f"`castell review FILE{how}` of a seeded 4-seat game (Anna, and three bots: "
           f"{', '.join(LINEUP[1:])}; Anna's seat played by the hard bot) in a "
           f"{columns}x{rows} terminal.\n"]
    capture(columns, rows, out, plain=plain)
    sys.stdout.write("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
