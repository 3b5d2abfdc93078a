"""Resigning (docs/rules.md §10 "Resigning", docs/protocol.md ``resign``), layer by layer: the
rules engine and the final order by value; the room by value (tests/support/drive.py): what
it stores, who hears what in which order, how the seat is played out afterwards (a bot in an
unrated room, the timer at once in a rated one), and what it refuses; the record, the
history and a restart replaying the resignation; and the request over real sockets, its
reply before its push and its refusals with the protocol's codes."""

from __future__ import annotations

import random
import time
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.typing import Subprotocol

from server.core.history import derive
from server.core.room import AppendAction, ArmTimer, Finish, Room, WakeBot
from server.features.ratings import placings
from server.ops.export import record_file
from server.store.base import ActionRecord, GameRecord, RoomRecord, SeatRecord
from shared import messages as m
from shared.actions import EndTurn, Move, Resign, Undo
from shared.codec import decode, encode, pack_action
from shared.engine import apply, legal_actions
from shared.errors import ProtocolError, RuleError
from shared.events import GameEnded, Resigned
from shared.record import GameRecordFile, RecordedAction
from shared.replay import record_state
from shared.scoring import places, ranked
from shared.view import RoomInfo, SeatInfo, build_view, make_view, parse_view, state_from_view
from shared.wire import converter
from tests.support.drive import do, drive
from tests.support.games import game, on_turn, play, play_out, with_player

pytestmark = pytest.mark.timeout(60)

NOW = 1_000_000.0


# -- the rules ---------------------------------------------------------------------------------


def test_a_resignation_out_of_turn_leaves_the_turn_under_way_and_its_undo_resigned_too():
    start = on_turn(game(3, seed=2), 0)
    moved, _ = play(start, 0, Move("gir"))
    after, events = apply(moved, 2, Resign())
    assert events == [Resigned(seat=2)]
    assert after.resigned == (2,) and after.turn == 0 and after.done == ("move",)
    # Seat 0 takes its move back: the state it goes back to still has seat 2 resigned.
    back, _ = apply(after, 0, Undo())
    assert back.resigned == (2,) and back.done == ()
    with pytest.raises(RuleError) as again:
        apply(after, 2, Resign())
    assert again.value.code == "already_resigned"


def test_a_resignation_on_the_seat_s_own_turn_keeps_what_it_did_and_is_not_taken_back():
    start = on_turn(game(3, seed=2), 1)
    moved, _ = play(start, 1, Move("bcn"))
    after, _ = apply(moved, 1, Resign())
    assert after.turn == 1 and after.done == ("move",) and after.players[1].region == "bcn"
    assert after.undo is None  # nothing of the turn, nor the resignation, comes back
    # Whoever plays the seat now plays on from there (a bot, or the timer's end_turn).
    assert EndTurn() in legal_actions(after, 1)


def test_in_a_two_player_game_the_other_player_wins_at_once_whatever_the_scores():
    start = with_player(on_turn(game(2, seed=4), 0), 0, best=12)  # seat 0 is far ahead
    after, events = apply(start, 0, Resign())
    assert after.over and after.turn is None
    assert after.winners == (1,)
    assert events[0] == Resigned(seat=0) and isinstance(events[1], GameEnded)
    assert events[1].winners == (1,)
    assert after.scores is not None and after.scores[0].total > after.scores[1].total
    with pytest.raises(RuleError) as over:
        apply(after, 1, Resign())
    assert over.value.code == "game_over"


def test_a_bigger_game_goes_on_until_one_player_is_left_or_the_room_says_it_ends():
    start = on_turn(game(4, seed=5), 0)
    one, _ = apply(start, 1, Resign())
    two, _ = apply(one, 3, Resign())
    assert not one.over and not two.over  # two players are still in it
    three, _ = apply(two, 0, Resign())
    assert three.over and three.winners == (2,) and three.resigned == (1, 3, 0)
    # `ends`: the room saw that only bots were left to play: it ends with this one.
    ended, _ = apply(start, 1, Resign(ends=True))
    assert ended.over and 1 not in (ended.winners or ())


def test_a_game_played_to_its_end_with_a_resigned_seat_never_lets_it_win():
    rng = random.Random(3)
    start, _ = apply(game(3, seed=3), 1, Resign())
    steps = list(play_out(start, rng))
    final = steps[-1].state
    assert final.over and final.resigned == (1,)
    assert 1 not in (final.winners or ())
    assert final.winners  # the others' best, by §9


def test_the_final_order_puts_those_who_resigned_last_the_first_to_resign_lowest():
    totals = [(0, 30), (1, 40), (2, 25), (3, 30)]
    place = places(totals, winners={1}, resigned=[1, 2])
    # Seat 1 had the most points but resigned first: last. Seats 0 and 3 tie for first.
    assert place == {0: 1, 3: 1, 2: 3, 1: 4}
    assert ranked(place) == [0, 3, 2, 1]
    assert places(totals, winners={1}) == {1: 1, 0: 2, 3: 2, 2: 4}  # nobody resigned: §9


def test_a_rated_game_rates_the_resigned_last():
    result = {"scores": [{"seat": 0, "total": 10}, {"seat": 1, "total": 50}],
              "winners": [0], "resigned": [1]}
    order = placings(result, {0: "acc-a", 1: "acc-b"})
    assert [(p.account, p.place) for p in order] == [("acc-a", 1), ("acc-b", 2)]


# -- the view, the record, the wire --------------------------------------------------------------


def _room(state, **changes: Any) -> RoomInfo:
    return RoomInfo(room="r1", name="Sala", variant=state.variant, seats=state.seats,
                    status="playing",
                    players=tuple(SeatInfo(p.seat, p.name) for p in state.players), **changes)


def test_the_view_lists_the_resigned_seats_and_a_client_rebuilds_them():
    state, _ = apply(on_turn(game(3, seed=1), 0), 2, Resign())
    view = build_view(_room(state), state)
    assert view["resigned"] == [2]
    assert view == converter.unstructure(make_view(_room(state), state))
    assert state_from_view(parse_view(view)).resigned == (2,)
    nobody = build_view(_room(state), game(3, seed=1))
    assert "resigned" not in nobody  # absent while nobody has (an addition)


def test_resign_is_a_request_of_its_own_never_an_action_kind():
    frame = msgpack.packb({"type": "action", "id": 3, "kind": "resign"})
    with pytest.raises(ProtocolError) as refused:
        decode(frame)
    assert (refused.value.code, refused.value.field) == ("invalid_field", "kind")
    assert decode(encode(m.ResignRequest(id=4))) == m.ResignRequest(id=4)


def test_a_record_with_a_resignation_replays_to_the_same_end_and_old_records_still_do():
    start = game(2, seed=6)
    seat = start.turn
    assert seat is not None
    moved, _ = apply(start, seat, Move("alt"))
    resigned, _ = apply(moved, 1 - seat, Resign())
    record = GameRecordFile(room="r1", name="Sala", variant="normal", seats=("Anna", "Biel"),
                            bots=(False, False), seed=6,
                            actions=(RecordedAction(seat, Move("alt")),
                                     RecordedAction(1 - seat, Resign())))
    again = GameRecordFile.from_json(record.to_json())
    assert again == record
    assert '"kind": "resign"' in record.to_json()
    assert record_state(again) == resigned and resigned.winners == (seat,)
    old = GameRecordFile.from_json(GameRecordFile(
        room="r1", name="Sala", variant="normal", seats=("Anna", "Biel"), bots=(False, False),
        seed=6, actions=(RecordedAction(seat, Move("alt")),)).to_json())
    assert record_state(old) == moved


# -- the room, by value ------------------------------------------------------------------------


def _room_of(seats: int, *, bots: tuple[int, ...] = (), rated: bool = False,
             turn_seconds: int | None = None) -> Room[str]:
    """A started room: people p0, p1, ... in the seats not in ``bots``."""
    room: Room[str] = Room("r1", "Sala", seats, "normal", turn_seconds, False, seed=7, now=NOW,
                           rated=rated)
    inputs = []
    for i in range(seats):
        if i in bots:
            inputs.append(do("seat_bot", i, "normal"))
        else:
            inputs.append(do("take_seat", f"p{i}", f"P{i}", 100 + i, now=NOW,
                             account=f"acc{i}" if rated else None))
    first = next(i for i in range(seats) if i not in bots)
    out = drive(room, [*inputs, do("start", f"p{first}", 99, now=NOW)])
    assert not out.refused, out.refused
    return room


def test_resigning_stores_the_resignation_answers_ok_then_pushes_it_to_everyone():
    room = _room_of(2)
    out = drive(room, [do("resign", "p1", 7, now=NOW)])
    append, finish = out.writes
    assert isinstance(append, AppendAction) and append.record.action == pack_action(Resign())
    assert append.record.seat == 1
    assert isinstance(finish, Finish)
    assert finish.result["winners"] == [0] and finish.result["resigned"] == [1]
    to_p1 = out.to("p1")
    assert to_p1[0] == {"type": "ok", "re": 7, "version": room.version}  # the reply first
    assert to_p1[1]["type"] == "state"
    kinds = [e["kind"] for e in to_p1[1]["events"]]
    assert kinds == ["resigned", "game_over"]
    assert [e["kind"] for e in out.to("p0")[0]["events"]] == kinds
    assert room.state is not None and room.state.over and room.state.resigned == (1,)


def test_spectators_unstarted_finished_and_resigned_players_are_refused_with_listed_codes():
    waiting: Room[str] = Room("r2", "Sala", 2, "normal", None, False, seed=7, now=NOW)
    out = drive(waiting, [do("take_seat", "p0", "P0", 1, now=NOW),
                          do("resign", "p0", 2, now=NOW)])
    assert [e.code for e in out.refused] == ["game_not_started"]

    room = _room_of(3)
    room.spectators["s"] = "Sam"
    out = drive(room, [do("resign", "s", 1, now=NOW), do("resign", "p2", 2, now=NOW),
                       do("resign", "p2", 3, now=NOW),
                       do("act", "p2", EndTurn(), 4, now=NOW)])
    assert [e.code for e in out.refused] == ["not_a_player", "resigned", "resigned"]

    two = _room_of(2)
    out = drive(two, [do("resign", "p0", 1, now=NOW), do("resign", "p1", 2, now=NOW)])
    assert [e.code for e in out.refused] == ["game_over"]


def _to_turn_of(room: Room[str], seat: int, out: Any) -> Any:
    """The people on turn end their turns until it is ``seat``'s; the last drive's outcome
    (``out`` when it is already)."""
    for _ in range(12):
        state = room.state
        assert state is not None and not state.over
        if state.turn == seat:
            return out
        out = drive(room, [do("act", f"p{state.turn}", EndTurn(), 1, now=NOW)])
        assert not out.refused, out.refused
    raise AssertionError("the turn never came")


def test_in_an_unrated_room_a_bot_plays_the_resigned_seat_s_turns():
    room = _room_of(3)
    out = _to_turn_of(room, 1, drive(room, [do("resign", "p1", 5, now=NOW)]))
    assert WakeBot in {type(e) for e in out.effects}  # the bot is woken for the turn
    turn = room.bot_turn()
    assert turn is not None and turn.seat == 1 and turn.level == "normal"
    assert room.seats[1] is not None and room.seats[1].bot is None  # still the player's
    assert not out.of(ArmTimer) or all(a.delay > 0 for a in out.of(ArmTimer))


def test_in_a_rated_room_the_resigned_seat_s_turns_end_at_once_as_timed_out():
    room = _room_of(3, rated=True, turn_seconds=600)
    state = room.state
    assert state is not None
    seat = state.turn
    assert seat is not None
    # The player on turn resigns: no bot may sit here, the turn ends at once.
    out = drive(room, [do("resign", f"p{seat}", 5, now=NOW)])
    assert room.bot_turn() is None
    key = (state.round, seat)
    assert ArmTimer(key, 0.0) in out.of(ArmTimer)
    ended = drive(room, [do("timer_fired", key, now=NOW)])
    events = [e["kind"] for e in ended.pushes[0].events]
    assert events[:2] == ["timeout", "action"]
    # the event says why: not the room's timer, the resignation
    assert ended.pushes[0].events[0] == {"kind": "timeout", "seat": seat, "reason": "resigned"}
    assert room.state is not None and room.state.turn != seat
    # Its next turn ends at once too, when it comes.
    played = _to_turn_of(room, seat, ended)
    assert played.of(ArmTimer) == [ArmTimer((room.state.round, seat), 0.0)]
    assert room.deadline == NOW


def test_when_only_bots_are_left_the_game_ends_with_the_resignation():
    room = _room_of(3, bots=(1, 2))
    out = drive(room, [do("resign", "p0", 5, now=NOW)])
    append = out.writes[0]
    assert isinstance(append, AppendAction) and append.record.action == \
        pack_action(Resign(ends=True))
    assert room.state is not None and room.state.over and 0 not in (room.state.winners or ())


def test_a_rated_game_where_nobody_played_is_still_not_rated_after_a_resignation():
    room = _room_of(2, rated=True, turn_seconds=600)
    out = drive(room, [do("resign", "p0", 5, now=NOW)])
    finish = next(w for w in out.writes if isinstance(w, Finish))
    assert not finish.rated and finish.result["unrated"].startswith("not rated: nobody played")


def test_a_stored_game_with_a_resignation_comes_back_and_its_history_shows_it():
    room = _room_of(3)
    state = room.state
    assert state is not None
    drive(room, [do("resign", "p2", 5, now=NOW)])
    first = state.turn
    stored = [ActionRecord("r1", i, seat, pack_action(action), NOW, 10 + i, False)
              for i, (seat, action) in enumerate(room.log)]
    record = GameRecord(
        RoomRecord("r1", "Sala", 3, "normal", None, False, None, seed=7, status="playing",
                   version=room.version, created_at=NOW),
        tuple(SeatRecord("r1", i, f"P{i}") for i in range(3)), tuple(stored))
    back: Room[str] = Room.from_record(record, now=NOW)
    assert back.state == room.state and back.state.resigned == (2,) and back.state.turn == first
    history = derive(record, ())
    kinds = [e["kind"] for entry in history.page(None, 100) for e in entry.events]
    assert "resigned" in kinds
    exported = record_file(record)
    assert exported.actions[-1].action == Resign()
    assert record_state(exported) == room.state


# -- over real sockets -----------------------------------------------------------------------


async def _frames(ws: Any, count: int) -> list[dict[str, Any]]:
    """The next ``count`` frames ``ws`` receives, decoded."""
    return [msgpack.unpackb(await ws.recv()) for _ in range(count)]


async def _until(ws: Any, wanted: Any) -> dict[str, Any]:
    """Frames until one satisfies ``wanted`` (pushes before it, such as the view again for a
    spectator coming in, are read past); that one."""
    for _ in range(20):
        frame = msgpack.unpackb(await ws.recv())
        if wanted(frame):
            return frame
    raise AssertionError("the frame never came")


def _playing(frame: dict[str, Any]) -> bool:
    return frame.get("type") == "state" and frame["view"]["status"] == "playing"


async def test_over_the_wire_the_resigner_hears_ok_then_the_push_and_others_are_refused(url):
    sub = [Subprotocol(m.SUBPROTOCOL)]
    async with ws_connect(url, subprotocols=sub) as anna, \
            ws_connect(url, subprotocols=sub) as biel, \
            ws_connect(url, subprotocols=sub) as carme:
        for ws, name in ((anna, "Anna"), (biel, "Biel"), (carme, "Carme")):
            await ws.send(encode(m.Hello(id=1, name=name)))
            assert (await _frames(ws, 1))[0]["type"] == "welcome"
        await carme.send(encode(m.ResignRequest(id=2)))  # in the lobby
        assert (await _frames(carme, 1))[0]["code"] == "not_in_room"

        await anna.send(encode(m.CreateRoom(id=2, name="Sala", seats=2)))
        room = (await _until(anna, lambda f: f["type"] == "joined"))["room"]
        await biel.send(encode(m.JoinRoom(id=2, room=room)))
        await _until(biel, lambda f: f["type"] == "joined")
        await carme.send(encode(m.JoinRoom(id=3, room=room, as_="spectator")))
        await _until(carme, lambda f: f["type"] == "joined")
        await carme.send(encode(m.ResignRequest(id=4)))  # before the start, a spectator
        assert (await _until(carme, lambda f: f["type"] == "error"))["code"] == "not_a_player"
        await biel.send(encode(m.ResignRequest(id=3)))
        refused = await _until(biel, lambda f: f["type"] == "error")
        assert refused["code"] == "game_not_started"
        await anna.send(encode(m.StartGame(id=3)))
        for ws in (anna, biel, carme):
            await _until(ws, _playing)

        await biel.send(encode(m.ResignRequest(id=5)))
        reply, push = await _frames(biel, 2)  # the reply first, then the push
        assert reply["type"] == "ok" and reply["re"] == 5 and reply["version"] == push["version"]
        assert push["type"] == "state"
        assert [e["kind"] for e in push["events"]] == ["resigned", "game_over"]
        assert push["view"]["resigned"] == [1] and push["view"]["winners"] == [0]
        for ws in (anna, carme):
            seen = await _until(ws, lambda f: f.get("type") == "state"
                                and f["view"]["status"] == "finished")
            assert seen["version"] == push["version"] and seen["view"]["winners"] == [0]

        await anna.send(encode(m.ResignRequest(id=6)))
        assert (await _frames(anna, 1))[0]["code"] == "game_over"
        await anna.send(encode(m.RecordRequest(id=7, room=room)))
        record = GameRecordFile.from_data((await _frames(anna, 1))[0]["game"])
        assert record.actions[-1] == RecordedAction(1, Resign(), record.actions[-1].at)
        assert record.result is not None and record.result["resigned"] == [1]
        assert record_state(record).winners == (0,)


async def test_an_account_that_resigned_hears_no_turn_of_it_and_its_games_say_so(url):
    from client.local.keys import new_key
    from client.net.net import GameClient
    from tests.support.wire import caught_up

    keys = {"Anna": new_key(), "Biel": new_key()}
    anna, biel, anna_away, biel_away = [await GameClient.connect(url) for _ in range(4)]
    try:
        for client, name in ((anna, "Anna"), (biel, "Biel"), (anna_away, "Anna"),
                             (biel_away, "Biel")):
            await client.hello(name, keys[name])
        made = await anna.request(m.CreateRoom, name="Sala", seats=3)
        await biel.request(m.JoinRoom, room=made.room)
        await anna.request(m.AddBot, level="random")
        await anna.request(m.StartGame)
        await anna.wait_state(lambda p: p.view["status"] == "playing")
        resigned = await biel.request(m.ResignRequest)
        games = (await biel_away.request(m.MyGames)).entries
        assert [(g.room, g.resigned, g.status) for g in games] == \
            [(made.room, True, "playing")]
        assert games[0].started_at is not None
        assert (await anna_away.request(m.MyGames)).entries[0].resigned is None
        await caught_up(anna, resigned.version)
        anna.drain()
        biel_away.drain()  # (his turn may have come before he resigned)
        anna_away.drain()

        # Seat 1's turn comes again (a bot plays it), then Anna's: her account hears hers
        # where she is not, Biel's account nothing of his seat's.
        state = anna.state
        assert state is not None
        began = 0
        for _ in range(300):
            if state.view["turn"] == 0 and began:
                break
            if state.view["turn"] == 0:
                await anna.request(m.ActionRequest, action=EndTurn())
            state = await anna.wait_state()
            began += any(e["kind"] == "turn" and e["seat"] == 1 for e in state.events)
        assert began and state.view["turn"] == 0 and state.view["status"] == "playing"
        await anna_away.next_push(timeout=10)
        # (a reply comes after whatever the server sent that connection before it)
        await biel_away.request(m.MyGames)
        assert not any(isinstance(p, m.YourTurnPush) for p in biel_away.drain())
    finally:
        for client in (anna, biel, anna_away, biel_away):
            await client.close()


async def test_in_a_rated_room_on_a_server_the_resigned_seat_s_turn_times_out_at_once(url):
    from client.local.keys import new_key
    from client.net.net import GameClient
    from tests.support.wire import caught_up

    names = ("Anna", "Biel", "Carme")
    clients = [await GameClient.connect(url) for _ in names]
    try:
        for client, name in zip(clients, names, strict=True):
            await client.hello(name, new_key())
        anna, biel, carme = clients
        made = await anna.request(m.CreateRoom, name="Lliga", seats=3, rated=True)
        for client in (biel, carme):
            await client.request(m.JoinRoom, room=made.room)
        await anna.request(m.StartGame)
        await anna.wait_state(lambda p: p.view["status"] == "playing")
        await biel.request(m.ResignRequest)
        # Those on turn end it until seat 1's turn has come: it ends by itself, a timeout,
        # at once, not when the room's turn timer would run out.
        began = time.monotonic()
        timed_out = False
        for _ in range(40):
            history = await anna.request(m.HistoryRequest)
            timed_out = any(e["kind"] == "timeout" and e["seat"] == 1
                            for entry in history.entries for e in entry.events)
            if timed_out:
                break
            latest = anna.state
            assert latest is not None
            seat = latest.view["turn"]
            if seat in (0, 2):
                done = await clients[seat].request(m.ActionRequest, action=EndTurn())
                await caught_up(anna, done.version)
            else:  # seat 1's: it ends without anyone
                await anna.wait_state(lambda p, v=latest.version: p.version > v)
        assert timed_out
        state = anna.state
        assert state is not None and state.view["resigned"] == [1]
        timer = state.view["turn_seconds"]
        assert timer is None or time.monotonic() - began < timer / 2
    finally:
        for client in clients:
            await client.close()
