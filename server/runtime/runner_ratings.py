"""What a rated room reads of its seats' ratings from the store (:mod:`server.features.ratings`):
a seat's displayed rating and whether it is provisional, as a player sits; and, for a rated
room read back from the store, its seats' ratings (and what a finished game's end changed)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from server.features.ratings import provisional_of, rated_changes, shown_ratings

if TYPE_CHECKING:
    from server.core.room import Room
    from server.store.base import Store


async def rating_of(store: Store, room: Room[Any], account: str | None) -> int | None:
    """The displayed rating of ``account`` in a rated room (None elsewhere)."""
    if not room.rated or account is None:
        return None
    return (await shown_ratings(store, (account,)))[account]


async def provisional(store: Store, room: Room[Any], account: str | None) -> bool | None:
    """Whether ``account``'s rating is provisional, in a rated room (None elsewhere)."""
    if not room.rated or account is None:
        return None
    return (await provisional_of(store, (account,)))[account]


async def read_provisional(store: Store, room: Room[Any], accounts: dict[int, str]) -> None:
    """Which of the seats' (seat → account) ratings are provisional now."""
    known = await provisional_of(store, tuple(set(accounts.values())))
    for index, account in accounts.items():
        room.provisional[index] = known[account]


async def read_ratings(store: Store, room: Room[Any]) -> None:
    """A rated room read from the store learns its seats' ratings (and a finished one,
    what its end changed) before someone takes a seat back."""
    if not room.rated or room.ratings:
        return
    accounts = await store.seat_accounts(room.id)
    shown = await shown_ratings(store, tuple(accounts.values()))
    for index, account in accounts.items():
        room.ratings[index] = shown[account]
    await read_provisional(store, room, accounts)
    if room.status == "finished":
        room.rated_end(await rated_changes(store, room.id, accounts))
