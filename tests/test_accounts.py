"""Accounts by key, "my games", rematch and correspondence games, over real sockets
(server/features/accounts.py, docs/protocol.md): real servers on 127.0.0.1 on real SQLite files."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from client.local.keys import new_key
from client.net.net import GameClient, ServerError
from server.store import open_store
from shared import messages as m
from shared.actions import EndTurn
from shared.record import GameRecordFile, replay
from tests.support.accounts import Connect, clients
from tests.support.servers import serving
from tests.support.wire import caught_up, play_legal

pytestmark = pytest.mark.timeout(90)



@pytest.fixture
async def url(tmp_path: Path) -> AsyncIterator[str]:
    async with serving(open_store(tmp_path / "castell.sqlite3")) as (_, made):
        yield made


@pytest.fixture
async def connect(url: str) -> AsyncIterator[Connect]:
    async with clients(url) as make:
        yield make


async def refused(client: GameClient, code: str, cls: type, **fields: object) -> ServerError:
    with pytest.raises(ServerError) as caught:
        await client.request(cls, **fields)
    assert caught.value.code == code, caught.value
    return caught.value


async def started(anna: GameClient, biel: GameClient, **settings: object) -> str:
    """A 2-seat game of Anna (seat 0) and Biel (seat 1), started; its room id."""
    anna.state = biel.state = None  # a room left before: its versions are another count
    made = await anna.request(m.CreateRoom, name="Dissabte", seats=2, **settings)
    await biel.request(m.JoinRoom, room=made.room)
    await anna.request(m.StartGame)
    for client in (anna, biel):
        await client.wait_state(lambda p: p.view["status"] == "playing")
    return made.room


async def end_turn(clients: list[GameClient]) -> int:
    """The seat to act ends its turn; the seat whose turn it is then."""
    view = clients[0].state.view
    await clients[view["turn"]].act(EndTurn())
    push = await clients[0].wait_state(lambda p: p.view["turn"] != view["turn"])
    for client in clients:
        await caught_up(client, push.version)
    return push.view["turn"]


async def finish(clients: list[GameClient]) -> None:
    """Every turn ended at once, to the end of round 10."""
    await play_legal(clients, random.Random(5), end_bias=1.0, timeout=20)
    assert clients[0].state is not None and clients[0].state.view["status"] == "finished"


async def test_a_new_key_registers_and_the_same_key_signs_in_under_the_account_s_name(connect):
    key = new_key()
    first = await connect("Anna", key)
    welcome = await first.request(m.Hello, name="Anna", key=key)  # a second hello: the same
    assert (welcome.account, welcome.name) == (True, "Anna")
    # From another connection, whatever name is typed, the account's name is used.
    again = await connect("Somebody", key)
    room = await again.request(m.CreateRoom, name="Nit", seats=2)
    push = await again.wait_state(lambda p: p.room == room.room)
    assert [p["name"] for p in push.view["players"]] == ["Anna"]
    # A guest is told it is one.
    guest = await connect("Biel")
    assert (await guest.request(m.Hello, name="Biel")).account is False


@pytest.mark.parametrize("look_alike", ["Anna", "ANNA", "anna", "Ａｎｎａ"])
async def test_an_account_s_name_is_its_own_for_guests_and_new_accounts(connect, look_alike):
    await connect("Anna", new_key())
    other = await connect("Biel")
    error = await refused(other, "name_taken", m.Hello, name=look_alike)
    assert "account" in error.message
    await refused(other, "name_taken", m.Hello, name=look_alike, key=new_key())
    # The connection keeps its own name, and still works as it did.
    assert (await other.request(m.ListRooms)).rooms == ()


async def test_wrong_keys_are_rate_limited_like_seat_tokens(connect):
    right = new_key()
    await connect("Anna", right)
    guesser = await connect("Intrús")
    for _ in range(10):  # resume_attempts: 10 per connection within a minute
        await refused(guesser, "name_taken", m.Hello, name="Anna", key=new_key())
    # Now even the right key is refused from there for a while: keys cannot be tried fast.
    error = await refused(guesser, "rate_limited", m.Hello, name="Anna", key=right)
    assert "wrong keys" in error.message
    # Another connection from the same address still has its own budget, up to the address's.
    assert (await (await connect("Carme")).request(m.Hello, name="Anna", key=right)).account


async def test_a_seat_is_taken_back_by_its_account_from_a_second_terminal(connect):
    anna_key = new_key()
    anna = await connect("Anna", anna_key)
    biel = await connect("Biel", new_key())
    room = await started(anna, biel)
    # A second terminal, no seat token: the account's seat comes back all the same.
    elsewhere = await connect("Anna", anna_key)
    joined = await elsewhere.request(m.JoinRoom, room=room)
    assert (joined.room, joined.seat, joined.token) == (room, 0, None)
    await asyncio.wait_for(anna.closed.wait(), 5)
    assert anna.ws.close_code == 4001
    # ...and it plays from there.
    push = await elsewhere.wait_state()
    if push.view["turn"] == 1:
        await biel.act(EndTurn())
        await elsewhere.wait_state(lambda p: p.view["turn"] == 0)
    await elsewhere.act(EndTurn())
    # Someone else signed in (or a guest) joining the room gets no seat of it.
    await refused(await connect("Carme", new_key()), "already_started", m.JoinRoom, room=room)


async def test_a_private_room_s_id_finds_it_for_the_account_that_sits_there(connect):
    key = new_key()
    anna = await connect("Anna", key)
    made = await anna.request(m.CreateRoom, name="Privat", seats=2, private=True)
    await anna.request(m.AddBot)
    await anna.request(m.StartGame)
    await refused(await connect("Biel", new_key()), "room_not_found", m.JoinRoom,
                  room=made.room)
    joined = await (await connect("Anna", key)).request(m.JoinRoom, room=made.room)
    assert joined.seat == 0


async def test_my_games_lists_games_in_play_and_finished_across_a_restart(tmp_path):
    path = tmp_path / "castell.sqlite3"
    anna_key, biel_key = new_key(), new_key()
    async with serving(open_store(path)) as (_, url):
        anna, biel = GameClient.connect(url), GameClient.connect(url)
        anna, biel = await anna, await biel
        await anna.hello("Anna", anna_key)
        await biel.hello("Biel", biel_key)
        done = await started(anna, biel)
        await finish([anna, biel])
        await anna.request(m.LeaveRoom)
        await biel.request(m.LeaveRoom)
        playing = await started(anna, biel, turn_seconds=2 * 24 * 3600)
        turn = await end_turn([anna, biel])
        before = (await anna.request(m.MyGames)).entries
        await anna.close()
        await biel.close()

    async with serving(open_store(path)) as (_, url):
        anna = await GameClient.connect(url)
        await anna.hello("whoever", anna_key)
        entries = (await anna.request(m.MyGames)).entries
        assert entries == before
        assert [(e.room, e.status) for e in entries] == [(playing, "playing"),
                                                          (done, "finished")]
        now, over = entries
        assert (now.name, now.seat, now.turn, now.your_turn, now.round, now.players,
                now.turn_seconds) == ("Dissabte", 0, turn, turn == 0, 1, ("Anna", "Biel"),
                                      172800)
        assert (now.winners, now.scores, now.finished_at) == (None, None, None)
        assert over.turn is None and over.your_turn is False and over.round == 10
        assert over.winners and len(over.scores) == 2 and over.finished_at is not None
        # Filtered, and limited.
        assert [e.room for e in (await anna.request(m.MyGames, status="finished")).entries] \
            == [done]
        assert [e.room for e in (await anna.request(m.MyGames, status="playing")).entries] \
            == [playing]
        assert len((await anna.request(m.MyGames, limit=1)).entries) == 1
        # Biel's turn, from his side; and the finished game's record, to replay.
        biel = await GameClient.connect(url)
        await biel.hello("Biel", biel_key)
        mine = (await biel.request(m.MyGames, status="playing")).entries
        assert [(e.room, e.seat, e.your_turn) for e in mine] == [(playing, 1, turn == 1)]
        record = GameRecordFile.from_data((await biel.request(m.RecordRequest, room=done)).game)
        assert record.seats == ("Anna", "Biel")
        assert replay(record)[-1][0].over
        await refused(biel, "not_finished", m.RecordRequest, room=playing)
        await refused(biel, "room_not_found", m.RecordRequest, room="rnothing")
        # A guest has no games to list.
        guest = await GameClient.connect(url)
        await guest.hello("Carme")
        await refused(guest, "not_signed_in", m.MyGames)
        for client in (anna, biel, guest):
            await client.close()


async def test_a_rematch_invites_the_other_player_who_joins_it(connect):
    anna = await connect("Anna", new_key())
    biel = await connect("Biel", new_key())
    made = await anna.request(m.CreateRoom, name="Revenja", seats=3, turn_seconds=600)
    await biel.request(m.JoinRoom, room=made.room)
    await anna.request(m.AddBot, level="random")
    await anna.request(m.StartGame)
    for client in (anna, biel):
        await client.wait_state(lambda p: p.view["status"] == "playing")
    await refused(anna, "not_finished", m.Rematch)
    await play_legal([anna, biel, None], random.Random(2), end_bias=1.0, timeout=30)
    assert anna.state.view["status"] == "finished"

    again = await anna.request(m.Rematch)
    assert again.room != made.room and again.seat == 0
    invite = await next_of(biel, m.InvitePush)
    assert (invite.room, invite.from_, invite.name) == (again.room, "Anna", "Revenja")
    # Biel comes from the finished room to his old seat; the bot is back in its own.
    await biel.request(m.LeaveRoom)
    joined = await biel.request(m.JoinRoom, room=invite.room)
    assert joined.seat == 1
    view = (await anna.wait_state(lambda p: p.room == again.room
                                  and len(p.view["players"]) == 3)).view
    assert [(p["seat"], p["name"], p["bot"]) for p in view["players"]][:2] == \
        [(0, "Anna", False), (1, "Biel", False)]
    assert view["players"][2]["bot"] is True
    assert (view["turn_seconds"], view["seats"], view["status"]) == (600, 3, "waiting")
    await anna.request(m.StartGame)
    await biel.wait_state(lambda p: p.room == again.room and p.view["status"] == "playing")


async def test_a_rematch_s_offered_seat_is_not_a_stranger_s(connect):
    anna = await connect("Anna")
    biel = await connect("Biel")
    await started(anna, biel)
    await finish([anna, biel])
    again = await anna.request(m.Rematch)
    await refused(await connect("Carme"), "room_full", m.JoinRoom, room=again.room)
    # Biel asking for a rematch too joins the one Anna made.
    joined = await biel.request(m.Rematch)
    assert (joined.room, joined.seat) == (again.room, 1)


async def test_a_correspondence_turn_reaches_a_player_sitting_in_the_lobby(connect):
    biel_key = new_key()
    anna = await connect("Anna", new_key())
    biel = await connect("Biel", biel_key)
    room = await started(anna, biel, turn_seconds=2 * 24 * 3600)
    assert anna.state.view["turn_seconds"] == 172800
    if anna.state.view["turn"] == 1:
        await end_turn([anna, biel])
    await biel.request(m.LeaveRoom)  # the seat stays his: he waits in the lobby
    biel.drain()  # (told at the start, had the game begun with him)
    lobby = await connect("Biel", biel_key)  # and on another terminal, in the lobby too
    while anna.state.view["turn"] == 0:  # Anna's turns, until one ends into Biel's
        await caught_up(anna, await anna.act(EndTurn()))
    for client in (biel, lobby):
        push = await next_of(client, m.YourTurnPush)
        assert (push.room, push.name) == (room, "Dissabte")


async def test_your_turn_skips_the_connection_sitting_in_that_very_room(connect):
    """The seat's own connection sees the turn in the room's view: only the account's other
    connections (here one in the lobby) hear ``your_turn`` (docs/protocol.md)."""
    biel_key = new_key()
    anna = await connect("Anna", new_key())
    biel = await connect("Biel", biel_key)
    room = await started(anna, biel, turn_seconds=2 * 24 * 3600)
    lobby = await connect("Biel", biel_key)
    heard = 0
    while heard < 3:  # three of Biel's turns, each reached while he sits in the room
        version = await (anna, biel)[anna.state.view["turn"]].act(EndTurn())
        for client in (anna, biel):
            await caught_up(client, version)
        if anna.state.view["turn"] == 1:
            push = await next_of(lobby, m.YourTurnPush)
            assert push.room == room
            heard += 1
    # the push went to every connection at once: Biel's, had it been sent, is in by now
    await caught_up(biel, await biel.act(EndTurn()))
    assert [p for p in biel.drain() if isinstance(p, m.YourTurnPush)] == []


async def test_turn_timers_go_up_to_seven_days(connect):
    anna = await connect("Anna")
    week = await anna.request(m.CreateRoom, name="Setmana", seats=2, turn_seconds=7 * 86400)
    assert week.seat == 0
    await anna.request(m.LeaveRoom)
    error = await refused(anna, "invalid_field", m.CreateRoom, name="Massa", seats=2,
                          turn_seconds=7 * 86400 + 1)
    assert error.error.field == "turn_seconds"


async def next_of(client: GameClient, kind: type, timeout: float = 10.0) -> object:
    """The next push of ``kind`` (others are skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            push = await client.pushes.get()
            if isinstance(push, kind):
                return push
