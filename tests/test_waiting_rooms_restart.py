"""A room still waiting for players survives a restart of its server, after a crash (kill -9)
as after a stop (SIGTERM): its seats and their tokens are kept, and its version only ever goes
forward, so that its players' clients never see a version they have seen already."""

from __future__ import annotations

import asyncio

import pytest

from client.net.net import GameClient
from shared import messages as m
from tests.support.servers import ServerProcess


async def _waiting_room(url: str) -> tuple[str, list[GameClient], list[str]]:
    a = await GameClient.connect(url)
    await a.hello("Anna")
    joined_a = await a.request(m.CreateRoom, name="Waiting", seats=3)
    b = await GameClient.connect(url)
    await b.hello("Bru")
    joined_b = await b.request(m.JoinRoom, room=joined_a.room)
    for c in (a, b):
        await c.wait_state(lambda p: len(p.view["players"]) == 2)
    return joined_a.room, [a, b], [joined_a.token, joined_b.token]


@pytest.mark.parametrize("stop", ["kill -9", "SIGTERM"])
async def test_a_waiting_room_comes_back_with_its_seats_at_a_later_version(tmp_path, stop):
    db = str(tmp_path / "games.sqlite3")
    with ServerProcess("--db", db, "--bot-delay", "0") as first:
        room, clients, tokens = await _waiting_room(first.url)
        seen = max(c.state.version for c in clients)
        if stop == "kill -9":
            first.kill()
        else:
            # (off the loop: the clients must answer the server's closing handshake)
            assert await asyncio.to_thread(first.terminate) == 0
        for c in clients:
            await c.closed.wait()

    with ServerProcess("--db", db, "--bot-delay", "0") as second:
        back = []
        for name, token in zip(("Anna", "Bru"), tokens, strict=True):
            c = await GameClient.connect(second.url)
            await c.hello(name)
            joined = await c.request(m.JoinRoom, room=room, token=token)
            assert joined.room == room
            back.append(c)
            state = await c.wait_state()
            assert state.version > seen, "a version its players saw already"
            seen = state.version
        view = back[0].state.view
        assert view["status"] == "waiting"
        assert [p["name"] for p in view["players"]] == ["Anna", "Bru"]
        # and the room goes on: a third player fills it, the creator starts the game
        carme = await GameClient.connect(second.url)
        await carme.hello("Carme")
        await carme.request(m.JoinRoom, room=room)
        await back[0].wait_state(lambda p: len(p.view["players"]) == 3)
        await back[0].request(m.StartGame)
        await carme.wait_state(lambda p: p.view["status"] == "playing")
        for c in (*back, carme):
            await c.close()
