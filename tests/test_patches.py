"""View patches (docs/protocol.md, `patch`): applying every patch of whole games gives exactly
the whole view, in shared over random games and over the wire with a real server; a client
that misses a version gets the whole view again; clients that do not ask get whole views."""

from __future__ import annotations

import asyncio
import copy
import random

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.core import room_views as room_module
from server.core.room import Push, Room
from shared import messages as m
from shared.actions import EndTurn
from shared.errors import ProtocolError
from shared.patch import apply, diff
from shared.view import RoomInfo, SeatInfo, ViewParts, build_view
from tests.support.games import random_game
from tests.support.rooms import room_info
from tests.support.wire import play_legal


def _wire(value):
    """``value`` as the other side reads it (MessagePack and back)."""
    return msgpack.unpackb(msgpack.packb(value))


def _check(old, new, *, index_edits=False):
    before = copy.deepcopy(old)
    changes = _wire(diff(old, new, index_edits=index_edits))
    assert apply(old, changes) == new
    assert old == before  # the view patched is left as it was


@settings(max_examples=25, deadline=None)
@given(seats=st.integers(2, 4), variant=st.sampled_from(["normal", "advanced"]),
       seed=st.integers(0, 2**32 - 1), index_edits=st.booleans())
def test_applying_every_patch_of_a_random_game_gives_exactly_the_whole_view(
        seats, variant, seed, index_edits):
    rng = random.Random(seed)
    steps = random_game(seats, variant=variant, seed=seed, rng=rng)
    waiting = RoomInfo("r-1", "Sala", variant, seats, 90, "waiting",
                       players=[SeatInfo(s, f"P{s}") for s in range(seats)])
    old = build_view(waiting, None)
    parts = ViewParts()  # as a room builds its views: reusing the unchanged maps
    spectators: tuple[str, ...] = ()
    for number, step in enumerate(steps):
        if rng.random() < 0.05:  # someone comes to watch, or goes
            spectators = spectators[1:] if spectators else (f"S{number}",)
        offline = {s for s in range(seats) if rng.random() < 0.1}
        info = room_info(step.state, offline=offline, spectators=spectators,
                         deadline=1_700_000_000.0 + number,
                         status="finished" if step.state.over else "playing")
        new = build_view(info, step.state, parts)
        assert new == build_view(info, step.state)  # the same view as one built afresh
        _check(old, new, index_edits=index_edits)
        old = new
    assert old["status"] == "finished"


def test_a_view_after_an_action_shares_the_maps_the_action_left_unchanged():
    steps = iter(random_game(3, seed=7))
    parts = ViewParts()
    first = next(steps).state
    before = build_view(room_info(first, status="playing"), first, parts)
    step = next(s for s in steps if s.state.players[0] is not first.players[0]
                and s.state.players[1] is first.players[1])
    after = build_view(room_info(step.state, status="playing"), step.state, parts)
    assert after["players"][0] is not before["players"][0]  # the player who acted: anew
    assert after["players"][0] == build_view(room_info(step.state, status="playing"),
                                             step.state)["players"][0]
    assert after["players"][1] is before["players"][1]  # untouched: the same map
    assert after["festivals"] is before["festivals"]
    assert diff(before, after) == diff(copy.deepcopy(before), after)


def test_a_patch_that_does_not_fit_the_view_is_refused_and_changes_nothing():
    view = {"turn": 1, "players": [{"team": [3, 2]}], "wheel": {}}
    kept = copy.deepcopy(view)
    for changes in ([["nope", 1]], [["players", 1, "team", []]], [["turn", "x", 2]],
                    [[]], "turn", [["players", "0", "team", [1]]], [["wheel", "alt", "x"]]):
        with pytest.raises(ProtocolError) as refused:
            apply(view, changes)
        assert refused.value.code == "invalid_field" and refused.value.field == "changes"
    assert view == kept
    # no path: the whole view
    assert apply(view, [[{"turn": 0}]]) == {"turn": 0}


def test_a_room_computes_each_push_once_and_its_patch_fits_the_view_shown_before():
    room: Room[str] = Room("r1", "Table", 2, "normal", 60, False, seed=7, now=1000.0)
    held: dict[str, dict] = {}

    def performed(effects):
        for effect in effects:
            if isinstance(effect, Push):
                for member in effect.to:
                    held[member] = msgpack.unpackb(effect.data)["view"]
        return [e for e in effects if isinstance(e, Push)]

    for member in ("a", "b"):
        performed(room.commit(room.take_seat(member, member.upper(), 1, now=1000.0),
                              now=1000.0))
    before = dict(held)
    [push] = [p for p in performed(room.commit(room.start("a", 2, now=1001.0), now=1001.0))
              if p.to == ("a", "b")]
    assert push.base is not None and push.patch() is push.patch()  # encoded once
    patch = msgpack.unpackb(push.patch())
    assert patch["type"] == "patch" and (patch["base"], patch["version"]) == (2, 3)
    for member in ("a", "b"):
        assert before[member] == push.base.view
        assert apply(before[member], patch["changes"]) == held[member] == room.view()


def test_an_action_is_answered_before_its_view_is_built_and_the_view_is_the_one_it_made(
        monkeypatch):
    room: Room[str] = Room("r1", "Table", 2, "normal", 60, False, seed=7, now=1000.0)
    for member in ("a", "b"):
        room.commit(room.take_seat(member, member.upper(), 1, now=1000.0), now=1000.0)
    room.commit(room.start("a", 2, now=1001.0), now=1001.0)
    built: list[int] = []
    real = room_module.build_view

    def counting(*args, **kwargs):
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(room_module, "build_view", counting)  # counts, builds for real
    effects = room.commit(room.act("ab"[room.state.turn], EndTurn(), 5, now=1002.0),
                          now=1003.0)
    kinds = [type(e).__name__ for e in effects]
    assert kinds.index("Send") < kinds.index("Push")  # the ok first
    assert built == []  # nothing built yet: the ok does not wait on the view
    expected = real(room.info(), room.state)  # the view at version 4, built aside
    push = next(e for e in effects if isinstance(e, Push))
    later = room.commit(room.act("ab"[room.state.turn], EndTurn(), 6, now=1004.0),
                        now=1004.0)  # the room moves on before the push is read
    assert push.shown.version == 4 and push.shown.view == expected != room.view()
    assert push.shown.view is push.shown.view  # built once, and kept
    assert next(e for e in later if isinstance(e, Push)).base is push.shown


async def _caught_up(client, version, timeout=10.0):
    """Wait until ``client`` holds ``version`` (without taking pushes off its queue)."""
    async with asyncio.timeout(timeout):
        while client.state is None or client.state.version < version:
            await asyncio.sleep(0.01)


async def test_over_the_wire_every_patch_makes_the_view_a_whole_state_push_shows(connect):
    creator = await connect("Anna")  # takes patches, as our client does
    joined = await creator.request(m.CreateRoom, name="Patches", seats=2, turn_seconds=600)
    await creator.request(m.AddBot, level="random")
    whole = await connect()  # a client that does not ask for patches
    await whole.hello("Whole", patches=False)
    await whole.request(m.JoinRoom, room=joined.room, as_="spectator")
    patched = await connect("Patched")
    await patched.request(m.JoinRoom, room=joined.room, as_="spectator")
    await creator.request(m.StartGame)
    await creator.wait_state(lambda p: p.view["status"] == "playing")
    await play_legal([creator, None], random.Random(5), actions=12, end_bias=0.3)
    # a third spectator comes and goes: the view changes at the same version
    visitor = await connect("Visitor")
    await visitor.request(m.JoinRoom, room=joined.room, as_="spectator")
    await visitor.request(m.LeaveRoom)
    # the patched spectator misses a version: the next patch does not fit, so it asks for
    # the whole view again (resync) and goes on with patches from there
    await _caught_up(patched, creator.state.version)
    views = patched.views
    stale = patched.view
    assert stale.view["status"] == "playing"
    patched.view = m.StatePush(stale.room, stale.version - 1, stale.view, ())
    await play_legal([creator, None], random.Random(6), end_bias=0.3)
    final = creator.state.version
    for client in (whole, patched):
        await _caught_up(client, final)
    pushes = {name: [p for p in client.drain() if isinstance(p, m.StatePush)]
              for name, client in (("whole", whole), ("patched", patched))}
    assert whole.patched == 0 and whole.resyncs == 0
    assert patched.patched > 40 and patched.resyncs == 1
    # the resync brought one whole view; every other view came as a patch
    assert patched.views == views + 1
    assert patched.state.view["status"] == "finished"
    assert patched.state.view == whole.state.view == creator.state.view
    # every view the patches made is the whole view pushed at that point, in order
    seen = [(p.version, p.view) for p in pushes["whole"]]
    for push in pushes["patched"]:
        assert (push.version, push.view) in seen
        seen = seen[seen.index((push.version, push.view)) + 1:]
