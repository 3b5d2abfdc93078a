"""The review's charts (``docs/review.md``), drawn in the terminal by plotext, and the tables
``--plain`` prints instead.

Three charts, each sized to the screen it is drawn on (80x24 and up):

* the score race: every player's points after each round (§9, counted as it would be if the
  game ended then), one line per player drawn with the player's letter;
* the final score by category: one bar per player, its five §9 categories stacked, each
  drawn with its own letter (T tower, D diversity, P prizes, S sizes, L local performances)
  so that it reads without colours too;
* the points lost: each player's expected points lost (:mod:`shared.review`) round by
  round, one bar per player and round.

Names come from a record file and go through :func:`~shared.sanitize.safe`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import plotext as plt

from client.screens.render import SEAT_STYLES
from shared.review import CATEGORIES, Review
from shared.sanitize import safe

#: Each §9 category's letter in the breakdown, and its short name.
CATEGORY_MARKS: Final = {"tower": "T", "diversity": "D", "prizes": "P", "sizes": "S",
                         "performances": "L"}
CATEGORY_NAMES: Final = {"tower": "tower", "diversity": "diversity", "prizes": "prizes",
                         "sizes": "sizes", "performances": "local perf."}
#: The smallest chart drawn; a smaller screen gets the table.
MIN_COLUMNS, MIN_ROWS = 40, 10


def seat_marks(names: Sequence[str]) -> list[str]:
    """One letter per seat for the charts: the name's initial when each is a distinct ASCII
    letter or digit, else the seat numbers from 1."""
    initials = [safe(n)[:1].upper() for n in names]
    if all(i.isascii() and i.isalnum() for i in initials) and len(set(initials)) == len(names):
        return initials
    return [str(seat + 1) for seat in range(len(names))]


def _names(review: Review, width: int = 12) -> list[str]:
    return [safe(n)[:width] for n in review.seats]


def _start(width: int, height: int, legend: Sequence[str]) -> None:
    plt.clf()
    plt.plotsize(max(MIN_COLUMNS, width),
                 max(MIN_ROWS, height - _legend_rows(legend, max(MIN_COLUMNS, width))))
    plt.theme("clear")


def _done(color: bool, legend: Sequence[str], width: int) -> list[str]:
    """The chart built, and its legend on the lines below it (plotext's own legend would sit
    on the plot, over the data)."""
    text = plt.build()
    if not color:
        text = plt.uncolorize(text)
    lines = [line.rstrip() for line in text.rstrip("\n").split("\n")]
    row = ""
    for item in legend:
        if row and len(row) + 3 + len(item) > width:
            lines.append(row)
            row = ""
        row = f"{row} · {item}" if row else f" {item}"
    return [*lines, row] if row else lines


def _legend_rows(items: Sequence[str], width: int) -> int:
    rows, row = 0, 0
    for item in items:
        if row and row + 3 + len(item) > width:
            rows, row = rows + 1, 0
        row = row + 3 + len(item) if row else 1 + len(item)
    return rows + (1 if row else 0)


def _color(seat: int, color: bool) -> str | None:
    return SEAT_STYLES[seat % len(SEAT_STYLES)] if color else None


def score_race(review: Review, width: int, height: int, *, color: bool = False) -> list[str]:
    """Every player's points after each round, as lines in ``width`` × ``height`` cells."""
    rounds = list(range(len(review.scores)))
    marks = seat_marks(review.seats)
    legend = [f"{m} {name} {review.scores[-1][seat].total}"
              for seat, (m, name) in enumerate(zip(marks, _names(review), strict=True))]
    _start(width, height, legend)
    for seat in range(len(review.seats)):
        ys = [r[seat].total for r in review.scores]
        plt.plot(rounds, ys, marker=marks[seat], color=_color(seat, color))
    plt.xticks(rounds)
    plt.title("Score race: points after each round")
    plt.xlabel("round")
    return _done(color, legend, width)


def breakdown(review: Review, width: int, height: int, *, color: bool = False) -> list[str]:
    """The final points of each player by §9 category, as stacked bars."""
    final = [p.final for p in review.players]
    names = [f"{n} {f.total}" for n, f in zip(_names(review, 10), final, strict=True)]
    series = [[getattr(f, c) for f in final] for c in CATEGORIES]
    legend = [f"{CATEGORY_MARKS[c]} {CATEGORY_NAMES[c]}" for c in CATEGORIES]
    _start(width, height, legend)
    top = max((f.total for f in final), default=0)
    plt.stacked_bar(names[::-1], [s[::-1] for s in series], orientation="h", width=0.5,
                    marker=[CATEGORY_MARKS[c] for c in CATEGORIES],
                    color=[*SEAT_STYLES, "red"] if color else None)
    step = 10 if top <= 100 else 20
    end = max(step, -(-top // step) * step)
    plt.xlim(0, end)
    plt.xticks(list(range(0, end + 1, step)))
    plt.title("Final score by category")
    return _done(color, legend, width)


def points_lost(review: Review, width: int, height: int, *, color: bool = False) -> list[str]:
    """Each player's expected points lost in each round (bars; an unreviewed turn is 0)."""
    rounds = sorted({t.round for t in review.turns}) or [1]
    marks = seat_marks(review.seats)
    lost = {(t.round, t.seat): t.lost for t in review.turns}
    series = [[lost.get((r, seat), 0.0) for r in rounds] for seat in range(len(review.seats))]
    legend = [f"{m} {name} {p.lost:.1f} in all" for m, name, p in
              zip(marks, _names(review), review.players, strict=True)]
    _start(width, height, legend)
    top = max((v for s in series for v in s), default=0.0)
    plt.multiple_bar(rounds, series, marker=marks,
                     color=[_color(s, color) for s in range(len(series))] if color else None)
    plt.ylim(0, max(4.0, top * 1.1))
    plt.title("Points lost each round (expected, against the hard bot)")
    plt.xlabel("round")
    return _done(color, legend, width)


#: The charts, in the order the viewer shows them: (name, drawing).
CHARTS: Final[tuple[tuple[str, Callable[..., list[str]]], ...]] = (
    ("score race", score_race),
    ("final score by category", breakdown),
    ("points lost", points_lost),
)


# The tables of --plain -----------------------------------------------------------------------


def table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows of cells as aligned lines: the first column left, the others right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=True)]
        out.append("  ".join(cells).rstrip())
    return out


def race_table(review: Review) -> list[str]:
    """The score race as a table: a row per player, a column per round."""
    head = ["points after round", *(str(r) for r in range(1, len(review.scores)))]
    rows = [head] + [[name, *(str(r[seat].total) for r in review.scores[1:])]
                     for seat, name in enumerate(_names(review, 18))]
    return table(rows)


def breakdown_table(review: Review) -> list[str]:
    """The final score by category: a row per player."""
    head = ["final score", *(CATEGORY_NAMES[c] for c in CATEGORIES), "total"]
    rows = [head] + [[name, *(str(getattr(p.final, c)) for c in CATEGORIES),
                      str(p.final.total)]
                     for name, p in zip(_names(review, 18), review.players, strict=True)]
    return table(rows)


def lost_table(review: Review) -> list[str]:
    """The expected points lost: a row per player, a column per round, and the sum."""
    rounds = sorted({t.round for t in review.turns})
    lost = {(t.round, t.seat): t for t in review.turns}

    def cell(r: int, seat: int) -> str:
        turn = lost.get((r, seat))
        return "-" if turn is None or not turn.reviewed else f"{turn.lost:.1f}"

    head = ["points lost in round", *(str(r) for r in rounds), "all"]
    rows = [head] + [[name, *(cell(r, seat) for r in rounds), f"{p.lost:.1f}"]
                     for seat, (name, p) in enumerate(zip(_names(review, 18), review.players,
                                                          strict=True))]
    return table(rows)
