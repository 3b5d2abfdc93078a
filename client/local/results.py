"""The player's record against the bots: ``bot-results.json`` in the user's state folder.

One entry for each game of ``castell play`` that ended with this client watching: the room
(each game counts once), the bots' level, the seats, the player's points and whether they won
(a shared victory is a win, §9), and whether they resigned it (docs/rules.md §10: a loss, whose
points say nothing of how they play, so the average leaves them out);
:meth:`BotResults.by_level` sums them up. Kept like the seats
and settings beside it: readable by the user alone, replaced atomically; an unreadable file
counts as no game yet, and a result that cannot be written is no reason to stop playing.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import attrs

from client.local.files import read_json, write_json
from client.local.seats import default_state_dir

FILE = "bot-results.json"


@attrs.frozen
class Result:
    """One finished game against bots."""

    room: str
    level: str  # the bots' level (shared.bots.LEVELS)
    seats: int
    points: int  # the player's total (§9)
    won: bool  # the player is among the winners (§9)
    resigned: bool = False  # the player resigned it (§10): lost, its points not averaged

    def as_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def of(cls, data: Any) -> Result | None:
        """The entry ``data`` as a result; None for a damaged one (skipped, not fatal)."""
        try:
            result = cls(str(data["room"]), str(data["level"]), int(data["seats"]),
                         int(data["points"]), data["won"] is True,
                         data.get("resigned") is True)
        except (KeyError, TypeError, ValueError):
            return None
        return result


@attrs.frozen
class LevelRecord:
    """The games against one level of bots: how many, won, lost (of them, resigned), and
    the points of the games played to their end."""

    level: str
    games: int
    won: int
    points: int  # of the games not resigned
    resigned: int = 0

    @property
    def lost(self) -> int:
        return self.games - self.won

    @property
    def played(self) -> int:
        """The games played to their end: those not resigned."""
        return self.games - self.resigned

    @property
    def average(self) -> float | None:
        """The points on average of the games played to their end (None: none was)."""
        return self.points / self.played if self.played else None


class BotResults:
    """``bot-results.json`` in ``folder`` (default: the user's state folder)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else default_state_dir()
        self.path = self.folder / FILE

    def results(self) -> list[Result]:
        """Every game kept, oldest first."""
        games = read_json(self.path).get("games")
        if not isinstance(games, list):
            return []
        return [r for r in map(Result.of, games) if r is not None]

    def add(self, result: Result) -> bool:
        """Keep ``result``; False (and nothing kept) when its game was counted already."""
        games = self.results()
        if any(r.room == result.room for r in games):
            return False
        games.append(result)
        with contextlib.suppress(OSError):
            write_json(self.folder, FILE, {"games": [r.as_dict() for r in games]})
        return True

    def by_level(self, levels: tuple[str, ...]) -> list[LevelRecord]:
        """The record against each level played, in the order of ``levels`` (weakest first;
        a level not among them comes last)."""
        out: dict[str, LevelRecord] = {}
        for r in self.results():
            had = out.get(r.level, LevelRecord(r.level, 0, 0, 0))
            out[r.level] = LevelRecord(r.level, had.games + 1, had.won + r.won,
                                       had.points + (0 if r.resigned else r.points),
                                       had.resigned + r.resigned)
        order = {level: i for i, level in enumerate(levels)}
        return sorted(out.values(), key=lambda x: (order.get(x.level, len(levels)), x.level))
