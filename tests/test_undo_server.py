"""Undo over the wire: acknowledged like any action, pushed with the ``undone`` event, refused
with the documented codes, and kept with the game across a server killed with kill -9."""

from __future__ import annotations

import asyncio

import attrs
import msgpack
import pytest

from client.net.net import GameClient, ServerError
from server.core.room import AppendAction, ArmTimer, Push, Room, Send
from server.store import open_store
from shared import messages as m
from shared.actions import Build, EndTurn, Move, Recruit, Undo, action_fields
from shared.codec import pack_action
from shared.errors import RuleError
from shared.record import GameRecordFile, replay
from shared.view import state_from_view
from tests.support.servers import ServerProcess, run_server_cli, serving
from tests.support.wire import caught_up


async def _two_players(url: str) -> tuple[str, list[GameClient], list[str]]:
    a = await GameClient.connect(url)
    await a.hello("Anna")
    joined_a = await a.request(m.CreateRoom, name="Undo", seats=2)
    b = await GameClient.connect(url)
    await b.hello("Bru")
    joined_b = await b.request(m.JoinRoom, room=joined_a.room)
    await a.request(m.StartGame)
    for c in (a, b):
        await c.wait_state(lambda p: p.view["status"] == "playing")
    return joined_a.room, [a, b], [joined_a.token, joined_b.token]


async def _at(clients: list[GameClient], version: int) -> list[m.StatePush]:
    """Each client's push of ``version``."""
    return [await c.wait_state(lambda p, v=version: p.version == v) for c in clients]


NOW = 1_000_000.0


def test_the_room_stores_an_undo_like_any_action_and_keeps_the_turn_s_timer():
    room: Room[str] = Room("r1", "Table", 2, "normal", 60, False, seed=7, now=NOW)
    for i in range(2):
        room.commit(room.take_seat(f"p{i}", f"P{i}", i + 1, now=NOW), now=NOW)
    effects = room.commit(room.start("p0", 9, now=NOW), now=NOW)
    [timer] = [e for e in effects if isinstance(e, ArmTimer)]
    state = room.state
    assert state is not None and state.turn is not None
    actor = f"p{state.turn}"
    room.commit(room.act(actor, Move("gir"), 10, now=NOW + 5), now=NOW + 5)
    change = room.act(actor, Undo(), 11, now=NOW + 10)
    [write] = change.writes
    assert isinstance(write, AppendAction) and write.record.action == pack_action(Undo())
    effects = room.commit(change, now=NOW + 10)
    assert room.state == state and room.log[-1] == (state.turn, Undo())
    # the same turn: no fresh timer, the deadline stays where it was
    assert not any(isinstance(e, ArmTimer) for e in effects) and room.deadline == NOW + 60
    sent = [msgpack.unpackb(e.data) for e in effects if isinstance(e, Send | Push)
            and actor in e.to]
    [push] = [message for message in sent if message["type"] == "state"]
    assert push["events"] == [{"kind": "undone", "seat": state.turn,
                               "action": {"kind": "move", "region": "gir"}}]
    # the timer ends the turn as always, and what it ended cannot be undone
    fired = room.timer_fired(timer.key, now=NOW + 60)
    assert fired is not None
    room.commit(fired, now=NOW + 60)
    with pytest.raises(RuleError) as refused:
        room.act(f"p{1 - state.turn}", Undo(), 12, now=NOW + 61)
    assert refused.value.code == "nothing_to_undo"


async def test_an_undo_is_acknowledged_and_pushed_with_the_undone_event():
    async with serving() as (_, url):
        _, clients, _ = await _two_players(url)
        view = clients[0].state.view
        seat = view["turn"]
        actor, other = clients[seat], clients[1 - seat]
        before = actor.state
        move = Move("gir")
        moved = await actor.act(move)
        await _at(clients, moved)

        undone = await actor.act(Undo())
        assert undone == moved + 1
        for push in await _at(clients, undone):
            assert push.events == ({"kind": "undone", "seat": seat,
                                    "action": action_fields(move)},)
            assert push.view == before.view  # exactly the game before the move

        with pytest.raises(ServerError) as nothing:
            await actor.act(Undo())
        assert (nothing.value.code, nothing.value.rule) == ("illegal_action", "nothing_to_undo")
        with pytest.raises(ServerError) as not_yours:
            await other.act(Undo())
        assert not_yours.value.code == "not_your_turn"

        # an ended turn cannot be taken back, by the next seat or the one that ended it
        await actor.act(Move("gir"))
        ended = await actor.act(EndTurn())
        await _at(clients, ended)
        with pytest.raises(ServerError) as after_end:
            await other.act(Undo())
        assert after_end.value.rule == "nothing_to_undo"
        with pytest.raises(ServerError) as not_any_more:
            await actor.act(Undo())
        assert not_any_more.value.code == "not_your_turn"
        assert clients[0].state.version == ended  # refusals changed nothing
        for c in clients:
            await c.close()


async def test_an_acknowledged_undo_survives_kill_9(tmp_path):
    db = str(tmp_path / "games.sqlite3")
    args = ("--db", db, "--bot-delay", "0", "--rate", "1000")
    with ServerProcess(*args) as first:
        room, clients, tokens = await _two_players(first.url)
        seat = clients[0].state.view["turn"]
        actor = clients[seat]
        moved = await actor.act(Move("bcn"))
        await _at(clients, moved)
        castellers = actor.state.view["regions"]["bcn"]["castellers"]
        recruited = await actor.act(Recruit((castellers[0],)))
        await _at(clients, recruited)
        after_recruit = actor.state
        built = await actor.act(Build(((castellers[0],),)))
        undone = await actor.act(Undo())  # acknowledged: stored before the ok
        first.kill()
        for c in clients:
            await asyncio.wait_for(c.closed.wait(), 10)
    assert undone == built + 1

    # started again on the file the killed process left (in this process: quicker to start)
    async with serving(open_store(db)) as (_, url):
        back = []
        for name, token in zip(("Anna", "Bru"), tokens, strict=True):
            c = await GameClient.connect(url)
            await c.hello(name)
            await c.request(m.JoinRoom, room=room, token=token)
            back.append(c)
        now = await back[0].wait_state(lambda p: all(pl["connected"]
                                                      for pl in p.view["players"]))
        # the game is where the undo left it: recruited, no tower
        assert now.view["players"][seat]["tower"] == []
        assert state_from_view(now.view) == state_from_view(after_recruit.view)
        # and the turn's steps came back with it: the recruit can still be taken back,
        # then the move, then nothing
        actor = back[seat]
        await caught_up(actor, now.version)
        await actor.act(Undo())
        await actor.act(Undo())
        with pytest.raises(ServerError) as nothing:
            await actor.act(Undo())
        assert nothing.value.rule == "nothing_to_undo"
        last = await back[0].wait_state(lambda p: p.view["players"][seat]["region"] is None)
        assert last.version == now.version + 2
        for c in back:
            await c.close()

    # the export holds the undos, and its replay ends where the game is
    out = tmp_path / "record.json"
    done = await asyncio.to_thread(run_server_cli, "export", room, "--db", db, "-o", str(out),
                                   "--unfinished")
    assert done.returncode == 0, done.stderr
    record = GameRecordFile.from_json(out.read_text())
    assert [a.action for a in record.actions].count(Undo()) == 3
    final, _ = replay(record)[-1]
    seen = state_from_view(last.view)
    assert seen == attrs.evolve(final, bag=seen.bag)  # a view shows the bag as a count
