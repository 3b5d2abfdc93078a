"""``castell play``'s controller: a game's :class:`~client.control.controller.Controller` that
keeps the player's record against the bots (:class:`client.local.results.BotResults`).

Each game that ends while the player watches is kept once, under the bots' level (read from a
bot's name, which ends with it: docs/protocol.md, ``add_bot``); the record, level by level —
games, won, lost (a resigned game is lost, and said), the average points of the games played
to their end — is shown when ``castell play`` starts its game, in its
lobby, and after each game, under the result of the game's last festivals.
"""

from __future__ import annotations

from client.control.controller import Controller
from client.local.results import BotResults, LevelRecord, Result
from client.net.session import RoomState, Session
from client.screens.render import event_lines
from shared.bots import LEVELS, level_name
from shared.view import View

#: What separates a bot's name from its level (``Pau·hard``).
LEVEL_MARK = "·"


def bots_level(view: View, me: int | None) -> str | None:
    """The level of the bots the player ``me`` played against (None: no bots, or bots of
    several levels, as ``castell play`` never seats)."""
    levels = set()
    for p in view.players:
        if p.seat == me or not p.bot:
            continue
        try:
            levels.add(level_name(p.name.rpartition(LEVEL_MARK)[2]))
        except ValueError:
            return None
    return levels.pop() if len(levels) == 1 else None


def game_result(view: View, me: int | None) -> Result | None:
    """The finished game of ``view`` as the player ``me`` fared in it against bots."""
    if me is None or view.scores is None or view.winners is None:
        return None
    level = bots_level(view, me)
    mine = next((s for s in view.scores if s.seat == me), None)
    if level is None or mine is None:
        return None
    return Result(view.room, level, view.seats, mine.total, me in view.winners,
                  me in (view.resigned or ()))


def level_line(record: LevelRecord) -> str:
    """``  normal  5 games · 2 won · 3 lost (1 resigned) · 61.4 points on average``: the
    average of the games played to their end (a resigned game's points left out)."""
    games = f"{record.games} game{'s' if record.games != 1 else ''}"
    resigned = f" ({record.resigned} resigned)" if record.resigned else ""
    average = record.average
    points = f"{average:.1f} points on average" if average is not None else \
        "no game played to its end"
    if average is not None and record.resigned:
        points += " (of those played out)"
    return (f"  {record.level:<7} {games} · {record.won} won · {record.lost} lost{resigned} · "
            f"{points}")


def record_lines(results: BotResults) -> list[str]:
    """The record against the bots, level by level (weakest first)."""
    levels = results.by_level(LEVELS)
    if not levels:
        return ["Your record against the bots: no game finished yet."]
    return ["Your record against the bots (`castell play` games finished here):",
            *map(level_line, levels)]


class ResultsController(Controller):
    """See the module docstring. ``festivals_in_pane``: the screen shows a festival's result
    in a pane that the record would replace (the full screen): the record then comes under
    it."""

    def __init__(self, session: Session, results: BotResults | None = None, *,
                 festivals_in_pane: bool = True) -> None:
        super().__init__(session)
        folder = session.seats.folder if session.seats is not None else None
        self.results = results if results is not None else BotResults(folder)
        self.festivals_in_pane = festivals_in_pane

    async def start_play(self, seats: int, variant: str, level: str,
                         resume: str | None = None) -> None:
        await super().start_play(seats, variant, level, resume)
        # (in the lobby, its lines hold the record, under its notes; and before any game
        # finished there is no record to show over the first turn's board)
        if self.mode == "game" and self.results.by_level(LEVELS):
            self.screen.show(record_lines(self.results))

    def lobby_lines(self) -> list[str]:
        return [*super().lobby_lines(), *record_lines(self.results)]

    def on_state(self, push: RoomState) -> None:
        super().on_state(push)
        if not any(event.get("kind") == "game_over" for event in push.events):
            return
        result = game_result(push.view, self.me)
        if result is None or not self.results.add(result):
            return
        held = [e for e in push.events if e.get("kind") == "festival"]
        above = event_lines(push.view, held) if self.festivals_in_pane else []
        if result.resigned:
            said = (f"You resigned against {result.level} bots: a loss, its points left out "
                    "of your average.")
        else:
            said = (f"You {'won' if result.won else 'lost'} with {result.points} points "
                    f"against {result.level} bots.")
        self.screen.show([*above, said, *record_lines(self.results)])
