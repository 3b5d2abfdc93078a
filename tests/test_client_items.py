"""What a player reads in the flows the play-tests walked through: festival results when the
prizes ran out, ``hint`` and ``hint deep`` with the training still open, the end-of-turn
question, the rules pages, the waiting room's and the spectator's hints, the replay's step
line, and the lobby's lines. Each through the real client in this process (the full-screen
client over a real server, or a view drawn by ``render``), the rules engine making every
position it shows."""

from __future__ import annotations

import re

import attrs
import pytest

from client.screens.render import render_plain
from shared.codec import event_to_wire
from shared.festival import resolve
from shared.state import Festival, GameState, Prizes, Skills
from shared.view import make_view
from tests.support.games import game, with_player
from tests.support.rooms import room_info
from tests.support.screens import screen

pytestmark = pytest.mark.timeout(30)


# Festival results: a top score that took nothing says why (§5.3) -----------------------


def _festival_with_no_trophies() -> tuple[GameState, dict]:
    """Three players; Anna and Biel enter the round-3 festival at Manresa (size 5), Anna
    first; the supply has no trophy left. The festival resolved by the rules."""
    state = game(3, seed=2)
    manresa = Festival(3, "cen", "Manresa", "I", 5)
    state = attrs.evolve(state, round=3, festivals=(manresa, *state.festivals[1:]),
                         prizes=Prizes(trophy=0, medal=14, ribbon=14))
    state = with_player(state, 0, region="cen", skills=Skills(balance=1),
                        tower=((9, 9, 9), (7, 7), (5, 5), (3,)))
    state = with_player(state, 1, region="cen", skills=Skills(balance=1),
                        tower=((8, 8, 8), (6, 6), (5,), (2,)))
    state, event = resolve(state, 0)
    assert [(r.seat, r.prize) for r in event.results] == [(0, None), (1, "medal")]
    return state, event_to_wire(event)


def test_a_top_score_left_without_a_trophy_says_none_were_left():
    state, event = _festival_with_no_trophies()
    view = make_view(room_info(state), state)
    lines = render_plain(view, 0, [event])
    assert "  Anna 6 (no trophies left) + size token" in lines
    assert "  Biel 5 medal" in lines
    # on the full screen, the festival's table says it in the prize column
    text = screen(view, 0, [event], max_event_lines=6)
    anna = next(line for line in text.splitlines() if re.search(r"Anna +6 ", line))
    assert "(no trophies left)" in anna and "size token" in anna
    assert "(no" not in next(line for line in text.splitlines() if re.search(r"Biel +5 ", line))
