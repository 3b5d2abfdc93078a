"""A finished game as its pages show it: every state of its replay, the score race, and its
review in words.

:func:`replay` rebuilds every state of a recorded game with the rules engine
(:func:`shared.replay.record_steps`: the setup, then the state after each action), each
step's events as wire maps, and each seat's score after every step (§9, counted on what the
seat holds then; the final scores at the end): what the step-through replay and the score
race chart are drawn from. It is pure, so the pages compute it off the event loop.
:func:`review_summary` puts a stored review (``docs/review.md``) in words: the players'
accuracy and marks, their costliest turns (with the replay's step each one starts at), and
the festivals someone could have won.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from shared import describe as d
from shared.actions import Action, EndTurn, action_fields
from shared.codec import event_to_wire
from shared.record import GameRecordFile
from shared.replay import record_steps
from shared.review import THRESHOLDS, Review
from shared.scoring import score_player
from shared.state import GameState
from shared.view import RoomInfo, RoomStatus, SeatInfo, View, make_view

#: How a turn's mark reads.
MARK_WORDS: Final = {"good": "good", "inaccuracy": "an inaccuracy", "mistake": "a mistake",
                     "blunder": "a blunder"}


@attrs.frozen
class Replay:
    """A recorded game's every state (``states[0]`` the setup), each step's events, each
    seat's score after each step, and the step each round starts at."""

    record: GameRecordFile
    states: tuple[GameState, ...]
    events: tuple[tuple[dict[str, Any], ...], ...]
    series: tuple[tuple[int, ...], ...]
    round_starts: tuple[int, ...]

    @property
    def last(self) -> int:
        return len(self.states) - 1

    def view(self, step: int) -> View:
        """The public view at ``step``, as a spectator saw it then."""
        r = self.record
        info = RoomInfo(room=r.room, name=r.name, variant=r.variant, seats=len(r.seats),
                        turn_seconds=r.turn_seconds,
                        status=RoomStatus.FINISHED if step == self.last and
                        self.states[step].over else RoomStatus.PLAYING,
                        players=tuple(SeatInfo(i, n, bot=b) for i, (n, b)
                                      in enumerate(zip(r.seats, r.bots, strict=True))))
        return make_view(info, self.states[step])

    def events_until(self, step: int, steps: int) -> list[dict[str, Any]]:
        """The events of the ``steps`` steps up to ``step``, oldest first; an action the
        turn timer played comes after its ``timeout``."""
        out: list[dict[str, Any]] = []
        for i in range(max(1, step - steps + 1), step + 1):
            action = self.record.actions[i - 1]
            if action.timed_out:
                out.append({"kind": "timeout", "seat": action.seat})
            out.extend(self.events[i])
        return out


def replay(record: GameRecordFile) -> Replay:
    """Every state of ``record``'s game and what the pages draw from them (see the module
    docstring). Raises what the rules engine raises for an action they refuse."""
    steps = record_steps(record)
    states = tuple(state for state, _ in steps)
    series = []
    for seat in range(len(record.seats)):
        values = [score_player(s.players[seat]).total for s in states]
        final = states[-1].scores
        if final is not None:
            values[-1] = next(sc.total for sc in final if sc.seat == seat)
        series.append(tuple(values))
    starts = tuple(i for i, s in enumerate(states) if i == 0 or s.round != states[i - 1].round)
    return Replay(record, states, tuple(tuple(event_to_wire(e) for e in events)
                                        for _, events in steps),
                  tuple(series), starts)


def _line(actions: tuple[Action, ...]) -> str:
    """A line of actions in words, without its closing ``end_turn``."""
    words = [d.action_words(action_fields(a), None) for a in actions
             if not isinstance(a, EndTurn)]
    return " · ".join(words) or "ended the turn"


def review_summary(review: Review) -> dict[str, Any]:
    """A review in words: the players (points, accuracy, lost, turns by mark), each one's
    costliest turns (round, the step it starts at, what it lost, what was played and what
    the hard bot would have), and who could have won a festival they did not."""
    players = [{"seat": p.seat, "name": p.name, "bot": p.bot, "points": p.final.total,
                "accuracy": None if p.accuracy is None else round(p.accuracy),
                "lost": f"{p.lost:.1f}", "marks": list(p.marks)} for p in review.players]
    costly = []
    for p in review.players:
        for index in p.costliest:
            turn = review.turns[index]
            costly.append({"seat": turn.seat, "name": review.seats[turn.seat],
                           "round": turn.round, "turn": turn.index + 1, "step": turn.start,
                           "lost": f"{turn.lost:.1f}", "mark": MARK_WORDS.get(
                               turn.mark or "", "not reviewed"),
                           "played": _line(turn.played),
                           "better": _line(turn.hard) if turn.hard else None})
    chances = []
    for f in review.festivals:
        could = [c for c in f.chances if c.would_win and c.seat not in f.winners]
        if could:
            chances.append({"round": f.round, "town": f.town, "size": f.size,
                            "who": [(review.seats[c.seat], c.seat, c.best, c.train)
                                    for c in could]})
    return {"players": players, "costly": costly, "chances": chances,
            "samples": review.budget.samples, "candidates": review.budget.candidates,
            "turns": len(review.turns), "thresholds": THRESHOLDS}
