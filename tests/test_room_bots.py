"""One way to seat a bot (server/core/room_seats.py ``Presence.place_bot``): a player's bot, a
rematch's bots and a quick match's all get a free seat only and a first name nobody at the
table has, whatever the levels. By value, without sockets (tests/support/drive.py)."""

from __future__ import annotations

from server.core.room import PutSeat, Room
from server.core.room_seats import first_name
from tests.support.drive import do, drive

NOW = 1_000_000.0


def new_room(seats: int) -> Room[str]:
    return Room("r1", "Table", seats, "normal", None, False, seed=7, now=NOW)


def bot_names(room: Room[str]) -> list[str]:
    return [s.name for s in room.seats if s is not None and s.bot is not None]


def test_a_rematch_of_two_bots_of_different_levels_never_seats_two_of_one_first_name() -> None:
    finished = new_room(3)
    drive(finished, [do("take_seat", "anna", "Anna", 1, now=NOW),
                     do("add_bot", "anna", "easy", 2), do("add_bot", "anna", "hard", 3)])
    assert bot_names(finished) == ["Pau·easy", "Núria·hard"]
    # the rematch (server.features.rematch, RoomRunner.seat_bots): Anna's seat offered to her, each
    # bot back in its seat at its level, in seat order
    rematch = new_room(3)
    levels = {s.index: s.bot for s in finished.seats if s is not None and s.bot is not None}
    out = drive(rematch, [do("offer_seats", {0: "Anna"}),
                          *(do("seat_bot", i, level) for i, level in sorted(levels.items()))])
    assert out.refused == []
    names = bot_names(rematch)
    assert len({first_name(n) for n in names}) == len(names) == 2, names
    assert names == ["Pau·easy", "Núria·hard"]  # as they were


def test_a_bot_is_never_seated_into_a_taken_seat() -> None:
    room = new_room(3)
    drive(room, [do("take_seat", "anna", "Anna", 1, now=NOW),
                 do("seat_matched", 1, "Biel", "biel-token", None)])
    out = drive(room, [do("seat_bot", 0, "easy"), do("seat_bot", 1, "normal")])
    assert [e.code for e in out.refused] == ["room_full", "room_full"]
    assert out.writes == [] and [s.name for s in room.seats if s is not None] == ["Anna", "Biel"]
    assert room.seats[0] is not None and room.seats[0].member == "anna"


def test_a_quick_match_fills_its_free_seats_with_bots_of_distinct_first_names() -> None:
    room = new_room(4)
    out = drive(room, [do("seat_matched", 0, "Pau", "t", None),
                       *(do("seat_bot", i, "normal") for i in (1, 2, 3))])
    writes = [w for w in out.writes if isinstance(w, PutSeat)]
    assert [w.record.name for w in writes] == ["Pau", "Núria·normal", "Jordi·normal",
                                               "Montse·normal"]


def test_a_players_bot_and_a_rematchs_bot_are_named_by_one_rule() -> None:
    room = new_room(3)
    drive(room, [do("take_seat", "anna", "Anna", 1, now=NOW), do("seat_bot", 2, "hard"),
                 do("add_bot", "anna", "easy", 2)])
    assert bot_names(room) == ["Núria·easy", "Pau·hard"]
