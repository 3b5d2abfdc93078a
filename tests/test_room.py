"""The sans-I/O room, by value: inputs in, writes and effects out — no socket, no loop.

Members are plain strings here; the room only compares them. Each test drives the room as the
driver (:mod:`server.runtime.runner`) does: propose, "store" (or fail to), commit or abort.
"""

from __future__ import annotations

import random
from typing import Any

import msgpack
import pytest

from server.core.room import (
    NOTICE_BACK,
    NOTICE_DOWN,
    AppendAction,
    AppendChat,
    ArmTimer,
    BadToken,
    CancelTimer,
    Change,
    Close,
    Finish,
    Push,
    PutSeat,
    RemoveSeat,
    Room,
    RoomError,
    Send,
    UpdateRoom,
    WakeBot,
)
from server.core.room_change import Adopted
from server.store.base import ChatRecord
from shared import engine
from shared.actions import EndTurn, Move
from shared.errors import RuleError
from shared.legal import legal_actions

NOW = 1_000_000.0


def new_room(seats: int = 2, *, turn_seconds: int | None = None,
             fenced: bool = False) -> Room[str]:
    return Room("r1", "Table", seats, "normal", turn_seconds, False, seed=7, now=NOW,
                bot_delay=0.25, fenced=fenced)


def sent(effects: list[Any], member: str) -> list[dict[str, Any]]:
    """The messages ``member`` is sent by these effects, decoded, in order."""
    return [msgpack.unpackb(e.data) for e in effects
            if isinstance(e, Send | Push) and member in e.to]


def done(room: Room[str], change: Change, now: float = NOW) -> list[Any]:
    """The driver's part when the store took every write."""
    return room.commit(change, now=now)


def seated(seats: int = 2, **options: Any) -> Room[str]:
    room = new_room(seats, **options)
    for i in range(seats):
        done(room, room.take_seat(f"p{i}", f"P{i}", i + 1, now=NOW))
    return room


def started(seats: int = 2, **options: Any) -> Room[str]:
    room = seated(seats, **options)
    done(room, room.start("p0", 9, now=NOW))
    return room


def test_taking_a_seat_writes_it_then_replies_and_pushes() -> None:
    room = new_room()
    done(room, room.take_seat("anna", "Anna", 1, now=NOW))
    change = room.take_seat("biel", "Biel", 4, now=NOW)
    # nothing changes before the store says yes
    assert room.taken == 1 and room.version == 1 and room.busy
    assert change.version == 2
    # the seat and, in the same write, the version it makes (so that a crash never takes
    # the room back to a version its players saw), even before the start
    [put] = change.writes
    assert isinstance(put, PutSeat)
    assert put.record.seat == 1 and put.record.name == "Biel"
    assert put.version == 2 and put.expect_version is None
    effects = done(room, change)
    assert room.taken == 2 and room.version == 2 and not room.busy
    # the joiner: its reply (with its token), then the current view with no events
    joined, first = sent(effects, "biel")
    assert joined["type"] == "joined" and joined["re"] == 4 and joined["seat"] == 1
    assert joined["token"] and joined["code"] is None
    assert first["type"] == "state" and first["version"] == 2 and first["events"] == []
    # the others: the push with the event
    [push] = sent(effects, "anna")
    assert push["events"] == [{"kind": "joined", "seat": 1, "name": "Biel"}]
    assert push["version"] == 2


def test_refusals_raise_before_any_change() -> None:
    room = seated()
    with pytest.raises(RoomError) as full:
        room.take_seat("carme", "Carme", 1, now=NOW)
    assert full.value.code == "room_full"
    with pytest.raises(RoomError) as creator:
        room.start("p1", 2, now=NOW)
    assert creator.value.code == "not_creator"
    with pytest.raises(RoomError) as spectator:
        room.start("nobody", 2, now=NOW)
    assert spectator.value.code == "not_a_player"
    with pytest.raises(RoomError) as early:
        room.act("p0", EndTurn(), 3, now=NOW)
    assert early.value.code == "game_not_started"
    with pytest.raises(RoomError) as seats:
        new_room().start("x", 1, now=NOW)
    assert seats.value.code == "not_a_player"
    assert not room.busy and room.version == 2


def test_starting_takes_one_version_stored_once() -> None:
    room = seated()
    change = room.start("p0", 9, now=NOW)
    [write] = change.writes
    assert isinstance(write, UpdateRoom)
    assert write.status == "playing" and write.version == 3 == change.version
    effects = done(room, change)
    assert room.status == "playing" and room.stored_version == 3
    ok, push = sent(effects, "p0")
    assert ok == {"type": "ok", "re": 9}
    assert [e["kind"] for e in push["events"]] == ["started", "round", "turn"]


def test_an_action_is_stored_with_its_version_then_acknowledged_then_pushed() -> None:
    room = started()
    state = room.state
    assert state is not None and state.turn is not None
    actor, other = f"p{state.turn}", f"p{1 - state.turn}"
    with pytest.raises(RuleError):  # the rules refuse it: nothing proposed
        room.act(other, EndTurn(), 5, now=NOW)
    assert not room.busy
    change = room.act(actor, EndTurn(), 5, now=NOW + 1)
    [write] = change.writes
    assert isinstance(write, AppendAction)
    assert write.record.version == change.version == 4 and write.record.seq == 0
    assert write.record.at == NOW + 1
    effects = done(room, change)
    ok, push = sent(effects, actor)
    assert ok == {"type": "ok", "re": 5, "version": 4}
    assert push["version"] == 4 and push["events"][0]["kind"] == "action"
    assert sent(effects, other) == [push]
    assert room.log == [(state.turn, EndTurn())]


def test_a_store_failure_changes_nothing_and_the_next_try_works() -> None:
    room = started()
    state = room.state
    assert state is not None and state.turn is not None
    actor = f"p{state.turn}"
    change = room.act(actor, EndTurn(), 5, now=NOW)
    # a request: its driver answers the requester; every member is told, once
    effects = room.abort(change)
    down = {"type": "notice", "room": "r1", "text": NOTICE_DOWN}
    assert sent(effects, "p0") == sent(effects, "p1") == [down]
    assert room.state is state and room.version == 3 and room.log == [] and not room.busy
    assert room.failures == 1
    assert room.abort(room.act(actor, EndTurn(), 6, now=NOW)) == []  # said already
    again = room.act(actor, EndTurn(), 7, now=NOW)
    assert again.version == 4
    effects = done(room, again)
    assert sent(effects, "p1")[0] == {"type": "notice", "room": "r1", "text": NOTICE_BACK}
    assert room.failures == 0 and room.version == 4


def test_one_change_at_a_time_and_only_the_one_in_flight() -> None:
    room = new_room()
    change = room.take_seat("anna", "Anna", 1, now=NOW)
    with pytest.raises(RuntimeError):
        room.take_seat("biel", "Biel", 2, now=NOW)
    other = Change(1, (), Adopted())
    with pytest.raises(RuntimeError):
        room.commit(other, now=NOW)
    done(room, change)


def test_a_turn_timer_is_armed_each_turn_and_ends_the_turn_when_it_fires() -> None:
    room = seated(turn_seconds=60)
    effects = done(room, room.start("p0", 1, now=NOW))
    [timer] = [e for e in effects if isinstance(e, ArmTimer)]
    assert timer.delay == 60 and room.deadline == NOW + 60
    state = room.state
    assert state is not None
    # a timer of another turn does nothing
    assert room.timer_fired((state.round, 1 - (state.turn or 0)), now=NOW) is None
    change = room.timer_fired(timer.key, now=NOW + 60)
    assert change is not None
    [write] = change.writes
    assert isinstance(write, AppendAction) and write.record.timed_out  # history keeps it
    effects = done(room, change, now=NOW + 60)
    push = sent(effects, "p0")[0]
    assert push["events"][0] == {"kind": "timeout", "seat": state.turn}
    [next_timer] = [e for e in effects if isinstance(e, ArmTimer)]
    assert next_timer.key != timer.key and room.deadline == NOW + 120


def test_a_timer_the_store_refused_is_armed_again_with_a_growing_backoff() -> None:
    room = seated(turn_seconds=60)
    effects = done(room, room.start("p0", 1, now=NOW))
    [timer] = [e for e in effects if isinstance(e, ArmTimer)]
    delays = []
    for _ in range(3):
        change = room.timer_fired(timer.key, now=NOW)
        assert change is not None
        [retry] = [e for e in room.abort(change) if not isinstance(e, Send)]
        assert isinstance(retry, ArmTimer) and retry.key == timer.key
        delays.append(retry.delay)
    assert delays == sorted(delays) and delays[0] < delays[-1]


def test_bots_are_woken_on_their_turn_and_play_legal_moves() -> None:
    room = new_room()
    done(room, room.take_seat("anna", "Anna", 1, now=NOW))
    change = room.add_bot("anna", "random", 2)
    [write] = change.writes
    assert isinstance(write, PutSeat) and write.version == change.version
    assert write.record.bot and write.record.bot_level == "random"
    done(room, change)
    effects = done(room, room.start("anna", 3, now=NOW))
    state = room.state
    assert state is not None
    wake = [e for e in effects if isinstance(e, WakeBot)]
    turn = room.bot_turn()
    if state.turn == 1:
        assert wake == [WakeBot(0.25)] and turn is not None and turn.seat == 1
    else:
        assert wake == [] and turn is None
        done(room, room.act("anna", EndTurn(), 4, now=NOW))
        turn = room.bot_turn()
        assert turn is not None
    # a bot's illegal choice ends its turn instead of stalling the game
    change = room.bot_chose(turn, Move("nowhere"), now=NOW)  # type: ignore[arg-type]
    assert change is not None
    [write] = change.writes
    assert isinstance(write, AppendAction)
    done(room, change)
    assert room.log[-1] == (1, EndTurn())
    # a choice for a turn that is over is dropped
    assert room.bot_chose(turn, EndTurn(), now=NOW) is None


def test_a_bot_move_the_store_refused_wakes_the_bot_again_later() -> None:
    room = new_room()
    done(room, room.take_seat("anna", "Anna", 1, now=NOW))
    done(room, room.add_bot("anna", "random", 2))
    done(room, room.start("anna", 3, now=NOW))
    if room.bot_turn() is None:
        done(room, room.act("anna", EndTurn(), 4, now=NOW))
    turn = room.bot_turn()
    assert turn is not None
    action = legal_actions(turn.state, turn.seat)[0]
    change = room.bot_chose(turn, action, now=NOW)
    assert change is not None
    version = room.version
    [retry] = [e for e in room.abort(change) if not isinstance(e, Send)]
    assert isinstance(retry, WakeBot) and retry.delay > 0
    assert room.version == version and room.bot_turn() == turn


def test_resuming_a_seat_closes_the_older_member() -> None:
    room = new_room()
    anna = room.take_seat("anna", "Anna", 1, now=NOW)
    effects = done(room, anna)
    token = sent(effects, "anna")[0]["token"]
    with pytest.raises(BadToken):
        room.resume("anna2", "not the token", 2)
    effects = done(room, room.resume("anna2", token, 2))
    assert Close("anna", 4001, "your seat was taken back by a newer connection") in effects
    joined, view = sent(effects, "anna2")
    assert joined["seat"] == 0 and joined["token"] is None
    assert view["events"] == []
    assert room.seat_of("anna2") == 0 and room.seat_of("anna") is None
    assert room.creator == "anna2"


def test_leaving_is_forced_and_frees_a_seat_only_before_the_start() -> None:
    room = seated(3)
    change = room.leave("p1", dropped=True)
    assert change is not None and change.forced
    [remove] = change.writes
    assert isinstance(remove, RemoveSeat) and remove.version == change.version
    # the store failed, yet the member is gone: committed unstored
    room.commit(change, now=NOW, stored=False)
    assert room.seats[1] is None and room.stored_version == change.version - 1
    room = started()
    change = room.leave("p1", dropped=True)
    assert change is not None
    [write] = change.writes
    assert isinstance(write, UpdateRoom) and write.version == change.version
    effects = done(room, change)
    assert sent(effects, "p0")[0]["events"] == [
        {"kind": "disconnected", "seat": 1, "name": "P1"}]
    seat = room.seats[1]
    assert seat is not None and seat.member is None and seat.token_hash is not None
    assert room.leave("a spectator", dropped=False) is None


def test_spectators_watch_and_chat_without_changing_the_room() -> None:
    room = seated()
    effects = room.watch("eve", 3, name="Eve")
    joined, view = sent(effects, "eve")
    assert joined["seat"] is None and view["version"] == room.version
    effects = room.chat("p1", "whatever", "bona sort!", 4)
    [chat] = sent(effects, "eve")
    assert chat == {"type": "chat", "room": "r1", "seat": 1, "name": "P1", "text": "bona sort!"}
    assert sent(effects, "p1") == [{"type": "ok", "re": 4}, chat]
    with pytest.raises(RoomError):
        room.add_bot("eve", "random", 5)


def test_a_chat_line_is_kept_at_the_room_s_version_without_changing_it() -> None:
    room = started(fenced=True)
    room.watch("eve", 3, name="Eve")
    version = room.version
    said = room.chat_line("p1", "whatever", "bona sort!", now=NOW + 1)
    assert isinstance(said, AppendChat) and said.expect_version == room.stored_version
    assert said.record == ChatRecord("r1", version, 1, "P1", "bona sort!", NOW + 1)
    assert room.chat_line("eve", "Eve", "hola", now=NOW).record.seat is None
    assert room.version == version and not room.busy
    change = room.act("p0", EndTurn(), 4, now=NOW)
    [write] = change.writes
    assert isinstance(write, AppendAction) and not write.record.timed_out


def test_spectators_are_capped_and_chat_is_lossy_where_replies_and_states_are_not() -> None:
    room = seated()
    room.watch("eve", 3, name="Eve", max_spectators=2)
    room.watch("fina", 4, name="Fina", max_spectators=2)
    with pytest.raises(RoomError) as refused:
        room.watch("gil", 5, name="Gil", max_spectators=2)
    assert refused.value.code == "room_full" and "gil" not in room.members()
    room.leave("eve", dropped=True)
    room.watch("gil", 6, name="Gil", max_spectators=2)  # a place came free
    ok, push = room.chat("gil", "Gil", "visca!", 7)
    assert isinstance(push, Send) and push.lossy and not ok.lossy
    effects = done(room, room.start("p0", 8, now=NOW))
    assert not any(e.lossy for e in effects if isinstance(e, Send))


def test_a_fenced_room_expects_its_last_stored_version_in_every_write() -> None:
    room = new_room(fenced=True)
    change = room.take_seat("anna", "Anna", 1, now=NOW)
    # A seat change is one fenced write, which stores the new version with it.
    [put] = change.writes
    assert isinstance(put, PutSeat) and (put.expect_version, put.version) == (0, 1)
    done(room, change)
    assert room.stored_version == 1
    adding = room.add_bot("anna", "random", 2)
    [bot] = adding.writes
    assert isinstance(bot, PutSeat) and (bot.expect_version, bot.version) == (1, 2)
    room.abort(adding)
    done(room, room.take_seat("biel", "Biel", 2, now=NOW))
    change = room.leave("biel", dropped=False)
    assert change is not None
    [gone] = change.writes
    assert isinstance(gone, RemoveSeat) and (gone.expect_version, gone.version) == (2, 3)
    done(room, change)
    assert room.fence == room.stored_version == 3
    done(room, room.take_seat("biel", "Biel", 2, now=NOW))
    change = room.start("anna", 3, now=NOW)
    [write] = change.writes
    assert isinstance(write, UpdateRoom) and write.expect_version == 4 and write.version == 5


def test_taking_a_room_over_fences_it_from_the_version_loaded() -> None:
    room = started()
    room.fenced = False
    change = room.take_over()
    [write] = change.writes
    assert isinstance(write, UpdateRoom) and write.expect_version == 3 and write.version == 4
    room.abort(change)
    assert not room.fenced
    done(room, room.take_over())
    assert room.fenced and room.stored_version == 4


def test_a_whole_game_ends_with_its_result_stored_and_the_timer_cancelled() -> None:
    room = started(turn_seconds=30)
    rng = random.Random(3)
    writes: list[Any] = []
    effects: list[Any] = []
    while room.state is not None and not room.state.over:
        turn = room.state.turn
        assert turn is not None
        action = rng.choice(legal_actions(room.state, turn))
        change = room.act(f"p{turn}", action, 1, now=NOW)
        writes.extend(change.writes)
        effects = done(room, change)
    assert isinstance(writes[-1], Finish) and writes[-1].result["winners"]
    assert writes[-1].expect_version is None  # not fenced: any version
    assert CancelTimer() in effects and room.deadline is None and room.finished_at == NOW
    replayed = engine.new_game(["P0", "P1"], "normal", 7)
    for seat, action in room.log:
        replayed, _ = engine.apply(replayed, seat, action)
    assert replayed == room.state


def test_bots_of_any_level_are_seated_under_their_level_with_one_first_name_each() -> None:
    room = new_room(4)
    done(room, room.take_seat("anna", "Anna", 1, now=NOW))
    for re, level in enumerate(("hard", "easy", "greedy"), 2):
        done(room, room.add_bot("anna", level, re))
    names = [seat.name for seat in room.seats if seat is not None][1:]
    levels = [seat.bot for seat in room.seats if seat is not None][1:]
    assert levels == ["hard", "easy", "normal"]  # greedy is normal's other name
    assert [n.split("·")[1] for n in names] == levels
    assert len({n.split("·")[0] for n in names}) == 3, names  # not a Pau beside a Pau
