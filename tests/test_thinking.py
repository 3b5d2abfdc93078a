"""Bots think in worker processes (server/runtime/thinking.py): a real server in this process with a
real pool, and real faults — a worker stopped (SIGSTOP) past its budget, a worker killed
(SIGKILL) mid-decision, a room let go of while its bot thinks, the server stopping — and,
with the server as a subprocess, a restart and a cluster takeover mid-game with ``hard``
bots. In every case the game goes on: the ``normal`` choice plays when no answer comes, and
no worker outlives what it served."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import signal
import time
from collections.abc import AsyncIterator

import pytest

from client.net.net import GameClient, join_anywhere
from server.app import CastellServer
from shared import messages as m
from shared.actions import EndTurn
from tests.support.servers import ServerProcess, serving
from tests.support.services import REDIS_URL, fresh_prefix, store_schema
from tests.support.wire import play_legal

pytestmark = pytest.mark.timeout(90)


def _alive(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")


async def _gone(pid: int, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while _alive(pid):
            await asyncio.sleep(0.05)


async def _until(predicate, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


async def _game_with_a_bot(url: str, level: str = "hard") -> GameClient:
    """Anna and a bot of ``level`` in a started 2-seat game."""
    return (await _game_and_seat(url, level))[0]


async def _game_and_seat(url: str, level: str = "hard") -> tuple[GameClient, m.Joined]:
    """Anna and a bot in a started 2-seat game, and where Anna sits (room, token)."""
    anna = await GameClient.connect(url)
    await anna.hello("Anna")
    made = await anna.request(m.CreateRoom, name="Thinking", seats=2)
    await anna.request(m.AddBot, level=level)
    await anna.request(m.StartGame)
    await anna.wait_state(lambda p: p.view["status"] == "playing")
    return anna, made


def _bot_moved(anna: GameClient, version: int) -> bool:
    assert anna.state is not None
    return anna.state.version > version


async def _to_annas_turn(anna: GameClient) -> None:
    def hers(push: m.StatePush) -> bool:
        return push.view["turn"] == 0 or push.view["status"] != "playing"

    assert anna.state is not None
    if not hers(anna.state):
        await anna.wait_state(hers, 30)


async def _end_turns_until_the_bot_is_to_play(anna: GameClient) -> int:
    """Anna ends her turns until the bot's turn comes (she may play last in a round and
    first in the next); the version at which it came."""
    assert anna.state is not None
    while anna.state.view["turn"] == 0:
        await play_legal([anna, None], random.Random(0), turns=1, end_bias=1.0)
    return anna.state.version


async def _a_worker_at_annas_turn(server: CastellServer, anna: GameClient) -> int:
    """The pool's one worker, started (by a bot's first decision), at Anna's turn."""
    await _to_annas_turn(anna)
    if not server.thinkers.processes:  # Anna played first: the bot has not thought yet
        await _end_turns_until_the_bot_is_to_play(anna)
        await _to_annas_turn(anna)
    (worker,) = server.thinkers.processes
    return worker


@pytest.fixture
async def pooled() -> AsyncIterator[tuple[CastellServer, str]]:
    async with serving(bot_workers=1, bot_think=0.05) as (server, url):
        yield server, url


async def test_a_hard_bot_thinks_in_a_worker_process_and_the_game_ends(pooled):
    server, url = pooled
    anna = await _game_with_a_bot(url)
    await play_legal([anna, None], random.Random(3), end_bias=1.0, timeout=30)
    assert anna.state is not None and anna.state.view["status"] == "finished"
    workers = server.thinkers.processes
    assert len(workers) == 1 and workers[0] != os.getpid() and _alive(workers[0])
    await anna.close()


async def test_a_worker_stopped_past_its_budget_is_replaced_and_the_normal_choice_plays(
        pooled, caplog):
    server, url = pooled
    grace, server.thinkers.grace = server.thinkers.grace, 0.3  # its budget: 0.35 s
    anna = await _game_with_a_bot(url)
    stuck = await _a_worker_at_annas_turn(server, anna)
    os.kill(stuck, signal.SIGSTOP)
    try:
        with caplog.at_level(logging.WARNING, logger="castell"):
            version = await _end_turns_until_the_bot_is_to_play(anna)
            await anna.wait_state(lambda p: p.version > version, 20)  # the bot played
            await _gone(stuck)  # killed and reaped
        assert "its worker is replaced and the normal choice is played" in caplog.text
        # the game goes on, in a new worker (a few turns of it: the whole game of a hard
        # bot is the first test's), with the budget of every day again: on a loaded machine
        # a hard bot's honest decision can take longer than 0.35 s, and each would replace
        # its worker again
        server.thinkers.grace = grace
        await play_legal([anna, None], random.Random(3), turns=3, end_bias=1.0, timeout=30)
        assert server.thinkers.processes and stuck not in server.thinkers.processes
    finally:
        if _alive(stuck):
            os.kill(stuck, signal.SIGKILL)
    await anna.close()


async def test_a_worker_killed_mid_decision_fails_that_decision_at_once(pooled, caplog):
    server, url = pooled
    anna = await _game_with_a_bot(url)
    worker = await _a_worker_at_annas_turn(server, anna)
    os.kill(worker, signal.SIGSTOP)  # so that the decision is surely under way when it dies
    with caplog.at_level(logging.WARNING, logger="castell"):
        version = await _end_turns_until_the_bot_is_to_play(anna)
        await _until(lambda: server.thinkers.busy)
        os.kill(worker, signal.SIGKILL)
        await anna.wait_state(lambda p: p.version > version, 20)
    assert "had no answer (the worker died)" in caplog.text
    assert "took over" not in caplog.text  # not the timeout: the death itself was seen
    await _gone(worker)
    await play_legal([anna, None], random.Random(3), turns=3, end_bias=1.0, timeout=30)
    assert server.thinkers.processes and worker not in server.thinkers.processes
    await anna.close()


async def test_a_room_let_go_of_stops_its_bot_s_thinking(pooled):
    server, url = pooled
    anna = await _game_with_a_bot(url)
    worker = await _a_worker_at_annas_turn(server, anna)
    os.kill(worker, signal.SIGSTOP)
    try:
        await _end_turns_until_the_bot_is_to_play(anna)
        await _until(lambda: server.thinkers.busy)
        (runner,) = server.lobby.rooms.values()
        runner.close()  # as when the room is unloaded, evicted or taken over elsewhere
        await _gone(worker)
        assert not server.thinkers.busy
    finally:
        if _alive(worker):
            os.kill(worker, signal.SIGKILL)
    await anna.close()


async def test_no_worker_outlives_the_server():
    async with serving(bot_workers=2, bot_think=0.05) as (server, url):
        clients = [await _game_with_a_bot(url) for _ in range(2)]
        await asyncio.gather(*(play_legal([c, None], random.Random(i), turns=3, end_bias=1.0,
                                          timeout=30) for i, c in enumerate(clients)))
        workers = server.thinkers.processes
        assert 1 <= len(workers) <= 2
        for client in clients:
            await client.close()
    for pid in workers:
        assert not _alive(pid), "a bot worker outlived its server"


def _children(pid: int) -> set[int]:
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.add(int(entry))
    return out


async def test_hard_bots_play_on_after_a_server_is_killed_and_started_again(tmp_path):
    db = str(tmp_path / "castell.sqlite3")
    args = ("--db", db, "--bot-delay", "0", "--bot-workers", "1", "--bot-think", "0.05",
            "--log-level", "warning")
    with ServerProcess(*args) as first:
        anna, made = await _game_and_seat(first.url)
        await play_legal([anna, None], random.Random(1), turns=3, end_bias=1.0, timeout=30)
        workers = _children(first.proc.pid)
        assert workers, "the bot thought in a worker process"
        first.kill()  # SIGKILL: no cleanup at all
    await anna.close()
    for pid in workers:  # the worker sees its pipe close and ends by itself
        await _gone(pid)
    with ServerProcess(*args) as second:
        back = await GameClient.connect(second.url)
        await back.hello("Anna")
        await back.request(m.JoinRoom, room=made.room, token=made.token)
        await back.wait_state(lambda p: p.view["status"] == "playing")
        await play_legal([back, None], random.Random(2), turns=3, end_bias=1.0, timeout=30)
        assert _children(second.proc.pid), "the bot thought in a worker of the new server"
        await back.close()


async def test_hard_bots_play_on_at_another_node_after_a_takeover():
    async with store_schema() as db, fresh_prefix() as prefix:
        args = ("--db", db, "--redis", REDIS_URL, "--redis-prefix", prefix, "--lease-ms",
                "1500", "--bot-delay", "0", "--bot-workers", "1", "--bot-think", "0.05",
                "--log-level", "warning")
        a, b = await asyncio.gather(asyncio.to_thread(ServerProcess, *args),
                                    asyncio.to_thread(ServerProcess, *args))
        with a, b:
            anna, made = await _game_and_seat(a.url)
            await play_legal([anna, None], random.Random(1), turns=2, end_bias=1.0, timeout=30)
            a.kill()
            await anna.close()
            back = await join_anywhere([a.url, b.url], "Anna", made.room, token=made.token,
                                       timeout=20)
            assert back.url == b.url
            client = back.client
            if client.state is None:
                await client.wait_state()
            await play_legal([client, None], random.Random(2), turns=3, end_bias=1.0,
                             timeout=30)
            assert _children(b.proc.pid), "the bot thought in a worker process of node b"
            await client.close()


# -- a fair share: one address's many rooms of hard bots, another address's one ----------------

#: The rooms of hard bots one address opens, and how long each decision may think (seconds).
HOG_ROOMS = 20
HOG_THINK = 0.1


async def _bot_waits(client: GameClient, seat: int, waits: list[float], *,
                     measured: asyncio.Event | None = None, wanted: int = 1_000_000) -> None:
    """At each of ``seat``'s turns, end it at once, and time from the ``ok`` to the next
    bot's first action (its decision's wait for a worker and its thought): into ``waits``,
    until ``wanted`` of them (``measured`` set then) or the game's end."""
    while len(waits) < wanted:
        client.drain()  # the pushes read so far: client.state is the latest
        assert client.state is not None
        if client.state.view["status"] != "playing":
            return
        if client.state.view["turn"] != seat:
            await client.wait_state(lambda p, v=client.state.version: p.version > v, 120)
            continue
        version = await client.act(EndTurn())
        asked = time.monotonic()
        after = await client.wait_state(lambda p, v=version: p.version >= v, 120)
        if after.view["turn"] == seat or after.view["status"] != "playing":
            continue  # the seat plays again (first in the next round): no bot to time
        await client.wait_state(lambda p, v=version: p.version > v, 120)
        waits.append(time.monotonic() - asked)
        if measured is not None and len(waits) >= 5:
            measured.set()


async def _room_of_hard_bots(url: str, bots: int, **connect: object) -> GameClient:
    client = await GameClient.connect(url, **connect)
    await client.hello("Hog" if bots > 1 else "Honest")
    await client.request(m.CreateRoom, name="Bots", seats=bots + 1)
    for _ in range(bots):
        await client.request(m.AddBot, level="hard")
    await client.request(m.StartGame)
    await client.wait_state(lambda p: p.view["status"] == "playing")
    return client


async def test_another_address_s_hard_bot_waits_for_a_worker_not_for_every_room_of_a_hog():
    """One address (127.0.0.1) opens 20 rooms of three hard bots; another (127.0.0.2) one
    room with one. On one worker, in the order asked (first in, first out), the honest
    room's bot waited behind all 20 rooms, as long as the hog's bots; in a fair share it
    waits for the worker to come free, a fraction of the hog's wait."""
    async with serving(bot_workers=1, bot_think=HOG_THINK) as (server, url):
        hogs = await asyncio.gather(*(_room_of_hard_bots(url, 3) for _ in range(HOG_ROOMS)))
        hog_waits: list[float] = []
        measured = asyncio.Event()
        playing = [asyncio.create_task(_bot_waits(c, 0, hog_waits, measured=measured))
                   for c in hogs]
        try:
            await _until(lambda: server.thinkers.busy, 30)  # the worker has started
            honest = await _room_of_hard_bots(url, 1, local_addr=("127.0.0.2", 0))
            honest_waits: list[float] = []
            await _bot_waits(honest, 0, honest_waits, wanted=3)
            await asyncio.wait_for(measured.wait(), 60)
            hog = sorted(hog_waits)[len(hog_waits) // 2]
            assert len(honest_waits) == 3
            # (first in, first out, the two were alike: 20.7 s against 13.3 s measured)
            assert max(honest_waits) * 2 < hog, (honest_waits, hog_waits)
            scraped = await http_get(url, "/metrics")
            assert 'castell_bot_wait_seconds_count{level="hard"}' in scraped
            await honest.close()
        finally:
            for task in playing:
                task.cancel()
            await asyncio.gather(*playing, return_exceptions=True)
            for client in hogs:
                await client.close()


async def http_get(url: str, path: str) -> str:
    """A plain HTTP GET of ``path`` on the server at ``url`` (ws://HOST:PORT): its body."""
    host, port = url.removeprefix("ws://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    data = await reader.read()
    writer.close()
    return data.decode().partition("\r\n\r\n")[2]


async def test_a_review_takes_the_worker_one_turn_at_a_time_between_other_rooms_bots():
    """A game's review is computed in the bot workers one turn per job (server.features.
    reviews): on one worker, a hard bot of another address asked for while a review is
    under way thinks after the review's current turn, not after the whole game."""
    from shared.engine import new_game
    from shared.record import GameRecordFile

    async with serving(bot_workers=1, bot_think=0.05, review_samples=1,
                       review_candidates=2) as (server, url):
        anna = await _game_with_a_bot(url, "easy")
        await play_legal([anna, None], random.Random(2), end_bias=0.5, timeout=30)
        room = anna.state.view["room"]
        record = GameRecordFile.from_data((await anna.request(m.RecordRequest, room=room)).game)
        progress: list[tuple[int, int]] = []
        decided: list[tuple[int, int]] = []

        async def hard_bot() -> None:
            state = new_game(["Biel", "Carme"], "normal", 9)
            await server.thinkers.decide(state, 0, "hard", 1, think=0.05, owner=object(),
                                         share="127.0.0.2")
            decided.append(progress[-1])

        asked: list[asyncio.Task[None]] = []

        def told(done: int, total: int) -> None:
            progress.append((done, total))
            if done == 0:  # the review's turns are counted: its first turn's job runs
                asked.append(asyncio.create_task(hard_bot()))

        await server.reviews.review(record, share="127.0.0.1", progress=told)
        await asyncio.gather(*asked)
        (total,) = {t for _, t in progress}
        assert total >= 20 and progress[-1] == (total, total)
        # the bot thought between the review's first turns, not after its last
        assert decided and decided[0][0] <= 2, (decided, total)
        await anna.close()
