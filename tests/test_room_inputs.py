"""Each input of the sans-I/O room, by value (tests/support/drive.py): what it writes, who
hears what, and what it leaves the room as, with the store working, refusing, or losing its
answer. No socket, no loop, no store."""

from __future__ import annotations

from typing import Any

import pytest

from server.core.room import (
    NOTICE_DOWN,
    ArmTimer,
    BadToken,
    ClaimSeat,
    Close,
    PutSeat,
    RemoveSeat,
    Room,
    RoomError,
    UpdateRoom,
    WakeBot,
)
from server.store.base import GameRecord, RoomRecord, SeatRecord, hash_token, token_matches
from shared.view import RoomStatus
from tests.support.drive import do, drive

NOW = 1_000_000.0


def new_room(seats: int = 2, **options: Any) -> Room[str]:
    return Room("r1", "Table", seats, "normal", options.pop("turn_seconds", None), False,
                seed=7, now=NOW, **options)


def seated(seats: int = 2, **options: Any) -> Room[str]:
    room = new_room(seats, **options)
    drive(room, [do("take_seat", f"p{i}", f"P{i}", i + 1, now=NOW) for i in range(seats)])
    return room


def record(room: Room[str], *, version: int, status: str = "waiting",
           seats: tuple[SeatRecord, ...] = (), turn_seconds: int | None = None) -> GameRecord:
    """The store's copy of ``room`` at ``version`` holding ``seats``."""
    return GameRecord(RoomRecord(room.id, room.name, room.size, room.variant,
                                 turn_seconds, room.private, room.code, seed=room.seed,
                                 status=status, version=version, created_at=NOW),
                      seats)


def test_seat_matched_seats_someone_not_yet_here_who_takes_it_with_the_token() -> None:
    room = new_room()
    out = drive(room, [do("seat_matched", 0, "Anna", "anna-token", "acc-anna", 1612, True),
                       do("seat_matched", 0, "Biel", "biel-token", "acc-biel")])
    put, claim = out.writes
    assert isinstance(put, PutSeat) and put.version == 1 and put.record.name == "Anna"
    assert token_matches("anna-token", put.record.token_hash)
    assert claim == ClaimSeat("r1", 0, "acc-anna")
    assert [e.code for e in out.refused] == ["room_full"]  # seat 0 is taken
    seat = room.seats[0]
    assert seat is not None and seat.account == "acc-anna" and seat.member is None
    assert (room.ratings, room.provisional, room.creator_seat) == ({0: 1612}, {0: True}, 0)
    back = drive(room, [do("resume", "anna", "anna-token", 5)])
    joined = back.to("anna")[0]
    assert (joined["type"], joined["seat"], joined["token"]) == ("joined", 0, None)


def test_seat_matched_is_not_made_when_the_store_refuses_it() -> None:
    room = new_room()
    out = drive(room, [do("seat_matched", 0, "Anna", "t", None)], store="fail")
    assert out.writes == [] and room.taken == 0 and room.failures == 1 and not room.busy


def test_start_matched_starts_a_full_room_without_a_creator_asking() -> None:
    room = new_room(turn_seconds=60)
    early = drive(room, [do("start_matched", now=NOW)])
    assert [e.code for e in early.refused] == ["seats_not_full"]
    drive(room, [do("seat_matched", 0, "Anna", "a", None), do("seat_matched", 1, "Biel", "b",
                                                              None)])
    out = drive(room, [do("start_matched", now=NOW)])
    (update,) = out.writes
    assert isinstance(update, UpdateRoom) and update.status == RoomStatus.PLAYING
    assert room.status == RoomStatus.PLAYING and room.version == 3
    assert out.of(ArmTimer) == [ArmTimer((1, room.state.turn), 60)]
    assert [e.code for e in drive(room, [do("start_matched", now=NOW)]).refused] == [
        "already_started"]


def test_seat_bot_names_the_bot_by_its_level_and_stores_it() -> None:
    room = new_room(3)
    out = drive(room, [do("seat_bot", 1, "greedy")], store="lost")  # its version is found
    (put,) = out.writes
    assert isinstance(put, PutSeat) and put.version == 1
    assert (put.record.bot, put.record.bot_level, put.record.name) == (True, "normal",
                                                                       "Pau·normal")
    seat = room.seats[1]
    assert seat is not None and seat.bot == "normal" and room.creator_seat is None
    assert [e.code for e in drive(room, [do("seat_bot", 1, "easy")]).refused] == ["room_full"]


def test_offer_seats_keeps_a_rematch_seat_for_its_player_alone() -> None:
    room = new_room()
    assert drive(room, [do("offer_seats", {1: "Biel"})]).writes == []
    assert room.offered_to("BIEL") and not room.offered_to("Carla")
    out = drive(room, [do("take_seat", "carla", "Carla", 1, now=NOW),
                       do("take_seat", "dani", "Dani", 2, now=NOW),
                       do("take_seat", "biel", "biel", 3, now=NOW)])
    assert [e.code for e in out.refused] == ["room_full"]  # Dani: seat 1 is Biel's
    assert [s.name for s in room.seats if s is not None] == ["Carla", "biel"]
    assert room.seat_of("biel") == 1


def test_reclaim_gives_a_seat_back_and_closes_the_older_connection() -> None:
    room = seated()
    drive(room, [do("start", "p0", 9, now=NOW), do("leave", "p1", dropped=True)])
    out = drive(room, [do("reclaim", "p1-again", 1, 7)])
    assert out.writes == [UpdateRoom("r1", room.version, None)]
    assert out.to("p1-again")[0]["type"] == "joined" and out.to("p1-again")[0]["seat"] == 1
    (push,) = [p for p in out.pushes if p.to == ("p0",)]
    assert push.events == ({"kind": "connected", "seat": 1, "name": "P1"},)
    again = drive(room, [do("reclaim", "p1-third", 1, 8)])
    assert again.of(Close)[0].member == "p1-again"
    bot_room = new_room()
    drive(bot_room, [do("seat_bot", 1, "easy")])
    assert [type(e) for e in drive(bot_room, [do("reclaim", "x", 1, 1),
                                              do("reclaim", "x", 0, 1)]).refused] == [
        BadToken, BadToken]


def test_rated_end_shows_each_seat_its_rating_before_and_after() -> None:
    room = new_room(rated=True)
    drive(room, [do("seat_matched", 0, "Anna", "a", "acc-a", 1500, False),
                 do("seat_matched", 1, "Biel", "b", "acc-b", 1500, True),
                 do("resume", "anna", "a", 1)])
    out = drive(room, [do("rated_end", {0: (1500, 1517), 1: (1500, 1483)}),
                       do("resync", "anna", 2)])
    assert out.writes == [] and room.version == 3  # no change: shown from the next view on
    players = out.pushes[0].view["players"]
    assert [(p["rating_before"], p["rating"]) for p in players] == [(1500, 1517), (1500, 1483)]


def test_know_accounts_learns_whose_seats_are_whose_and_writes_only_what_must() -> None:
    stored = new_room()
    seats = tuple(SeatRecord("r1", i, f"P{i}", token_hash=hash_token(f"t{i}")) for i in (0, 1))
    unknown: Room[str] = Room.from_record(record(stored, version=2, seats=seats), now=NOW)
    assert not unknown.accounts_read
    out = drive(unknown, [do("resume", "p1", "t1", 1), do("leave", "p1", dropped=False)])
    assert ClaimSeat("r1", 1, None) in out.writes  # whose it was is unknown: cleared
    room: Room[str] = Room.from_record(record(stored, version=2, seats=seats), now=NOW)
    drive(room, [do("know_accounts", {0: "acc-a"})])
    assert room.accounts_read and room.seats[0].account == "acc-a"
    out = drive(room, [do("resume", "p1", "t1", 1), do("leave", "p1", dropped=False),
                       do("resume", "p0", "t0", 2), do("leave", "p0", dropped=False)])
    assert [w for w in out.writes if isinstance(w, ClaimSeat)] == [ClaimSeat("r1", 0, None)]
    assert [w.seat for w in out.writes if isinstance(w, RemoveSeat)] == [1, 0]


def test_reloaded_is_the_room_as_stored_with_its_members_carried_over() -> None:
    room = new_room()
    drive(room, [do("take_seat", "anna", "Anna", 1, now=NOW),
                 do("watch", "eva", 2, name="Eva")])
    anna = room.seats[0]
    assert anna is not None
    # the store holds a second seat whose answer was lost
    held = (SeatRecord("r1", 0, "Anna", token_hash=anna.token_hash),
            SeatRecord("r1", 1, "Biel", token_hash=hash_token("b")))
    out = drive(room, [do("reloaded", record(room, version=2, seats=held), now=NOW)])
    fresh = out.room
    assert fresh is not room and fresh.version == 2 and fresh.taken == 2
    assert fresh.seat_of("anna") == 0 and fresh.spectators == {"eva": "Eva"}
    (push,) = out.pushes
    assert set(push.to) == {"anna", "eva"} and push.version == 2 and out.writes == []


def test_resync_sends_the_whole_view_then_ok() -> None:
    room = seated()
    out = drive(room, [do("resync", "p1", 42)])
    state, ok = out.to("p1")
    assert state["type"] == "state" and state["version"] == room.version
    assert state["view"] == room.view() and ok == {"type": "ok", "re": 42}
    assert out.writes == [] and [p.to for p in out.pushes] == [("p1",)]


def test_evict_closes_every_member_and_writes_nothing() -> None:
    room = seated()
    drive(room, [do("watch", "eva", 3, name="Eva")])
    out = drive(room, [do("evict", 1012, "moved")])
    assert sorted(c.member for c in out.of(Close)) == ["eva", "p0", "p1"]
    assert {(c.code, c.reason) for c in out.of(Close)} == {(1012, "moved")}
    assert out.writes == [] and room.members() == [] and room.taken == 2


def test_resume_play_arms_a_fresh_turn_and_wakes_the_bot_to_play() -> None:
    stored = new_room()
    seats = (SeatRecord("r1", 0, "Anna", token_hash=hash_token("a")),
             SeatRecord("r1", 1, "Pau·easy", bot=True, bot_level="easy"))
    waiting: Room[str] = Room.from_record(record(stored, version=2, seats=seats), now=NOW)
    assert drive(waiting, [do("resume_play", now=NOW)]).effects == []
    playing: Room[str] = Room.from_record(
        record(stored, version=3, seats=seats, status="playing", turn_seconds=60), now=NOW)
    out = drive(playing, [do("resume_play", now=NOW + 5)])
    state = playing.state
    assert state is not None
    assert out.of(ArmTimer) == [ArmTimer((state.round, state.turn), 60)]
    assert playing.deadline == NOW + 65
    assert bool(out.of(WakeBot)) == (state.turn == 1)


def test_resume_play_with_the_deadline_the_turn_had_arms_only_what_is_left_of_it() -> None:
    # a game unloaded while nobody was in it comes back with its turn's deadline: the turn
    # is not made longer by the unloading (§4); a deadline already past runs out at once
    stored = new_room()
    seats = (SeatRecord("r1", 0, "Anna", token_hash=hash_token("a")),
             SeatRecord("r1", 1, "Bru", token_hash=hash_token("b")))
    for now, left in ((NOW + 20, 40.0), (NOW + 90, 0.0)):
        playing: Room[str] = Room.from_record(
            record(stored, version=3, seats=seats, status="playing", turn_seconds=60), now=NOW)
        out = drive(playing, [do("resume_play", now=now, deadline=NOW + 60)])
        state = playing.state
        assert state is not None
        assert out.of(ArmTimer) == [ArmTimer((state.round, state.turn), left)]
        assert playing.deadline == NOW + 60
    # a bot's turn is its bot's to play, as it would have been in memory: a fresh turn
    bots = (SeatRecord("r1", 0, "Pau·easy", bot=True, bot_level="easy"),
            SeatRecord("r1", 1, "Rita·easy", bot=True, bot_level="easy"))
    robots: Room[str] = Room.from_record(
        record(stored, version=3, seats=bots, status="playing", turn_seconds=60), now=NOW)
    out = drive(robots, [do("resume_play", now=NOW + 90, deadline=NOW + 60)])
    state = robots.state
    assert state is not None
    assert out.of(ArmTimer) == [ArmTimer((state.round, state.turn), 60)] and out.of(WakeBot)
    # a room without a turn timer has no deadline to keep
    untimed: Room[str] = Room.from_record(
        record(stored, version=3, seats=seats, status="playing"), now=NOW)
    out = drive(untimed, [do("resume_play", now=NOW, deadline=NOW + 60)])
    assert out.of(ArmTimer) == [] and untimed.deadline is None


def test_a_refused_change_tells_every_member_once() -> None:
    room = seated()
    out = drive(room, [do("start", "p0", 1, now=NOW)], store="fail")
    assert [msg["text"] for _, msg in out.sends] == [NOTICE_DOWN, NOTICE_DOWN]
    assert room.state is None and room.version == 2
    with pytest.raises(RoomError):
        room.start("p1", 2, now=NOW)
