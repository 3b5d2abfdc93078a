"""A room's history over real sockets: every event since the start with the chat, paged with
``before``/``limit``, and the same after a restart, a kill -9 and a cluster takeover
(server/core/history.py, docs/protocol.md ``history``).

What a client saw live is the reference: a spectator seated before the start records every
push (its queue is never read until the end), and the history must be exactly those events
by version, without the seats' comings and goings, with each chat line after the events of
the version it was said at.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from client.net.net import GameClient, ServerError, join_anywhere
from server.store import SQLiteStore
from shared import messages as m
from tests.support.servers import ServerProcess, run_out, serving, virtual_time
from tests.support.services import REDIS_URL, fresh_prefix, store_schema
from tests.support.wire import play_legal

PRESENCE = {"joined", "left", "connected", "disconnected"}


def expected_history(pushes: list[Any]) -> list[tuple[int, list[dict]]]:
    """The history a recorder's pushes say: by version, presence left out, chat appended."""
    entries: list[tuple[int, list[dict]]] = []
    version = 0
    started = False

    def at(v: int) -> list[dict]:
        if not entries or entries[-1][0] != v:
            entries.append((v, []))
        return entries[-1][1]

    for push in pushes:
        if isinstance(push, m.StatePush):
            version = push.version
            kept = [e for e in push.events if e["kind"] not in PRESENCE]
            started = started or any(e["kind"] == "started" for e in kept)
            if kept:
                at(version).extend(kept)
        elif isinstance(push, m.ChatPush):
            at(version).append({"kind": "chat", "seat": push.seat, "name": push.name,
                                "text": push.text})
    return entries


def as_pairs(reply: m.History) -> list[tuple[int, list[dict]]]:
    return [(e.version, list(e.events)) for e in reply.entries]


async def player(url: str, name: str) -> GameClient:
    client = await GameClient.connect(url)
    await client.hello(name)
    return client


async def seen(client: GameClient, predicate: Any, timeout: float = 30.0) -> None:
    """Wait until ``client``'s latest state satisfies ``predicate``, reading none of its
    pushes (a recorder's queue is kept whole); then until every push sent to it before has
    arrived (a chat line said since): a request's reply comes after them on the one
    connection."""
    async with asyncio.timeout(timeout):
        while client.state is None or not predicate(client.state):
            await asyncio.sleep(0.01)
    await client.request(m.HistoryRequest, limit=1)


async def history(client: GameClient, **fields: Any) -> list[tuple[int, list[dict]]]:
    return as_pairs(await client.request(m.HistoryRequest, **fields))


async def a_game(url: str, *, seats: int = 2, turn_seconds: int | None = None
                 ) -> tuple[str, list[GameClient], list[str], GameClient]:
    """Players Anna and Bru (and a recorder watching from before the start), started."""
    anna = await player(url, "Anna")
    made = await anna.request(m.CreateRoom, name="Crònica", seats=seats,
                              turn_seconds=turn_seconds)
    recorder = await player(url, "Rec")
    await recorder.request(m.JoinRoom, room=made.room, as_="spectator")
    bru = await player(url, "Bru")
    joined = await bru.request(m.JoinRoom, room=made.room)
    await anna.request(m.Chat, text="hola!")  # before the start: in the history too
    await anna.request(m.StartGame)
    for client in (anna, bru):
        await client.wait_state(lambda p: p.view["status"] == "playing")
    return made.room, [anna, bru], [made.token, joined.token], recorder


async def play_to_round(clients: list[GameClient], recorder: GameClient, round_: int,
                        rng: random.Random) -> None:
    """Play random legal turns until ``round_`` began, chatting now and then."""
    said = 0
    while clients[0].state.view["round"] < round_ and clients[0].state.view["status"] \
            == "playing":
        await play_legal(clients, rng, turns=1, end_bias=0.5)
        said += 1
        if said % 3 == 0:
            speaker = clients[said % 2] if said % 2 else recorder
            await speaker.request(m.Chat, text=f"línia {said}")


async def test_a_spectator_joining_at_round_6_gets_every_event_since_the_start(tmp_path):
    async with SQLiteStore(tmp_path / "g.sqlite3") as store, serving(store) as (_, url):
        room, clients, _, recorder = await a_game(url)
        await play_to_round(clients, recorder, 6, random.Random(3))
        version = clients[0].state.version
        late = await player(url, "Late")
        await late.request(m.JoinRoom, room=room, as_="spectator")
        await late.request(m.Chat, text="què m'he perdut?")
        await seen(recorder, lambda p: p.version >= version)
        expected = expected_history(recorder.drain())

        got = await history(late, limit=500)
        assert got == expected
        events = [e for _, evs in got for e in evs]
        assert next(e for e in events if e["kind"] != "chat") == {"kind": "started"}
        assert {"kind": "chat", "seat": 0, "name": "Anna", "text": "hola!"} in events
        assert events[-1] == \
            {"kind": "chat", "seat": None, "name": "Late", "text": "què m'he perdut?"}
        festivals = [e for e in events if e["kind"] == "festival"]
        assert festivals and all({"round", "region", "town", "size", "results"} <= set(f)
                                 for f in festivals)
        assert max(e["round"] for e in events if e["kind"] == "round") == 6
        # A player asks the same and gets the same; the default is the latest 200.
        assert await history(clients[1]) == expected[-200:]
        for client in (*clients, recorder, late):
            await client.close()


async def test_history_pages_back_with_before_and_limit(tmp_path):
    async with SQLiteStore(tmp_path / "g.sqlite3") as store, serving(store) as (_, url):
        _, clients, _, recorder = await a_game(url)
        await play_legal(clients, random.Random(8), actions=30, end_bias=0.2)
        await seen(recorder, lambda p: p.version >= clients[0].state.version)
        whole = await history(recorder, limit=500)
        assert whole == expected_history(recorder.drain())
        assert len(whole) > 12
        assert await history(recorder, limit=5) == whole[-5:]
        pages, before = [], None
        while True:
            page = await history(recorder, limit=5, **({"before": before} if before else {}))
            if not page:
                break
            assert len(page) <= 5 and all(v < (before or 2**62) for v, _ in page)
            pages[:0] = page
            before = page[0][0]
        assert pages == whole
        middle = whole[len(whole) // 2][0]
        assert await history(recorder, before=middle, limit=3) == \
            [entry for entry in whole if entry[0] < middle][-3:]
        assert await history(recorder, before=0) == []
        for bad in ({"limit": 0}, {"limit": 501}, {"before": -1}):
            with pytest.raises(ServerError) as refused:
                await recorder.request(m.HistoryRequest, **bad)
            assert refused.value.code == "invalid_field"
        for client in (*clients, recorder):
            await client.close()


async def test_history_outside_a_room_is_refused_not_in_room():
    async with serving() as (_, url):
        lone = await player(url, "Sola")
        with pytest.raises(ServerError) as refused:
            await lone.request(m.HistoryRequest)
        assert refused.value.code == "not_in_room"
        made = await lone.request(m.CreateRoom, name="Buida", seats=2)
        assert made.room and await history(lone) == []  # seated, nothing started yet
        await lone.request(m.LeaveRoom)
        with pytest.raises(ServerError) as refused:
            await lone.request(m.HistoryRequest)
        assert refused.value.code == "not_in_room"
        await lone.close()


async def test_timed_out_turns_keep_their_timeout_and_a_restart_keeps_the_history(tmp_path):
    db = tmp_path / "g.sqlite3"
    async with SQLiteStore(db) as store, serving(store) as (server, url):
        clock = virtual_time(server)  # each turn's 10 s pass when the test says
        room, clients, tokens, recorder = await a_game(url, turn_seconds=10)
        await recorder.request(m.Chat, text="el rellotge mana")
        async with asyncio.timeout(60):  # nobody plays: every turn runs out
            while (now := clients[0].state).view["status"] != "finished":
                await run_out(clock)
                await clients[0].wait_state(lambda p, v=now.version: p.version > v)
        await seen(recorder, lambda p: p.view["status"] == "finished")
        expected = expected_history(recorder.drain())
        before = await history(recorder, limit=500)
        assert before == expected
        timeouts = [e for _, evs in before for e in evs if e["kind"] == "timeout"]
        assert timeouts
        for _, events in before:  # each is the start of its version's events
            if any(e["kind"] == "timeout" for e in events):
                assert events[0]["kind"] == "timeout"
                assert events[1] == {"kind": "action", "seat": events[0]["seat"],
                                     "action": {"kind": "end_turn"}}
        assert before[-1][1][-1]["kind"] == "game_over"
        for client in (*clients, recorder):
            await client.close()

    async with SQLiteStore(db) as store, serving(store) as (_, url):
        anna = await player(url, "Anna")
        await anna.request(m.JoinRoom, room=room, token=tokens[0])
        assert await history(anna, limit=500) == before
        await anna.close()


async def test_history_survives_kill_9_and_a_restart(tmp_path):
    db = str(tmp_path / "games.sqlite3")
    args = ("--db", db, "--bot-delay", "0", "--rate", "1000")
    with ServerProcess(*args) as first:
        room, clients, tokens, recorder = await a_game(first.url)
        await play_to_round(clients, recorder, 3, random.Random(5))
        await clients[1].request(m.Chat, text="abans del tall")  # acknowledged: stored
        before = await history(clients[0], limit=500)
        assert before[-1][1][-1] == {"kind": "chat", "seat": 1, "name": "Bru",
                                     "text": "abans del tall"}
        first.kill()
        for client in (*clients, recorder):
            await asyncio.wait_for(client.closed.wait(), 10)

    # started again on the file the killed process left (in this process: quicker to start)
    async with SQLiteStore(db) as store, serving(store) as (_, url):
        bru = await player(url, "Bru")
        await bru.request(m.JoinRoom, room=room, token=tokens[1])
        assert await history(bru, limit=500) == before
        watcher = await player(url, "Nou")
        await watcher.request(m.JoinRoom, room=room, as_="spectator")
        assert await history(watcher, limit=500) == before
        await bru.close()
        await watcher.close()


@pytest.mark.timeout(60)
async def test_history_after_a_cluster_takeover_is_the_same():
    async with store_schema() as db, fresh_prefix() as prefix:
        args = ("--db", db, "--redis", REDIS_URL, "--redis-prefix", prefix, "--lease-ms",
                "1500", "--bot-delay", "0", "--log-level", "warning")
        a, b = await asyncio.gather(*(asyncio.to_thread(ServerProcess, *args)
                                      for _ in range(2)))
        with a, b:
            anna = await player(a.url, "Anna")
            made = await anna.request(m.CreateRoom, name="Relleu", seats=2)
            biel = await join_anywhere([b.url], "Biel", made.room)
            await anna.request(m.Chat, text="comencem")
            await anna.request(m.StartGame)
            clients = [anna, biel.client]
            for client in clients:
                await client.wait_state(lambda p: p.view["status"] == "playing")
            await play_legal(clients, random.Random(4), turns=6, end_bias=0.5, timeout=20)
            await biel.client.request(m.Chat, text="fins ara")
            before = await history(anna, limit=500)
            assert before[0][1][0] == {"kind": "chat", "seat": 0, "name": "Anna",
                                       "text": "comencem"}
            assert before[-1][1][-1]["text"] == "fins ara"

            a.kill()
            for client in clients:
                await asyncio.wait_for(client.closed.wait(), 5)
            back = await join_anywhere([a.url, b.url], "Anna", made.room, token=made.token,
                                       timeout=20)
            assert back.url == b.url
            assert await history(back.client, limit=500) == before
            await back.client.close()


def test_a_reply_holds_the_latest_entries_that_fit_in_one_frame():
    from server.core.history import Entry, History
    from server.edge.handlers_room import history_reply
    from shared.codec import MAX_FRAME, decode_server, encode

    kept = History()
    for version in range(1, 501):
        for n in range(3):
            kept.add_chat(version, None, "Pau", f"{version}-{n} " + "x" * 190)
    entries = kept.page(None, 500)
    reply = history_reply(7, entries)
    data = encode(reply)
    assert MAX_FRAME - 2000 < len(data) <= MAX_FRAME
    assert decode_server(data) == reply
    got = [e.version for e in reply.entries]
    assert got == list(range(501 - len(got), 501))  # the latest, oldest first
    small = [Entry(1, [{"kind": "started"}])]
    assert history_reply(8, small) == m.History(8, [m.HistoryEntry(1, [{"kind": "started"}])])


async def test_undos_are_in_the_history_as_they_were_pushed_and_after_a_restart(tmp_path):
    from shared.actions import EndTurn, Undo
    from shared.engine import legal_actions
    from shared.view import state_from_view

    path = tmp_path / "g.sqlite3"
    async with SQLiteStore(path) as store, serving(store) as (_, url):
        room, clients, tokens, recorder = await a_game(url)
        undone = 0
        for _ in range(6):  # each turn: a first action, taken back, then the turn ended
            view = clients[0].state.view
            seat = view["turn"]
            actor = clients[seat]
            state = state_from_view(clients[0].state.view)
            first = next((a for a in legal_actions(state, seat)
                          if not isinstance(a, EndTurn)), None)
            if first is not None:
                await actor.act(first)
                await actor.act(Undo())
                undone += 1
            await actor.act(EndTurn())
            v = actor.state.version
            for client in clients:
                await client.wait_state(lambda p, v=v: p.version >= v)
        await seen(recorder, lambda p: p.version >= clients[0].state.version)
        expected = expected_history(recorder.drain())
        live = await history(clients[0], limit=500)
        assert live == expected
        assert sum(e["kind"] == "undone" for _, evs in live for e in evs) == undone > 0
        for client in (*clients, recorder):
            await client.close()
    # a server started afresh on the file derives the very same history from the store
    async with SQLiteStore(path) as store, serving(store) as (_, url):
        anna = await player(url, "Anna")
        await anna.request(m.JoinRoom, room=room, token=tokens[0])
        assert await history(anna, limit=500) == live
        await anna.close()
