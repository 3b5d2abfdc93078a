"""What a game nobody is looking at costs its server: its room and its state, and an entry in
the node's one heap of deadlines (server/runtime/deadlines.py), not a task or a loop handle
of its own, however many such games the server holds; and that their week-long turns still
end on time, each re-armed, from that heap.

The games are stored through the store's API (bench/idle.py's filler: correspondence games
of 2-4 seats, seven days a turn, a few actions in) in a real SQLite file; the servers are
real. No test here waits a real timer: a virtual clock is moved, or nothing is to fire."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from bench.idle import WEEK, store_games, token
from client.net.net import GameClient
from server.runtime.lobby import Lobby
from server.runtime.retries import Retries
from server.runtime.timers import LoopScheduler, VirtualClock
from server.runtime.unloaded import DUE_RETRY, UnloadedDeadlines
from server.store import SQLiteStore, open_store
from server.store.base import SeatRecord, Store
from server.store.errors import StoreError
from server.store.postgres import PostgresStore
from shared import messages as m
from shared.actions import EndTurn
from shared.state import GameState
from tests.support.proxy import cutting_proxy, through
from tests.support.servers import serving
from tests.support.services import POSTGRES_URL, store_schema

pytestmark = pytest.mark.timeout(120)

#: How many correspondence games the servers here hold.
GAMES = 300


async def _stored(path: Path, games: int) -> list[str]:
    async with SQLiteStore(str(path), synchronous="NORMAL", thread=False) as store:
        return await store_games(store, games, actions=6)


def _live_handles(loop: asyncio.AbstractEventLoop) -> int:
    """Timer handles waiting in the loop's queue (asyncio's own loop; a test only)."""
    return sum(not handle.cancelled() for handle in loop._scheduled)  # type: ignore[attr-defined]


async def _held(path: Path, games: int) -> tuple[int, int]:
    """The tasks and live loop handles while a server holds the ``games`` stored in ``path``
    (every one in memory, none unloaded for nobody attending it)."""
    async with serving(open_store(str(path)), max_rooms=GAMES + 10,
                       room_unattended_after=None, room_unload_after=None) as (server, _):
        assert len(server.lobby.rooms) == games
        scheduler = server.lobby.scheduler
        assert isinstance(scheduler, LoopScheduler)
        # every game's turn timer is armed, in the one heap of the lobby's scheduler
        assert all(r.timer.armed and r.timer.retrying is None for r in server.lobby.rooms.values())
        assert len(scheduler.deadlines) == games
        assert scheduler.deadlines.handles == (1 if games else 0)
        # and nothing else of theirs waits: no bot, no task
        assert all(r.bots._task is None for r in server.lobby.rooms.values())
        await asyncio.sleep(0)  # the start's last callbacks run
        tasks, handles = len(asyncio.all_tasks()), _live_handles(asyncio.get_running_loop())
        # what the host's metrics say of it
        metrics = server.metrics
        assert metrics is not None
        scraped = metrics.scrape().decode()
        assert f"castell_deadlines {float(games)}" in scraped
        assert "castell_event_loop_tasks " in scraped
        return tasks, handles


async def test_idle_correspondence_games_add_no_task_and_no_loop_handle(tmp_path: Path) -> None:
    one, many = tmp_path / "one.sqlite3", tmp_path / "many.sqlite3"
    await _stored(one, 1)
    await _stored(many, GAMES)
    tasks_one, handles_one = await _held(one, 1)
    tasks_many, handles_many = await _held(many, GAMES)
    # a task or a handle per game would be GAMES more; a start's stray callback, one or two
    assert tasks_many - tasks_one <= 2, (tasks_one, tasks_many)
    assert handles_many - handles_one <= 2, (handles_one, handles_many)


def _turn(state: GameState | None) -> tuple[int, int | None]:
    assert state is not None
    return state.round, state.turn


async def until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait until ``condition`` holds (the rooms storing what their timers did)."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


def _lone_lobby(store: Store, clock: VirtualClock, *, max_rooms: int = 10,
                bot_delay: float = 0.0, **options: Any) -> Lobby:
    """A lone server's lobby on ``store``, all its time on ``clock``: a game nobody is in
    leaves memory after a minute (``--room-unattended-after``'s default)."""
    return Lobby(store=store, max_rooms=max_rooms, bot_delay=bot_delay, room_linger=600.0,
                 unattended_after=60.0, clock=clock, scheduler=clock, **options)


async def test_week_long_turns_end_on_time_from_one_heap_and_are_armed_again(
        tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite3"
    ids = await _stored(path, 40)
    now = time.time()
    clock = VirtualClock(now)
    async with open_store(str(path)) as store:
        lobby = Lobby(store=store, max_rooms=100, bot_delay=0.0, room_linger=600.0,
                      clock=clock, scheduler=clock)
        assert await lobby.restore() == 40
        rooms = [lobby.rooms[room] for room in ids]
        before = {r.id: (r.room.version, _turn(r.room.state)) for r in rooms}
        # restored together: forty turns of a week, all due at one time, in one heap
        assert clock.deadlines == [now + WEEK] * 40
        tasks = len(asyncio.all_tasks())
        clock.advance(WEEK - 1.0)
        await asyncio.sleep(0)
        assert all(r.room.version == before[r.id][0] for r in rooms)  # not a second early
        clock.advance(1.0)
        # each turn ran out: stored as a timeout, the next seat to play, its week armed
        await until(lambda: all(r.room.version == before[r.id][0] + 1 for r in rooms))
        await until(lambda: len(clock.deadlines) == 40)
        assert clock.deadlines == [now + 2 * WEEK] * 40
        for r in rooms:
            assert _turn(r.room.state) != before[r.id][1]  # the next turn (or the next round)
        record = await store.load(ids[0])
        assert record is not None and record.actions[-1].timed_out
        # the tasks that ended the turns are gone once they did
        await until(lambda: len(asyncio.all_tasks()) <= tasks)
        # a room let go of takes its deadline with it; the others' stay
        for r in rooms[:25]:
            lobby.remove(r)
        assert clock.deadlines == [now + 2 * WEEK] * 15
        for r in rooms[25:]:
            lobby.remove(r)
        assert clock.deadlines == []


async def test_an_unloaded_game_s_turn_still_runs_out_and_a_player_back_finds_its_deadline(
        tmp_path: Path) -> None:
    # A correspondence game nobody is in leaves memory within a minute, but its turn's
    # deadline stays in the one heap: when it comes, the game is loaded back and the absent
    # player's turn runs out as it would have in memory (§4); a player back before then finds
    # the turn's deadline as it was, not a fresh week. A game nobody comes back to after a
    # start (the third) runs out the fresh turn the start gave it alike.
    path = tmp_path / "games.sqlite3"
    ids = await _stored(path, 3)
    now = time.time()
    clock = VirtualClock(now)
    async with open_store(str(path)) as store:
        lobby = _lone_lobby(store, clock, max_rooms=100)
        assert await lobby.restore() == 0  # a week's turn outlasts the minute: none loaded
        deadline = now + WEEK
        assert lobby.rooms == {} and clock.deadlines == [deadline] * 3
        # a player comes back to two of them (after a start, a fresh week), and goes again
        runners = [await lobby.find_or_load(room, by_id_private=True) for room in ids[:2]]
        assert [r.room.deadline for r in runners] == [deadline, deadline]
        record = await store.load(ids[2])
        assert record is not None
        before = {r.id: (r.room.version, _turn(r.room.state)) for r in runners}
        before[ids[2]] = (record.room.version, (-1, None))
        lobby.residency.sweep()
        clock.advance(60.0)
        lobby.residency.sweep()
        # unloaded: no room in memory, each turn's deadline still in the heap
        assert lobby.rooms == {} and clock.deadlines == [deadline] * 3
        # a day later a player comes back to the first: the turn keeps its deadline
        clock.advance(24 * 3600.0)
        back = await lobby.find_or_load(ids[0], by_id_private=True)
        assert back.room.deadline == deadline and back.timer.armed
        assert clock.deadlines == [deadline] * 3  # one wait each, no more
        # the deadline comes: the game in memory and the unloaded one alike run out on time
        clock.advance_to(deadline - 1.0)
        await asyncio.sleep(0)
        assert ids[1] not in lobby.rooms and ids[2] not in lobby.rooms  # not a second early
        clock.advance_to(deadline)
        await until(lambda: all(room in lobby.rooms for room in ids))
        rooms = [lobby.rooms[room] for room in ids]
        await until(lambda: all(r.room.version == before[r.id][0] + 1 for r in rooms))
        for r in rooms:
            assert _turn(r.room.state) != before[r.id][1]  # the next seat's turn
            assert r.room.deadline == deadline + WEEK  # a full week for it
            record = await store.load(r.id)
            assert record is not None and record.actions[-1].timed_out
        # let go of for good (a room removed, not unloaded), a game leaves no wait behind
        lobby.residency.sweep()
        clock.advance(60.0)
        lobby.residency.sweep()
        assert lobby.rooms == {} and clock.deadlines == [deadline + WEEK] * 3
        lobby.remove(await lobby.find_or_load(ids[0], by_id_private=True))
        assert clock.deadlines == [deadline + WEEK] * 2


def _put_off(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The warnings that due games could not be loaded back, in order."""
    return [r.getMessage() for r in caplog.records
            if "could not be loaded back" in r.getMessage()]


async def test_a_due_game_the_full_lobby_cannot_load_runs_out_once_a_room_is_free(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # The one room the lobby may hold is a waiting room (never unloaded to make way): the
    # unloaded game's turn comes due, it cannot be loaded (rate_limited, logged), and it is
    # tried again later: its turn runs out then, late, never early
    path = tmp_path / "games.sqlite3"
    (game,) = await _stored(path, 1)
    now = time.time()
    clock = VirtualClock(now)
    async with open_store(str(path)) as store:
        lobby = _lone_lobby(store, clock, max_rooms=1)
        assert await lobby.restore() == 0
        record = await store.load(game)
        assert record is not None
        waiting = await lobby.create("Waiting", 2, "normal", None, False)
        clock.advance(WEEK)
        await until(lambda: "could not be loaded back" in caplog.text)
        assert game not in lobby.rooms and clock.deadlines == [now + WEEK + DUE_RETRY]
        lobby.remove(waiting, forget=True)
        clock.advance(DUE_RETRY)
        await until(lambda: game in lobby.rooms)
        runner = lobby.rooms[game]
        await until(lambda: runner.room.version == record.room.version + 1)
        stored = await store.load(game)
        assert stored is not None and stored.actions[-1].timed_out


async def test_due_games_put_off_together_are_told_in_one_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # After a restart every game left in the store comes due at once; a lobby full of rooms
    # people are in loads none of them, and says so once, not once a game (thousands may
    # wait), and again once for each later try
    path = tmp_path / "games.sqlite3"
    ids = await _stored(path, 5)
    clock = VirtualClock(time.time())
    async with open_store(str(path)) as store:
        lobby = _lone_lobby(store, clock, max_rooms=1)
        assert await lobby.restore() == 0 and len(lobby.unloaded) == 5
        await lobby.create("Waiting", 2, "normal", None, False)

        clock.advance(WEEK)
        await until(lambda: len(_put_off(caplog)) == 1 and not lobby.unloaded.loading)
        (told,) = _put_off(caplog)
        assert told.startswith("5 games whose turns ran out while they were unloaded")
        assert any(f"the first: room {room}" in told for room in ids)
        clock.advance(DUE_RETRY)
        await until(lambda: len(_put_off(caplog)) == 2 and not lobby.unloaded.loading)
        assert len(lobby.unloaded) == 5 and not set(ids) & set(lobby.rooms)


async def test_a_full_lobby_is_asked_for_room_once_a_pass_not_once_a_game(
        caplog: pytest.LogCaptureFixture) -> None:
    # Fifty games come due together and the lobby has no room, nor a game to make way:
    # whether it has is asked once (each asking looks over every room in memory: thousands
    # of games by thousands of rooms, after a restart), and none is read from the store
    clock = VirtualClock(0.0)
    asked: list[float] = []
    loads: list[str] = []

    async def load(room_id: str) -> None:
        loads.append(room_id)

    def has_room() -> bool:
        asked.append(clock.now)
        return False

    deadlines = UnloadedDeadlines(clock, Retries(), load, has_room)
    for n in range(50):
        deadlines.park(f"r{n}", 10.0, 10.0)
    clock.advance(10.0)
    await until(lambda: asked and not deadlines.loading)
    assert asked == [10.0] and loads == [] and len(deadlines) == 50
    assert clock.deadlines == [10.0 + DUE_RETRY] * 50
    clock.advance(DUE_RETRY)
    await until(lambda: len(asked) == 2 and not deadlines.loading)
    assert asked == [10.0, 10.0 + DUE_RETRY] and loads == []
    told = _put_off(caplog)
    assert len(told) == 2 and all(t.startswith("50 games") for t in told)


async def test_a_game_put_off_twice_in_one_pass_is_told_once(
        caplog: pytest.LogCaptureFixture) -> None:
    # The store takes a write again while the loader is still at work on the games due: the
    # game it refused a moment before is due again within the same pass, and put off again.
    # Two games were put off, and the warning says two, not three
    clock = VirtualClock(0.0)
    loads: list[str] = []

    async def load(room_id: str) -> None:
        loads.append(room_id)
        if room_id == "rB":
            deadlines.store_back()  # rA, refused a moment ago, is due again
            await asyncio.sleep(0)
        raise StoreError("the store is unreachable", code="store_failed")

    deadlines = UnloadedDeadlines(clock, Retries(), load, lambda: True)
    deadlines.park("rA", 10.0, 10.0)
    deadlines.park("rB", 10.0, 10.0)
    clock.advance(10.0)
    await until(lambda: loads and not deadlines.loading)
    assert loads == ["rA", "rB", "rA"]
    told = _put_off(caplog)
    assert len(told) == 1 and told[0].startswith("2 games whose turns ran out"), told
    assert len(deadlines) == 2


async def test_a_due_game_the_store_refuses_to_load_runs_out_once_the_store_is_back(
        caplog: pytest.LogCaptureFixture) -> None:
    # A real fault: the lobby reaches PostgreSQL through a proxy that goes dark as the
    # unloaded game's turn comes due. The load is refused (logged, the deadline kept); once
    # the database answers again the store's probe says so and the game is loaded at once,
    # not DUE_RETRY later, and its turn runs out
    target = urlsplit(POSTGRES_URL)
    async with store_schema() as db, cutting_proxy(target.hostname or "127.0.0.1",
                                                   target.port or 5432) as proxy:
        async with open_store(db) as filler:
            (game,) = await store_games(filler, 1, actions=6)  # type: ignore[arg-type]
            record = await filler.load(game)
        assert record is not None
        now = time.time()
        clock = VirtualClock(now)
        async with PostgresStore(through(db, proxy.port), pool_size=2,
                                 connect_timeout=2.0) as store:
            lobby = _lone_lobby(store, clock, store_probe_every=0.05)
            assert await lobby.restore() == 0 and clock.deadlines == [now + WEEK]
            proxy.blackout()
            clock.advance(WEEK)
            await until(lambda: "could not be loaded back" in caplog.text)
            assert game not in lobby.rooms and len(lobby.unloaded) == 1
            proxy.end_blackout()
            await until(lambda: game in lobby.rooms)
            assert clock.now == now + WEEK  # the store's return, not the retry's wait
            runner = lobby.rooms[game]
            await until(lambda: runner.room.version == record.room.version + 1)
            stored = await store.load(game)
            assert stored is not None and stored.actions[-1].timed_out


async def test_games_that_come_due_together_are_loaded_one_at_a_time_as_room_allows(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # After a start, every game left in the store comes due one turn later, all at once;
    # the lobby may hold two: they are loaded one at a time, each once the lobby has room
    # (one that has run out its turn makes way), so every turn runs out once, and no game is
    # read only to be turned away for want of room
    path = tmp_path / "games.sqlite3"
    ids = await _stored(path, 8)
    now = time.time()
    clock = VirtualClock(now)
    async with open_store(str(path)) as store:
        lobby = _lone_lobby(store, clock, max_rooms=2)
        assert await lobby.restore() == 0 and len(lobby.unloaded) == 8
        before = {}
        for room in ids:
            record = await store.load(room)
            assert record is not None
            before[room] = record.room.version

        async def ran_out() -> int:
            records = [await store.load(room) for room in ids]
            return sum(r is not None and r.room.version == before[r.room.room] + 1
                       for r in records)

        clock.advance(WEEK)
        for _ in range(40):  # each try a DUE_RETRY after the last, until every turn ran out
            async with asyncio.timeout(30):
                while lobby.unloaded.loading or any(r.room.busy for r in lobby.rooms.values()):
                    await asyncio.sleep(0.01)
            if await ran_out() == 8:
                break
            clock.advance(DUE_RETRY)
        assert await ran_out() == 8  # one timeout each, no more
        assert len(lobby.rooms) <= 2
        # read in vain, a game would have been refused by the lobby after its replay
        assert "as many rooms as it can hold" not in caplog.text


async def test_a_game_whose_bot_is_about_to_play_stays_in_memory(tmp_path: Path) -> None:
    # nobody is in it, but its bot plays in a moment: unloading it would park it until the
    # turn's deadline, a week, where in memory the bot plays and the game goes on
    path = tmp_path / "games.sqlite3"
    (game,) = await _stored(path, 1)
    clock = VirtualClock(time.time())
    async with open_store(str(path)) as store:
        lobby = _lone_lobby(store, clock, bot_delay=100.0)
        record = await store.load(game)
        assert record is not None
        state = lobby.runner_from_record(record).room.state
        assert state is not None and state.turn is not None
        await store.put_seat(SeatRecord(game, state.turn, "Pau·easy", bot=True,
                                        bot_level="easy"))
        assert await lobby.restore() == 1  # a game with a bot: loaded at start
        runner = lobby.rooms[game]
        assert runner.room.bot_turn() is not None
        lobby.residency.sweep()
        clock.advance(60.0)
        lobby.residency.sweep()
        assert lobby.rooms.get(game) is runner and len(lobby.unloaded) == 0
        # the bot plays its turn (each delay run out): then nothing is about to happen, and
        # the game leaves memory like any other
        async with asyncio.timeout(30):
            while runner.room.bot_turn() is not None or runner.room.busy:
                clock.advance(100.0)
                await asyncio.sleep(0.01)
        assert runner.room.version > record.room.version
        clock.advance(60.0)
        lobby.residency.sweep()
        clock.advance(60.0)
        lobby.residency.sweep()
        assert game not in lobby.rooms and len(lobby.unloaded) == 1


async def test_a_stopping_lobby_loads_no_due_game(tmp_path: Path) -> None:
    # the server stops: the deadlines of the games out of memory are called off (the next
    # start gives each a fresh turn), none is loaded back to write its timeout meanwhile
    path = tmp_path / "games.sqlite3"
    (game,) = await _stored(path, 1)
    clock = VirtualClock(time.time())
    async with open_store(str(path)) as store:
        lobby = _lone_lobby(store, clock)
        assert await lobby.restore() == 0 and len(lobby.unloaded) == 1
        lobby.stopping = True
        lobby.unloaded.close()
        assert clock.deadlines == [] and len(lobby.unloaded) == 0
        clock.advance(2 * WEEK)
        await asyncio.sleep(0)
        assert lobby.rooms == {}
        lobby.unloaded.park(game, clock.now, 0.0)  # nothing is taken once closed
        assert len(lobby.unloaded) == 0


async def test_a_lone_server_leaves_correspondence_games_in_the_store_until_a_player_comes(
        tmp_path: Path) -> None:
    # Nobody is in them, and their turns last a week: on a lone server a game nobody is in
    # leaves memory within a minute (--room-unattended-after), long before its turn could
    # end, so a start-up reads none of them back; each comes back with its player, and until
    # then the fresh turn the restart gave it is a deadline in the one heap, no room
    path = tmp_path / "games.sqlite3"
    ids = await _stored(path, 50)
    async with serving(open_store(str(path))) as (server, url):
        assert server.config.room_unattended_after is not None
        assert server.lobby.rooms == {}
        assert len(server.lobby.scheduler.deadlines) == 50  # type: ignore[attr-defined]
        anna = await GameClient.connect(url)
        try:
            await anna.hello("Anna")
            joined = await anna.request(m.JoinRoom, room=ids[7], token=token(ids[7], 0))
            assert joined.seat == 0
            state = await anna.wait_state()
            assert state.view["status"] == "playing"
            # loaded back with a fresh turn of a week, in the one heap
            runner = server.lobby.rooms[ids[7]]
            assert runner.timer.armed and runner.room.deadline is not None
            assert runner.room.deadline == pytest.approx(time.time() + WEEK, abs=60)
            assert list(server.lobby.rooms) == [ids[7]]
            # its deadline the one it had in the heap: still one wait for each game
            assert len(server.lobby.scheduler.deadlines) == 50  # type: ignore[attr-defined]
        finally:
            await anna.close()


async def test_a_room_its_members_left_keeps_its_state_not_its_view() -> None:
    async with serving(room_unattended_after=None) as (server, url):
        anna, bru = await GameClient.connect(url), await GameClient.connect(url)
        await anna.hello("Anna")
        await bru.hello("Bru")
        joined = await anna.request(m.CreateRoom, name="Letters", seats=2, turn_seconds=WEEK)
        again = await bru.request(m.JoinRoom, room=joined.room)
        await anna.request(m.StartGame)
        await anna.wait_state(lambda p: p.view["status"] == "playing")
        runner = server.lobby.rooms[joined.room]
        tokens = {joined.seat: (anna, joined.token), again.seat: (bru, again.token)}
        first = runner.room.state.turn  # type: ignore[union-attr]
        version = await tokens[first][0].act(EndTurn())
        await anna.wait_state(lambda p: p.version >= version)
        assert runner.room.views.shown is not None  # shown to its members: patched against
        for client in (anna, bru):
            await client.close()
        await until(lambda: not runner.room.members())
        # nobody is in it: what it showed is let go, its game stays
        assert runner.room.views.shown is None and runner.room.state is not None
        assert joined.room in server.lobby.rooms and runner.timer.armed
        # a player back with the seat's token sees the game whole, then patched, as it is
        seat = runner.room.state.turn
        back = await GameClient.connect(url)
        try:
            await back.hello("Back")
            await back.request(m.JoinRoom, room=joined.room, token=tokens[seat][1])
            whole = await back.wait_state()
            assert whole.view == runner.room.view()
            version = await back.act(EndTurn())
            after = await back.wait_state(lambda p: p.version >= version)
            assert back.patched > 0 and after.view == runner.room.view()
        finally:
            await back.close()
