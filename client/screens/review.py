"""A game's review in words (``docs/review.md``): the lines the review viewer shows above the
board, its summary page, and the whole review as ``--plain`` prints it.

Everything is read off a :class:`shared.review.Review`; actions are written as the commands
that play them (:func:`client.control.commands.action_to_command`), towers as ``build``
writes them. Player names come from a record file and go through
:func:`~shared.sanitize.safe`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Final

from client.control.commands import action_to_command
from client.screens.charts import breakdown_table, lost_table, race_table
from client.screens.charts import table as _table
from shared.actions import Action, EndTurn
from shared.board import ROUNDS
from shared.describe import region_name
from shared.review import (
    CATEGORIES,
    THRESHOLDS,
    FestivalReview,
    Points,
    Review,
    TowerCheck,
    TurnReview,
)
from shared.sanitize import safe

#: How a mark reads in a sentence.
MARK_WORDS: Final = {"good": "a good move", "inaccuracy": "an inaccuracy",
                     "mistake": "a mistake", "blunder": "a blunder"}
_PLACE: Final = ("1st", "2nd", "3rd", "4th")


def name_of(review: Review, seat: int) -> str:
    return safe(review.seats[seat])


def line_text(actions: Sequence[Action]) -> str:
    """A line of actions as the commands that play it: ``move cen · recruit 7 7 · end``."""
    return " · ".join(action_to_command(a) for a in actions) or "nothing"


def _build(levels: Sequence[Sequence[int]]) -> str:
    return "build " + " / ".join(" ".join(map(str, level)) for level in levels)


def points_text(points: Points) -> str:
    """``3 (prizes 3, diversity 1)``: a total, then the categories that moved (§9)."""
    parts = [f"{c} {getattr(points, c):+d}" for c in CATEGORIES if getattr(points, c)]
    return f"{points.total:+d}" + (f" ({', '.join(parts)})" if parts else "")


def _until(turn: TurnReview) -> str:
    if turn.until is None or turn.until > ROUNDS:
        return "the end of the game"
    return f"the end of round {turn.until}"


def tower_line(check: TowerCheck) -> str:
    """The solver's best tower for one goal of the turn, beside the tower that stood."""
    if check.size is None:
        goal = "tallest tower"
        unit = "levels"
    else:
        goal = f"{check.town} ({region_name(check.region or '')}), size {check.size}"
        unit = "points"
    if check.best is None:
        return f"best tower for {goal}: none can enter with this team and these skills"
    train = f"train {check.train} first, then " if check.train else ""
    stood = ("yours does not enter" if check.played is None
             else f"yours {check.played}")
    where = "" if check.size is None or check.there else ", your pawn elsewhere"
    return (f"best tower for {goal}: {train}{_build(check.best)}, {check.score} {unit}; "
            f"{stood}{where}")


def turn_head(review: Review, turn: TurnReview) -> str:
    """``round 4 · Biel's turn (13/40) · a mistake: 5.7 points lost``."""
    head = (f"round {turn.round} · {name_of(review, turn.seat)}'s turn "
            f"({turn.index + 1}/{len(review.turns)})")
    if not turn.reviewed or turn.mark is None:
        return f"{head} · not reviewed"
    if turn.lost == 0:
        return f"{head} · {MARK_WORDS[turn.mark]}: no points lost"
    return f"{head} · {MARK_WORDS[turn.mark]}: {turn.lost:.1f} points lost"


def _line(actions: Sequence[Action]) -> str:
    """A line without its closing ``end``."""
    return line_text([a for a in actions if not isinstance(a, EndTurn)]) or "end"


def turn_lines(review: Review, turn: TurnReview, width: int | None = None) -> list[str]:
    """What the review says of one turn: the head, what was played and earned, the better
    line and both lines' expectations, the best towers (wrapped to ``width``)."""
    out = [turn_head(review, turn),
           f"played: {_line(turn.played)} (earned {points_text(turn.earned)} by the end of "
           f"the round)"]
    if turn.reviewed and turn.hard is not None:
        if turn.samples == 0:
            out.append("the hard bot: the same line (it weighed no other)")
        elif turn.lost == 0 and list(turn.hard) == list(turn.played):
            out.append(f"the hard bot: the same line, expecting {turn.hard_expected:+.1f} "
                       f"against the best rival by {_until(turn)}")
        else:
            better = "better" if turn.lost > 0 else "the hard bot"
            out.append(f"{better}: {_line(turn.hard)}")
            out.append(f"expected against the best rival by {_until(turn)}: "
                       f"{turn.hard_expected:+.1f} for it, {turn.played_expected:+.1f} as "
                       f"played ({turn.samples} bag order{'s' if turn.samples != 1 else ''})")
    out.extend(tower_line(check) for check in turn.towers)
    return wrap(out, width)


def wrap(lines: Sequence[str], width: int | None, indent: str = "  ") -> list[str]:
    """Each line cut at spaces to ``width`` columns (None: as it is), the rest indented."""
    if width is None:
        return list(lines)
    out = []
    for line in lines:
        lead = line[:len(line) - len(line.lstrip(" "))]
        out.extend(textwrap.wrap(line, width, initial_indent="", subsequent_indent=lead + indent,
                                 break_on_hyphens=False) or [""])
    return out


def short_lines(review: Review, turn: TurnReview) -> list[str]:
    """A costly turn: where, what it lost, what was better."""
    return [f"round {turn.round} (turn {turn.index + 1}): {turn.lost:.1f} lost, "
            f"{MARK_WORDS.get(turn.mark or '', 'not reviewed')}",
            f"  better: {_line(turn.hard or ())}"]


def festival_lines(review: Review, festival: FestivalReview) -> list[str]:
    """A festival held: who took what, and who could have entered and won."""
    head = (f"round {festival.round}: {festival.town} ({region_name(festival.region)}), "
            f"size {festival.size}")
    took = []
    for r in festival.results:
        prize = r.prize or "no prize"
        token = " and the size token" if r.size_token else ""
        took.append(f"{name_of(review, r.seat)} {r.score} ({prize}{token})")
    out = [head, "  entered: " + ("; ".join(took) if took else "nobody")]
    could = [c for c in festival.chances if c.would_win and c.seat not in festival.winners]
    if could:
        out.append("  could have won: " + "; ".join(
            f"{name_of(review, c.seat)} with {c.best}"
            + (f" (training {c.train})" if c.train else "") for c in could))
    return out


def player_rows(review: Review) -> list[str]:
    """A table of the players: final points, accuracy, points lost, turns by mark."""
    head = ["player", "points", "accuracy", "lost", "good", "inacc.", "mistakes",
            "blunders"]
    rows = [head]
    for p in review.players:
        accuracy = "-" if p.accuracy is None else f"{p.accuracy:.0f}%"
        rows.append([name_of(review, p.seat)[:14] + (" (bot)" if p.bot else ""),
                     str(p.final.total), accuracy, f"{p.lost:.1f}", *map(str, p.marks)])
    return _table(rows)


def summary_lines(review: Review, width: int | None = None) -> list[str]:
    """The summary page: the players, their costliest turns, the festivals (wrapped to
    ``width``)."""
    state = "" if review.finished else " (unfinished: its whole turns)"
    out = [f"Review of {safe(review.name)!r}{state}: {len(review.turns)} turns against the "
           f"hard bot ({review.budget.samples} samples × {review.budget.candidates} "
           f"candidates)",
           f"a turn's mark by the expected points it lost: inaccuracy from {THRESHOLDS[0]:g}, "
           f"mistake from {THRESHOLDS[1]:g}, blunder from {THRESHOLDS[2]:g}", ""]
    out.extend(player_rows(review))
    out += ["", "Costliest turns:"]
    for p in review.players:
        if not p.costliest:
            out.append(f"  {name_of(review, p.seat)}: none")
            continue
        out.append(f"  {name_of(review, p.seat)}:")
        out.extend(f"    {line}" for i in p.costliest
                   for line in short_lines(review, review.turns[i]))
    if review.festivals:
        out += ["", "Festivals:"]
        for festival in review.festivals:
            out.extend(f"  {line}" for line in festival_lines(review, festival))
    return wrap(out, width)


def plain_lines(review: Review) -> list[str]:
    """The whole review as ``castell review --plain`` prints it: the summary, the charts'
    tables, then every turn."""
    out = summary_lines(review)
    out += ["", *race_table(review), "", *breakdown_table(review), "", *lost_table(review)]
    for turn in review.turns:
        out += ["", *turn_lines(review, turn)]
    return out
