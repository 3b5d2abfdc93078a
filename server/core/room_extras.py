"""What a room has beyond its seats and game: the seats a rematch offers to the players of the
finished game, and in a rated room the ratings its seats show (before and after its end),
whether they are provisional, and why an end was not rated. Also the floor of rated play the
room applies itself (:func:`played`), pure, so that the room needs no ratings mathematics."""

from __future__ import annotations

from collections.abc import Iterable

from server.core.names import name_key
from shared.actions import EndTurn, Resign

#: Why a rated game where nobody played was not rated (its stored result's ``unrated``).
NOBODY_PLAYED = "not rated: nobody played, every turn was only ended"


def played(actions: Iterable[object]) -> bool:
    """Whether a game of these actions was played: some player did more than end turns (a
    turn the timer ended is an ended turn too) and resign (docs/rules.md §10)."""
    return any(not isinstance(action, EndTurn | Resign) for action in actions)


class RoomExtras:
    """Rematch offers and ratings of one room (see the module docstring)."""

    def __init__(self, *, rated: bool = False) -> None:
        #: The seats a rematch offers to the players who held them: seat → name (as names
        #: compare); stored with the room (``RoomRecord.offers``, :mod:`server.features.rematch`).
        self.reserved: dict[int, str] = {}
        #: A rated room (server.features.ratings): accounts only, and its end rates them. Its seats'
        #: displayed ratings, and once the end is rated, the ratings before it (by seat).
        self.rated = rated
        self.ratings: dict[int, int] = {}
        self.ratings_before: dict[int, int] = {}
        #: Whether each seat's rating is still provisional; and, for a rated game whose
        #: end was not rated, why (server.features.ratings: nobody played).
        self.provisional: dict[int, bool] = {}
        self.unrated: str | None = None

    def offer_seats(self, offered: dict[int, str]) -> None:
        """A rematch offers each seat of ``offered`` (seat → name) to the player who held it
        in the finished game: nobody else takes it (set before the room is stored, and
        stored with it: no change)."""
        self.reserved = {index: name_key(name) for index, name in offered.items()}

    def offered_to(self, name: str) -> bool:
        """Whether a rematch offers a seat of this room to ``name`` (as names compare)."""
        return name_key(name) in self.reserved.values()

    def rated_end(self, changes: dict[int, tuple[int, int]]) -> None:
        """A rated game's end was stored with its ratings: each seat's displayed rating
        before and after it (seat → (before, after)), shown from the next view on."""
        for index, (before, after) in changes.items():
            self.ratings_before[index] = before
            self.ratings[index] = after

    def rate_seat(self, index: int, rating: int | None, provisional: bool | None) -> None:
        """Seat ``index``'s displayed rating and whether it is provisional (None: unknown)."""
        if rating is not None:
            self.ratings[index] = rating
        if provisional is not None:
            self.provisional[index] = provisional

    def unrated_end(self, actions: Iterable[object]) -> str | None:
        """Why the end of a game of ``actions`` is not rated, in a rated room (None: it is,
        or the room is not rated)."""
        if self.rated and not played(actions):
            return NOBODY_PLAYED
        return None
