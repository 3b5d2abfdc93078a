"""A write whose answer was lost: the database committed, the server never heard so.

The fault is real: the server reaches PostgreSQL through a TCP proxy that swallows the answer
to one ``COMMIT`` and cuts that connection (tests/support/proxy.py). The room must read back
what was stored and go on from there: the player's action stands (it was stored), the player
learns so (``ok`` with its version, and the push), and the room's next actions are accepted —
not refused as duplicates until a restart.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import pytest

from client.net.net import GameClient, ServerError
from server.store.postgres import PostgresStore
from shared import messages as m
from shared.actions import EndTurn
from tests.support.proxy import cutting_proxy, through
from tests.support.servers import serving
from tests.support.services import POSTGRES_URL, store_schema


async def start_two(url: str) -> tuple[dict[int, GameClient], str, m.StatePush]:
    anna = await GameClient.connect(url)
    biel = await GameClient.connect(url)
    await anna.hello("Anna")
    await biel.hello("Biel")
    joined = await anna.request(m.CreateRoom, name="Lost", seats=2)
    await biel.request(m.JoinRoom, room=joined.room)
    await anna.request(m.StartGame)
    push = await anna.wait_state(lambda p: p.view["turn"] is not None)
    return {0: anna, 1: biel}, joined.room, push


async def test_when_even_reading_back_fails_the_room_learns_the_truth_before_going_on(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    target = urlsplit(POSTGRES_URL)
    async with store_schema() as db, cutting_proxy(target.hostname or "127.0.0.1",
                                                   target.port or 5432) as proxy:
        store = PostgresStore(through(db, proxy.port), pool_size=2)
        async with serving(store) as (_server, url):
            players, _room, push = await start_two(url)
            try:
                seat = push.view["turn"]
                actor, other = players[seat], players[1 - seat]
                version = push.version
                proxy.cut_after_commit(blackout=True)
                # stored, but nobody can tell: the server says it failed...
                with pytest.raises(ServerError) as failed:
                    await actor.act(EndTurn())
                assert failed.value.code == "internal_error"
                # ...and refuses to go on while it cannot learn the truth
                with pytest.raises(ServerError):
                    await actor.act(EndTurn())
                assert actor.state.version == version
                proxy.end_blackout()
                # the database is back: the room reads what it holds and shows it to all
                # (the action stood: it is the other seat's turn now), then goes on
                with pytest.raises(ServerError) as late:
                    await actor.act(EndTurn())
                assert late.value.code == "not_your_turn"
                for client in players.values():
                    await client.wait_state(lambda p: p.view["turn"] == 1 - seat)
                assert any("reloaded from the store" in r.getMessage()
                           for r in caplog.records)
                before = other.state.version
                assert await other.act(EndTurn()) == before + 1
            finally:
                for client in players.values():
                    await client.close()


async def test_an_action_whose_commit_answer_was_lost_stands_and_the_room_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    target = urlsplit(POSTGRES_URL)
    async with store_schema() as db, cutting_proxy(target.hostname or "127.0.0.1",
                                                   target.port or 5432) as proxy:
        store = PostgresStore(through(db, proxy.port), pool_size=2)
        async with serving(store) as (_server, url):
            anna = await GameClient.connect(url)
            biel = await GameClient.connect(url)
            try:
                await anna.hello("Anna")
                await biel.hello("Biel")
                joined = await anna.request(m.CreateRoom, name="Lost", seats=2)
                await biel.request(m.JoinRoom, room=joined.room)
                await anna.request(m.StartGame)
                push = await anna.wait_state(lambda p: p.view["turn"] is not None)
                players = {0: anna, 1: biel}
                actor = players[push.view["turn"]]
                version = push.version

                proxy.cut_after_commit()
                stored = await actor.act(EndTurn())  # its COMMIT's answer never arrives
                assert proxy.cuts == 1
                # the truth: the action was stored, so it stands, and everyone sees it
                assert stored == version + 1
                for client in (anna, biel):
                    await client.wait_state(lambda p, v=stored: p.version == v)
                assert any("answer to version" in r.getMessage() for r in caplog.records)
                # the room goes on: the next actions are not refused as duplicates
                for _ in range(3):
                    turn = anna.state.view["turn"]
                    before = anna.state.version
                    assert await players[turn].act(EndTurn()) == before + 1
                    await anna.wait_state(lambda p, v=before + 1: p.version >= v)
                last = anna.state.version
            finally:
                await anna.close()
                await biel.close()
        # and the database holds every one of them, in order
        async with PostgresStore(db, pool_size=1) as check:
            record = await check.load(joined.room)
        assert record is not None
        assert [a.seq for a in record.actions] == list(range(4))
        assert record.actions[-1].version == last


async def test_a_database_out_of_reach_is_internal_error_without_its_address(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    target = urlsplit(POSTGRES_URL)
    async with store_schema() as db, cutting_proxy(target.hostname or "127.0.0.1",
                                                   target.port or 5432) as proxy:
        store = PostgresStore(through(db, proxy.port), pool_size=2)
        async with serving(store) as (_server, url):
            anna = await GameClient.connect(url)
            biel = await GameClient.connect(url)
            try:
                await anna.hello("Anna")
                await biel.hello("Biel")
                joined = await anna.request(m.CreateRoom, name="Dark", seats=2)
                proxy.blackout()
                with pytest.raises(ServerError) as refused:
                    await biel.request(m.JoinRoom, room=joined.room)
                said = refused.value.message
                assert refused.value.code == "internal_error"
                assert "postgres" not in said and "127.0.0.1" not in said
                assert str(proxy.port) not in said and "test" not in said
                # the host's log has the cause, for this very request
                assert any(r.levelno >= logging.ERROR and "store refused" in r.getMessage()
                           for r in caplog.records)
                proxy.end_blackout()
                seated = await biel.request(m.JoinRoom, room=joined.room)
                assert seated.seat == 1
            finally:
                await anna.close()
                await biel.close()
