"""A room's public view and its events as a page's board: plain data for the templates.

What the terminal shows of a game (``client/screens/render.py``), in the same words
(:mod:`shared.describe`): the header (round, whose turn and what it has done, the time left),
the regions with their castellers, pawns, wheel tiles and coming festivals, the festival
calendar and the prizes left, the local performances, one card per player (where, best tower,
score so far, team, tokens and skills, the tower drawn level by level, what they took), the
final table once the game is over, and the last events as lines.

Everything here is read off a :class:`shared.view.View`, the view every member of a room is
pushed: a spectator's, which holds no seed and shows the bag only as a count, so a page can
show no more than a spectator sees. Text that players typed goes through
:func:`shared.sanitize.safe` (in :mod:`shared.describe`, and again when a template writes
it) and is escaped by the templates; nothing here writes HTML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from shared import describe as d
from shared.board import REGION_NAMES, REGIONS, ROUNDS
from shared.describe import Part
from shared.view import PlayerView, RoomStatus, View

#: The event lines a board shows at most.
EVENT_LINES: Final = 14
#: Each column of the final table, and its short name on a narrow screen.
SHORT: Final = {"tower": "tow", "diversity": "div", "prizes": "priz", "sizes": "size",
                "performances": "perf", "total": "total"}
#: The event kinds a page leaves out: chat is said to a room's members, not to the web.
LEFT_OUT: Final = frozenset({"chat"})


@attrs.frozen
class Line:
    """One line of events: its parts (a part with a seat names that seat's player), and
    whether it belongs to the line above (a festival's result under its title)."""

    parts: tuple[Part, ...]
    sub: bool = False


def event_lines(view: View, events: Sequence[Mapping[str, Any]],
                limit: int = EVENT_LINES) -> list[Line]:
    """The last ``limit`` lines of ``events`` (wire maps, oldest first), as the terminal's
    log writes them: a training folded with the skill it raised, each action with the
    region it happened in, a festival's results under its title."""
    # the lines come from the last events; a few more give their regions and foldings
    kept = [e for e in events if e.get("kind") not in LEFT_OUT][-limit * 3:]
    folded = d.fold_training(kept)
    lines: list[Line] = []
    for event, where in zip(folded, d.regions_at(folded, view), strict=True):
        parts = d.event_parts(view, event, where)
        if parts is None:
            continue
        lines.append(Line(tuple(parts)))
        if event.get("kind") == "festival":
            results = event.get("results") or ()
            lines.extend(Line(tuple(d.festival_result_words(view, r, results)), sub=True)
                         for r in results)
    return lines[-limit:]


def _next_festival(view: View, region: str) -> dict[str, Any] | None:
    """The next festival still to come in ``region``, and the rounds of later ones."""
    coming = [f for f in view.festivals if not f.done and f.region == region]
    if not coming:
        return None
    first = coming[0]
    return {"round": first.round, "size": first.size, "town": first.town,
            "next": first.round == d.next_festival_round(view.festivals),
            "later": [f.round for f in coming[1:]]}


def regions(view: View) -> list[dict[str, Any]]:
    """Each region in board order: its castellers, pawns, wheel tile, neighbours and next
    festival (none before the start)."""
    if not view.regions:
        return []
    return [{"id": r, "name": REGION_NAMES[r], "castellers": view.regions[r].castellers,
             "pawns": [Part(d.seat_name(view, s), s) for s in view.regions[r].pawns],
             "trains": d.tile_name(view.wheel.get(r)), "next_to": d.neighbours(r),
             "festival": _next_festival(view, r)}
            for r in REGIONS]


def festivals(view: View) -> list[dict[str, Any]]:
    """The calendar, in order: held (``done``), the next round's (``next``), and later."""
    nxt = d.next_festival_round(view.festivals)
    return [{"round": f.round, "town": f.town, "region": f.region, "size": f.size,
             "done": f.done, "next": not f.done and f.round == nxt}
            for f in view.festivals]


def performances(view: View) -> list[dict[str, Any]]:
    """Each region's face-up performance tiles and the tokens lying there (§6)."""
    return [{"region": r, "tiles": [d.performance_label(t) for t in row.tiles],
             "tokens": row.tokens}
            for r, row in view.performances.items()]


def player_card(view: View, p: PlayerView, score: int | None) -> dict[str, Any]:
    """One player's card: title and markers, where and how they stand, team, tokens and
    skills, the tower top level first, what they took."""
    return {"seat": p.seat, "title": d.player_title(view, p, None),
            "summary": d.player_summary(p, score), "team": d.team_text(p.team) or "—",
            "tokens": d.tokens_and_skills(p),
            "tower": [list(level) for level in reversed(p.tower)],
            "taken": d.taken_text(p.taken),
            "current": p.seat == view.turn and view.status == RoomStatus.PLAYING,
            "bot": p.bot, "connected": p.connected}


def seats(view: View) -> list[dict[str, Any]]:
    """A waiting room's seats: who sits in each, or free."""
    taken = {p.seat: p for p in view.players}
    return [{"seat": s, "title": d.player_title(view, taken[s], None) if s in taken else None}
            for s in range(view.seats)]


def score_table(view: View) -> dict[str, Any] | None:
    """The final table (§9), winners first, those who resigned last; None before the end."""
    if not view.scores:
        return None
    return {"columns": [(c, SHORT[c]) for c in (*d.SCORE_CATEGORIES, "total")],
            "rows": [{"seat": seat, "name": d.seat_name(view, seat), "cells": cells,
                      "mark": mark} for seat, cells, mark in d.score_rows(view)],
            "note": d.tie_note(view)}


def header(view: View, now: float | None) -> dict[str, Any]:
    """The line above the board: status, whose turn and what they did, the time left."""
    playing = view.status == RoomStatus.PLAYING
    return {"name": view.name, "status": d.status_text(view),
            "turn": d.turn_text(view, None),
            "marks": [(a, a in view.done) for a in d.TURN_ACTIONS]
            if playing and view.turn is not None else [],
            "left": d.countdown(view.deadline, now) if playing else None,
            "watching": len(view.spectators), "round": view.round, "rounds": ROUNDS,
            "variant": view.variant, "seats": view.seats, "turn_seconds": view.turn_seconds,
            "playing": playing, "finished": view.status == RoomStatus.FINISHED,
            "waiting": view.status == RoomStatus.WAITING}


def board(view: View, events: Sequence[Mapping[str, Any]], now: float | None = None,
          ) -> dict[str, Any]:
    """Everything a board shows of ``view``, with the last lines of ``events`` (wire maps,
    oldest first) and the time left on the turn at ``now`` (None: not said)."""
    started = view.status != RoomStatus.WAITING
    scores = d.scores_so_far(view) if started else {}
    return {"header": header(view, now), "regions": regions(view),
            "wheel_all": d.wheel_all_text(view) if started else None, "bag": view.bag,
            "festivals": festivals(view), "prizes": d.prizes_text(view.prizes),
            "performances": performances(view) if started else [],
            "players": [player_card(view, p, scores.get(p.seat)) for p in view.players]
            if started else [],
            "seats": seats(view) if not started else [],
            "scores": score_table(view),
            "events": event_lines(view, events)}
