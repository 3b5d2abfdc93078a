"""Packed patches (shared/packed.py, docs/protocol.md "`p`"): the same patch in fewer bytes,
read back exactly; refused where it is malformed; and over a real server, a client that takes
them holds the very view of one that does not."""

from __future__ import annotations

import ast
import json
import random
import re
from pathlib import Path

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client.net.net import GameClient, ServerError
from server.core.room import Push, Room
from shared import messages as m
from shared import packed
from shared.actions import EndTurn
from shared.codec import decode_server
from shared.engine import legal_actions
from shared.errors import ProtocolError
from shared.patch import apply

NOW = 1_000_000.0
DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"


def game_patches(seed: int, seats: int = 4) -> list[Push[str]]:
    """Every push of a seeded random game of ``seats``, as the room made them."""
    room: Room[str] = Room("r1", "Table", seats, "normal", 120, False, seed=seed, now=NOW)
    for i in range(seats):
        room.commit(room.take_seat(f"p{i}", f"P{i}", i + 1, now=NOW), now=NOW)
    room.commit(room.start("p0", 9, now=NOW), now=NOW)
    rng = random.Random(seed)
    pushes: list[Push[str]] = []
    re_ = 100
    while room.state is not None and not room.state.over:
        state = room.state
        assert state.turn is not None
        re_ += 1
        action = rng.choice(legal_actions(state, state.turn))
        effects = room.commit(room.act(f"p{state.turn}", action, re_, now=NOW), now=NOW)
        pushes.extend(e for e in effects if isinstance(e, Push))
    return pushes


@pytest.mark.parametrize("seed", [1, 2])
def test_a_packed_patch_reads_back_as_the_patch_over_a_whole_game(seed):
    packed_bytes = patch_bytes = 0
    for push in game_patches(seed, seats=2 + seed):
        data, small = push.patch(), push.packed()
        assert data is not None and small is not None
        patch = msgpack.unpackb(data)
        value = msgpack.unpackb(small, strict_map_key=False)
        assert value["type"] == "p" and "room" not in value
        assert packed.unpack(value) == (patch["base"], patch["version"], patch["changes"],
                                        patch["events"])
        # and as a client reads it: the Patch of its room, which makes the same view
        read = decode_server(small, packed_room="r1")
        assert read == decode_server(data)
        assert push.base is not None
        assert apply(push.base.view, list(read.changes)) == push.shown.view
        packed_bytes += len(small)
        patch_bytes += len(data)
    # fewer bytes: the envelope, and every key the table has, told as one byte or two
    assert packed_bytes < 0.7 * patch_bytes, (packed_bytes, patch_bytes)


keys = st.one_of(st.sampled_from(packed.KEYS), st.text(max_size=6))
values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**31, 2**31), st.sampled_from(packed.KEYS),
              st.text(max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12)
paths = st.lists(st.one_of(keys, st.integers(0, 20)), max_size=4)


@settings(max_examples=150)
@given(changes=st.lists(st.tuples(paths, values).map(lambda pv: [*pv[0], pv[1]]), max_size=5),
       events=st.lists(st.dictionaries(keys, values, max_size=4), max_size=3),
       base=st.integers(0, 2**53 - 2))
def test_any_changes_and_events_read_back_exactly(changes, events, base):
    # whatever the keys and values: a key the table lacks stays a string, a value that
    # spells a key stays that string, and a list index stays an index
    data = packed.encode(base, base + 1, changes, tuple(events))
    value = msgpack.unpackb(data, strict_map_key=False)
    assert packed.unpack(value) == (base, base + 1, changes, events)


def test_the_doc_s_packed_example_is_its_patch_example_packed():
    text = DOC.read_text()
    section = text.split("### `p`", 1)[1].split("<a id=", 1)[0]
    example = section.split("```text", 1)[1].split("```", 1)[0]
    patch_section = text.split("### `patch`", 1)[1].split("### ", 1)[0]
    patch = json.loads(patch_section.split("```json", 1)[1].split("```", 1)[0])
    value = msgpack.unpackb(packed.encode(patch["base"], patch["version"], patch["changes"],
                                          tuple(patch["events"])), strict_map_key=False)
    assert ast.literal_eval(example) == value
    # and the table on the page is the code's, in its order
    rows = re.findall(r"^\| (-\d+) \| `([a-z_]+)` \|$", section, re.M)
    assert [(int(code), key) for code, key in rows] == [
        (-1 - i, key) for i, key in enumerate(packed.KEYS)]


@pytest.mark.parametrize(("payload", "field"), [
    ({"type": "p", "b": 1, "v": 2, "c": [[-999, 1]], "e": []}, "c"),
    ({"type": "p", "b": 1, "v": 2, "c": [], "e": [{-999: "x"}]}, "e"),
    ({"type": "p", "b": 1, "v": 2, "c": [], "e": [{7: "x"}]}, "e"),
    ({"type": "p", "b": -1, "v": 2, "c": [], "e": []}, "b"),
    ({"type": "p", "b": 1, "v": 2**53, "c": [], "e": []}, "v"),
    ({"type": "p", "b": 1, "v": 2, "c": [[]], "e": []}, "c"),
    ({"type": "p", "b": 1, "v": 2, "c": {}, "e": []}, "c"),
    ({"type": "p", "b": 1, "v": 2, "c": [], "e": [[]]}, "e"),
    ({"type": "p", "v": 2, "c": [], "e": []}, "b"),
])
def test_a_malformed_packed_patch_is_refused_naming_its_field(payload, field):
    with pytest.raises(ProtocolError) as refused:
        decode_server(msgpack.packb(payload), packed_room="r1")
    assert refused.value.field == field


def test_only_a_packed_patch_may_have_number_keys():
    frame = msgpack.packb({"type": "notice", "room": "r1", "text": "hi", "x": {-1: 2}})
    with pytest.raises(ProtocolError) as refused:
        decode_server(frame, packed_room="r1")
    assert refused.value.code == "bad_message"
    # and a reader that did not ask for them reads number keys in no frame at all
    with pytest.raises(ProtocolError) as refused:
        decode_server(msgpack.packb({"type": "p", "b": 1, "v": 2, "c": [], "e": [{-1: "x"}]}))
    assert refused.value.code == "bad_message"


async def test_over_a_server_a_packed_client_holds_the_view_of_one_that_is_not(server, url):
    async with await GameClient.connect(url) as anna, \
            await GameClient.connect(url) as biel, \
            await GameClient.connect(url) as watcher:
        await anna.hello("Anna")  # packed: the client's default
        await biel.hello("Biel", packed=False)
        await watcher.hello("Watcher", patches=False)
        assert anna.packed and not biel.packed and not watcher.packed
        made = await anna.request(m.CreateRoom, name="R", seats=2)
        await biel.request(m.JoinRoom, room=made.room)
        await watcher.request(m.JoinRoom, room=made.room, as_="spectator")
        await anna.request(m.StartGame)
        version = 0
        for _ in range(6):
            state = await anna.wait_state(lambda s, v=version: s.version >= v and
                                          s.view["status"] == "playing")
            me = anna if state.view["turn"] == 0 else biel
            version = await me.act(EndTurn())  # every turn may end
        for client in (anna, biel, watcher):
            await client.wait_state(lambda s, v=version: s.version >= v)
        assert anna.view is not None and biel.view is not None and watcher.view is not None
        assert anna.view.view == biel.view.view == watcher.view.view
        assert anna.patched >= 5 and biel.patched >= 5 and anna.resyncs == 0


async def test_packed_without_patches_is_refused_naming_packed(server, url):
    async with await GameClient.connect(url) as anna:
        with pytest.raises(ServerError) as refused:
            await anna.request(m.Hello, name="Anna", packed=True)
        assert refused.value.code == "invalid_field" and refused.value.error.field == "packed"
        welcome = await anna.request(m.Hello, name="Anna", patches=True, packed=True)
        assert welcome.name == "Anna"
