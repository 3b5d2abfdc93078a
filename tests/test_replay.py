"""A game's replay (shared/replay.py), by value: the states it rebuilds from the seats, the
seed and the actions are the states the game went through, and the server's readers of a
stored game (the room, the list of an account's games) get the same state from it."""

from __future__ import annotations

import itertools
from pathlib import Path

from server.core.room import Room
from server.ops.export import record_file, stored_state
from server.store.base import ActionRecord, RoomRecord, SeatRecord
from server.store.sqlite import SQLiteStore
from shared import replay
from shared.codec import pack_action
from tests.support.games import NAMES, random_game


def test_steps_are_the_states_the_game_went_through() -> None:
    played = list(itertools.islice(random_game(3, seed=5), 120))
    actions = [(step.seat, step.action) for step in played]
    steps = list(replay.steps(NAMES[:3], "normal", 5, actions))
    assert steps[0] == (played[0].before, [])
    assert [state for state, _ in steps[1:]] == [step.state for step in played]
    assert [events for _, events in steps[1:]] == [step.events for step in played]
    assert replay.final_state(NAMES[:3], "normal", 5, actions) == played[-1].state
    assert replay.final_state(NAMES[:3], "normal", 5, []) == played[0].before


async def test_a_stored_game_reads_back_as_the_state_it_was_played_to(tmp_path: Path) -> None:
    played = list(itertools.islice(random_game(2, seed=9), 40))
    store = SQLiteStore(tmp_path / "castell.sqlite3")
    await store.open()
    try:
        await store.create_room(RoomRecord("r1", "Table", 2, "normal", None, False, None,
                                           seed=9, created_at=1.0))
        for seat in (0, 1):
            await store.put_seat(SeatRecord("r1", seat, NAMES[seat]), version=seat + 1)
        await store.update_room("r1", version=3, status="playing", started_at=2.0)
        for seq, step in enumerate(played):
            await store.append_action(ActionRecord("r1", seq, step.seat,
                                                   pack_action(step.action), 3.0, 4 + seq))
        record = await store.load("r1")
    finally:
        await store.close()
    assert record is not None
    assert stored_state(record) == played[-1].state
    assert replay.record_state(record_file(record)) == played[-1].state
    assert Room.from_record(record, now=5.0).state == played[-1].state
