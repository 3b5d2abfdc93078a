"""The server end to end: real server on 127.0.0.1, real websocket clients (docs/protocol.md)."""

from __future__ import annotations

import asyncio
import random

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from client.net.net import GameClient, ServerError
from shared import engine
from shared import messages as m
from shared.actions import Move
from shared.messages import action_from_fields
from shared.view import build_view
from tests.support.servers import with_config
from tests.support.wire import play_legal


async def _room_of(connect, seats: int, *, spectator: bool = False, **room):
    """A room with ``seats`` real players (seat i = clients[i]), optionally a spectator."""
    clients = [await connect(f"P{i}") for i in range(seats)]
    joined = await clients[0].request(m.CreateRoom, name="Friday night", seats=seats, **room)
    tokens = [joined.token]
    for c in clients[1:]:
        j = await c.request(m.JoinRoom, room=joined.room)
        tokens.append(j.token)
    watcher = None
    if spectator:
        watcher = await connect("Watcher")
        await watcher.request(m.JoinRoom, room=joined.room, **{"as_": "spectator"})
    return joined.room, clients, tokens, watcher


def _turn(client: GameClient) -> int | None:
    assert client.state is not None
    return client.state.view["turn"]


async def test_whole_four_seat_game_with_a_spectator(server, connect):
    room_id, clients, _, watcher = await _room_of(connect, 4, spectator=True)
    await clients[0].request(m.StartGame)
    for c in clients:
        await c.wait_state(lambda p: p.view["status"] == "playing")
    await play_legal(clients, random.Random(7))
    final = clients[0].state
    assert final.view["scores"] is not None and final.view["winners"]
    # the spectator got every push, in order, one version at a time
    pushes = [p for p in watcher.drain() if isinstance(p, m.StatePush)]
    versions = [p.version for p in pushes]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert pushes[-1].view == final.view
    actions_seen = []
    for p in pushes:
        for e in p.events:
            if e["kind"] == "action":
                actions_seen.append((e["seat"], e["action"]))
    # replaying the actions the room reported in shared gives the same final state
    assert actions_seen, "the spectator saw the actions"
    assert [p["name"] for p in final.view["players"]] == ["P0", "P1", "P2", "P3"]
    # replaying, in shared, the actions the spectator was told of gives the same final view
    room = server.lobby.rooms[room_id].room
    state = engine.new_game(["P0", "P1", "P2", "P3"], "normal", room.seed)
    for seat, fields in actions_seen:
        state, _ = engine.apply(state, seat, action_from_fields(fields))
    assert build_view(room.info(), state) == final.view


async def test_final_state_equals_replay_in_shared(server, connect):
    room_id, clients, _, _ = await _room_of(connect, 2)
    await clients[0].request(m.StartGame)
    for c in clients:
        await c.wait_state(lambda p: p.view["status"] == "playing")
    await play_legal(clients, random.Random(3))
    room = server.lobby.rooms[room_id].room
    replayed = engine.new_game([s.name for s in room.seats], room.variant, room.seed)
    for seat, action in room.log:
        replayed, _ = engine.apply(replayed, seat, action)
    assert replayed == room.state
    assert build_view(room.info(), replayed) == clients[0].state.view


async def test_two_seat_game_against_a_bot_to_the_end(connect):
    me = await connect("Anna")
    await me.request(m.CreateRoom, name="vs bot", seats=2)
    await me.request(m.AddBot, level="random")
    await me.request(m.StartGame)
    await me.wait_state(lambda p: p.view["status"] == "playing")
    async with asyncio.timeout(60):
        await play_legal([me, None], random.Random(11))
    assert me.state.view["status"] == "finished"
    assert me.state.view["players"][1]["bot"] is True
    assert me.state.view["winners"]


async def test_refusals_leave_the_game_unharmed(connect):
    room, clients, _, _ = await _room_of(connect, 2)
    # starting before the seats are full, in another room
    lonely = await connect("Lonely")
    await lonely.request(m.CreateRoom, name="alone", seats=3)
    with pytest.raises(ServerError) as err:
        await lonely.request(m.StartGame)
    assert err.value.code == "seats_not_full"
    # only the creator starts
    with pytest.raises(ServerError) as err:
        await clients[1].request(m.StartGame)
    assert err.value.code == "not_creator"
    await clients[0].request(m.StartGame)
    await clients[0].wait_state(lambda p: p.view["status"] == "playing")
    # joining a full room
    late = await connect("Late")
    with pytest.raises(ServerError) as err:
        await late.request(m.JoinRoom, room=room)
    assert err.value.code in ("room_full", "already_started")
    # acting in a room you are not in
    with pytest.raises(ServerError) as err:
        await late.act(Move("gir"))
    assert err.value.code == "not_in_room"
    # acting out of turn
    turn = _turn(clients[0])
    other = clients[1 - turn]
    with pytest.raises(ServerError) as err:
        await other.act(Move("gir"))
    assert err.value.code == "not_your_turn"
    # acting "for another seat": the wire has no seat field, so naming one is refused
    raw = msgpack.packb({"type": "action", "id": 99, "kind": "move", "region": "gir",
                         "seat": turn})
    other.drain()
    await other.ws.send(raw)
    error = await other.next_push()
    assert isinstance(error, m.Error) and error.code == "invalid_field" and error.re == 99
    # a rule refusal names its rule
    with pytest.raises(ServerError) as err:
        await clients[turn].act(Move("nowhere"))
    assert err.value.code in ("invalid_field", "illegal_action")
    # the game goes on: the player whose turn it is can still play
    version = await clients[turn].act(Move("gir"))
    assert version == clients[turn].state.version or version > 0


async def test_reconnect_with_token_and_wrong_token(connect, url):
    room, clients, tokens, _ = await _room_of(connect, 2)
    await clients[0].request(m.StartGame)
    await clients[1].wait_state(lambda p: p.view["status"] == "playing")
    await clients[1].close()
    state = await clients[0].wait_state(
        lambda p: p.view["status"] == "playing" and not p.view["players"][1]["connected"])
    assert any(e["kind"] == "disconnected" for e in state.events)
    back = await connect("P1 again")
    with pytest.raises(ServerError) as err:
        await back.request(m.JoinRoom, room=room, token="not-the-token")
    assert err.value.code == "bad_token"
    joined = await back.request(m.JoinRoom, room=room, token=tokens[1])
    assert joined.seat == 1 and joined.token is None
    await clients[0].wait_state(lambda p: p.view["players"][1]["connected"])
    # the game continues with the resumed seat
    seat = _turn(clients[0])
    actor = clients[0] if seat == 0 else back
    assert await actor.act(Move("cen")) > 0


async def test_taking_back_a_seat_closes_the_old_connection(connect):
    room, clients, tokens, _ = await _room_of(connect, 2)
    twin = await connect("Twin")
    await twin.request(m.JoinRoom, room=room, token=tokens[1])
    await asyncio.wait_for(clients[1].closed.wait(), 5)
    assert clients[1].ws.close_code == 4001


async def test_handshake_needs_the_subprotocol(url):
    for protocols in (None, ["chat.v2"]):
        with pytest.raises(InvalidStatus) as err:
            async with ws_connect(url, subprotocols=protocols):
                pass
        assert err.value.response.status_code == 400
        assert b"castell.v1" in err.value.response.body


async def test_text_and_garbage_get_bad_message_and_the_connection_lives(connect):
    c = await connect()
    await c.ws.send("hello?")
    err = await c.next_push()
    assert isinstance(err, m.Error) and err.code == "bad_message" and err.re is None
    await c.ws.send(b"\xc1\xff\x00garbage")
    err = await c.next_push()
    assert isinstance(err, m.Error) and err.code == "bad_message"
    welcome = await c.hello("Still here")
    assert welcome.protocol == 1


async def test_hello_first(connect):
    c = await connect()
    with pytest.raises(ServerError) as err:
        await c.request(m.ListRooms)
    assert err.value.code == "hello_first"


async def test_oversized_frame_closes_only_that_connection(connect, server):
    big = await connect("Big")
    small = await connect("Small")
    await big.ws.send(b"\x00" * (server.config.max_frame + 1))
    await asyncio.wait_for(big.closed.wait(), 5)
    assert big.ws.close_code == 1009
    rooms = await small.request(m.ListRooms)
    assert isinstance(rooms, m.Rooms)


async def test_list_rooms_hides_private_rooms_and_codes_let_you_in(connect):
    a = await connect("A")
    public = await a.request(m.CreateRoom, name="open table", seats=2)
    b = await connect("B")
    private = await b.request(m.CreateRoom, name="secret", seats=2, private=True)
    assert private.code
    c = await connect("C")
    listing = await c.request(m.ListRooms)
    assert [r.room for r in listing.rooms] == [public.room]
    with pytest.raises(ServerError) as err:
        await c.request(m.JoinRoom, room=private.room)
    assert err.value.code == "room_not_found"
    joined = await c.request(m.JoinRoom, room=private.code.lower())
    assert joined.room == private.room and joined.seat == 1


@pytest.fixture
def server_config(server_config):
    return with_config(turn_time_scale=0.02)(server_config)


async def test_turn_timer_ends_a_turn(connect):
    _room, clients, _, _ = await _room_of(connect, 2, turn_seconds=10)
    await clients[0].request(m.StartGame)
    first = await clients[0].wait_state(lambda p: p.view["status"] == "playing")
    seat = first.view["turn"]
    assert first.view["deadline"] is not None
    timed = await clients[0].wait_state(
        lambda p: any(e["kind"] == "timeout" for e in p.events), timeout=5)
    assert {"kind": "timeout", "seat": seat} in timed.events
    assert timed.view["turn"] != seat


async def test_chat_reaches_the_room(connect):
    _room, clients, _, _ = await _room_of(connect, 2)
    await clients[0].request(m.Chat, text="bon dia!")
    for c in clients:
        async with asyncio.timeout(5):
            while not isinstance(push := await c.pushes.get(), m.ChatPush):
                pass
        assert push.text == "bon dia!" and push.seat == 0 and push.name == "P0"


async def test_an_error_in_one_room_does_not_reach_another(connect):
    _r1, c1, _, _ = await _room_of(connect, 2)
    _r2, c2, _, _ = await _room_of(connect, 2)
    await c1[0].request(m.StartGame)
    await c2[0].request(m.StartGame)
    await c1[0].wait_state(lambda p: p.view["status"] == "playing")
    before = c2[0].state.version
    c1[0].drain()
    await c1[0].ws.send(b"\x93\x01\x02")  # a msgpack list, not a map
    await c1[0].next_push()
    with pytest.raises(ServerError):
        await c1[1 - _turn(c1[0])].act(Move("gir"))
    # a round trip of c2's: whatever the server sent it before has arrived
    await c2[0].request(m.HistoryRequest, limit=1)
    assert c2[0].state.version == before
    assert not any(isinstance(p, m.Error) for p in c2[0].drain())
