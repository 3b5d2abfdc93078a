"""The client's pure parts on a real game: views built by shared.view from engine states,
events as the codec puts them on the wire, completion fed by the state rebuilt from a view."""

from __future__ import annotations

import random

import pytest
from rich.cells import cell_len

from client.control.commands import action_to_command, parse
from client.control.completion import CommandCompleter, complete
from client.screens.render import render_plain
from shared.codec import event_to_wire
from shared.engine import legal_actions
from shared.view import RoomInfo, build_view, parse_view, state_from_view
from tests.support import sample_views as sv
from tests.support.games import game, play_out, sometimes_tallest
from tests.support.rooms import room_info
from tests.support.screens import screen


@pytest.mark.parametrize("make", [sv.two_seat, sv.four_seat, sv.finished, sv.waiting])
def test_sample_views_follow_the_protocol(make):
    parse_view(make())  # raises ProtocolError on any key or value the protocol does not allow


def _room(state, status: str) -> RoomInfo:
    """The test table of ``state``'s players, seat 1 a bot and seat 2 not connected."""
    return room_info(state, bots={1}, offline={2}, room="r-test", name="Test table",
                     turn_seconds=60, status=status,
                     deadline=sv.NOW + 30 if status == "playing" else None)


@pytest.mark.parametrize(("seats", "seed"), [(3, 11), (4, 12)])
def test_a_whole_game_renders_and_completes_from_its_views(seats, seed):
    start = game(seats, seed=seed)
    room = _room(start, "playing")
    state = start
    events: list[dict] = []
    # a seeded random player who sometimes builds its tallest tower
    for step, played in enumerate(play_out(start, random.Random(seed), sometimes_tallest(0.2))):
        state = played.state
        events = [*events, *(event_to_wire(e) for e in played.events)][-12:]
        if step % 15 or state.over:
            continue
        view = parse_view(build_view(room, state))  # as a state push reaches the client
        me = step % seats
        # the completer, fed as the client will feed it, offers what the engine allows
        completer = CommandCompleter(lambda v=view, m=me: legal_actions(state_from_view(v), m))
        legal = legal_actions(state, me)
        assert list(completer.legal_actions()) == legal
        for action in legal:
            line = action_to_command(action)
            assert parse(line) == action
            head, _, last = line.rpartition(" ")
            if head:
                assert last in complete(head + " ", legal)
        for width in (100, 80):
            text = screen(view, me, events, width=width)
            assert max(cell_len(line) for line in text.splitlines()) <= width
            assert "Test table" in text and "Regions" in text
        assert render_plain(view, me, events)
    assert state.over

    final = parse_view(build_view(_room(state, "finished"), state))
    text = screen(final, 0, events)
    assert "Final score" in text and "★ winner" in text
    assert "Game over:" in text
    for player in state.players:
        assert player.name in text
    plain = render_plain(final, None, events)
    assert sum(line.startswith("score ") for line in plain) == seats


def test_a_waiting_room_view_renders():
    view = parse_view(build_view(_room(game(3), "waiting"), None))
    text = screen(view, None, [], width=80)
    assert "every seat taken 3/3, waiting for the start" in text and "Anna" in text
