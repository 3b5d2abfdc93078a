"""``hint`` and the festival line through the real client (controller, session, the plain
screen) against a real server over a socket: a route of two steps to a festival, and a prize
supply run out. The room's game is set to the position to test, then the player takes the
seat back with ``resume`` and is sent that position as any returning player is."""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import random
import re
from collections import Counter

import attrs
import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from client.control.commands import CommandError, parse
from client.control.controller import Controller
from client.control.hints import deep_hint_lines
from client.local.seats import SeatStore
from client.net.session import Session
from client.screens.plain import PlainScreen
from shared import bots
from shared.engine import apply
from shared.search import unseen_castellers
from shared.state import Festival, Prizes
from shared.tower import check_tower
from shared.view import make_view, state_from_view
from tests.support import sample_views as sv
from tests.support.games import game
from tests.support.rooms import room_info
from tests.support.screens import full_screen, screen

pytestmark = pytest.mark.timeout(30)


async def _until(predicate, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def _in_game(server, url, tmp_path, **position):
    """Anna in seat 0 of a started 2-seat game against a bot, at her turn, the game changed
    by ``position`` (round 10, pawn in ebr, Figueres in gir ahead), then left and resumed."""
    session = Session(url, "Anna", seats=SeatStore(tmp_path / "state"))
    ctrl = Controller(session)
    out = io.StringIO()
    PlainScreen(ctrl, stdin=io.StringIO(), stdout=out, echo=False)
    await session.open()
    pump = asyncio.create_task(session.run())
    try:
        for line in ("create Friday night seats=2", "bot", "start"):
            await ctrl.handle(line)
        await _until(lambda: ctrl.view is not None and ctrl.view.turn == 0)
        room = server.lobby.rooms[session.room].room
        state = room.state
        figueres = Festival(10, "gir", "Figueres", "II", 6)
        festivals = (*(attrs.evolve(f, done=True) for f in state.festivals if f.round < 10),
                     figueres)
        players = (attrs.evolve(state.players[0], region="ebr", tokens=2), *state.players[1:])
        room.state = attrs.evolve(state, round=10, turn=0, done=(), festivals=festivals,
                                  players=players, **position)
        await ctrl.handle("leave")
        await ctrl.handle("resume")
        await _until(lambda: ctrl.view is not None and ctrl.view.round == 10)
        yield ctrl, out
    finally:
        await session.stop()
        pump.cancel()


async def test_hint_names_a_festival_reached_by_a_move_then_a_special_move(server, url,
                                                                          tmp_path):
    async with _in_game(server, url, tmp_path) as (ctrl, out):
        await ctrl.handle("hint")
        # the second step is a special move: a token, or the wheel's special tile (free)
        second = r"(?:special|train region|train all) move gir"
        found = re.search(r"festival at the end of this round: Figueres \(gir\), size 6 — get "
                          rf"there with `(move bcn)` then `({second})`$",
                          out.getvalue(), re.M)
        assert found, out.getvalue()
        assert "no trophies left" not in out.getvalue()
        for command in found.groups():  # and the route is the rules': it gets her there
            await ctrl.handle(command)
        await _until(lambda: ctrl.view.players[0].region == "gir")


async def test_an_empty_prize_supply_is_said_with_the_festivals_and_in_hint(server, url,
                                                                           tmp_path):
    async with _in_game(server, url, tmp_path, prizes=Prizes(trophy=0, medal=3)) as (ctrl, out):
        screen = ctrl.screen
        assert isinstance(screen, PlainScreen)
        screen.board()  # what `look` prints
        text = out.getvalue()
        assert ("prizes left: trophy 0 medal 3 ribbon 14 · no trophies left: a festival's 1st "
                "place wins no prize") in text
        await ctrl.handle("hint")
        hint = out.getvalue()[len(text):]
        assert "no trophies left: a festival's 1st place wins no prize" in hint


async def test_hint_before_the_first_move_says_what_waits_for_it(server, url, tmp_path):
    async with _in_game(server, url, tmp_path) as (ctrl, out):
        room = server.lobby.rooms[ctrl.session.room].room
        state = room.state  # no pawn on the board yet: §4, only the move places it
        room.state = attrs.evolve(state, players=(attrs.evolve(state.players[0], region=None),
                                                  *state.players[1:]))
        await ctrl.handle("leave")
        await ctrl.handle("resume")
        await _until(lambda: ctrl.view is not None and ctrl.view.players[0].region is None)
        await ctrl.handle("hint")
        said = out.getvalue().rsplit("you can:", 1)[1]
        assert re.search(r"^  move alt \| gir \| cen \| lle \| bcn \| tar \| ebr$", said, re.M)
        assert "recruit, train with your region and special: once `move` has put your pawn on " \
               "the board (any region)" in said
        # a region with castellers in it, so that a recruit is legal once the pawn is there
        # (the room's seed deals the board: lle is empty in some deals)
        there = next(r for r in ("lle", "alt", "gir", "cen", "bcn", "tar", "ebr")
                     if room.state.region_castellers(r))
        await ctrl.handle(f"move {there}")
        await _until(lambda: ctrl.view.players[0].region == there)
        mark = len(out.getvalue())
        await ctrl.handle("hint")
        assert "once `move` has put" not in out.getvalue()[mark:]
        assert re.search(r"^  recruit ", out.getvalue()[mark:], re.M), out.getvalue()[mark:]


async def test_hint_deep_shows_the_turn_the_hard_bot_would_play(server, url, tmp_path):
    async with _in_game(server, url, tmp_path) as (ctrl, out):
        mark = len(out.getvalue())
        await ctrl.handle("hint deep")
        said = out.getvalue()[mark:]
        assert "the hard bot would play, in this order:" in said, said
        steps = re.findall(r"^  \d+\. (.+)$", said, re.M)
        assert steps and steps[-1] == "end"
        for step in steps[:-1]:  # each is a command the player could type, in its turn
            parse(step)
        with pytest.raises(CommandError, match="hint takes nothing, or `deep`"):
            parse("hint deeper")


@pytest.mark.parametrize("seed", [1, 2])
def test_hint_deep_asked_twice_from_one_position_says_the_same(seed):
    # the play-outs shuffle the bag nobody can see: from a generator seeded by the position,
    # so a player asking again gets the same line and the same expectations, not another
    # (twenty actions into a 3-seat game the hard bot weighs several lines)
    state = game(3, seed=seed)
    rng = random.Random(seed)
    for _ in range(20):
        state, _ = apply(state, state.turn, bots.choose(state, state.turn, "normal", rng))
    view = make_view(room_info(state), state)
    first = deep_hint_lines(view, state.turn, 60.0)
    assert first[0] == "the hard bot would play, in this order:"
    assert deep_hint_lines(view, state.turn, 60.0) == first


def test_the_bag_a_hint_imagines_holds_what_nobody_can_see():
    state = game(3, seed=4)
    rng = random.Random(1)
    for _ in range(40):
        state, _ = apply(state, state.turn, bots.choose(state, state.turn, "normal", rng))
    seen = state_from_view(make_view(room_info(state), state))
    assert seen.bag != state.bag  # a view says only how many
    assert sorted(unseen_castellers(seen)) == sorted(state.bag)


@pytest.mark.parametrize("width", [100, 80])
def test_the_festivals_say_when_the_trophies_are_gone(width):
    view = sv.typed(sv.four_seat())
    assert "no trophies left" not in screen(view, 2, width=width)
    text = screen(attrs.evolve(view, prizes=Prizes(trophy=0, medal=13)), 2, width=width)
    if width == 100:  # under the Festivals panel, in a sentence
        assert "│ left: trophy 0 medal 13 ribbon 14" in text
        assert "│ no trophies left: a festival's 1st" in text
    else:  # at the foot of the regions, which list the festivals
        assert "bag 54 · no trophies left · medal 13 ribbon 14 ─" in text


def _level_prefixes(team, skills):
    """``build L / `` prefixes whose next level some sizes left cannot stand on, with those
    that can: what Tab must offer (§7, asked of shared.tower directly)."""
    out = []
    for width in (1, 2, 3):
        for level in sorted(set(itertools.combinations(sorted(team, reverse=True), width))):
            if not check_tower([list(level)], skills).legal:
                continue
            left = Counter(team)
            left.subtract(level)
            sizes = sorted((s for s, n in left.items() if n > 0), reverse=True)
            ok = [s for s in sizes if check_tower([list(level), [s]], skills).legal]
            if len(ok) < len(sizes):
                out.append((" ".join(map(str, level)), ok))
    return out


async def test_tab_in_a_build_offers_only_sizes_that_can_stand_there(server, url, tmp_path):
    """What Tab offers on the prompt of the full-screen client (its completer, as the
    prompt asks it), in a game against a real server; the Tab key itself is a pty test's
    (tests/test_client_cli.py)."""
    async with full_screen(url, "Anna", tmp_path) as term:
        ctrl = term.controller
        for line in ("create Friday night seats=2", "bot", "start"):
            await ctrl.handle(line)
        await _until(lambda: ctrl.view is not None and ctrl.view.turn == 0
                     and ctrl.view.status == "playing")
        anna = ctrl.view.players[0]
        prefixes = _level_prefixes(anna.team, anna.skills)
        assert prefixes, (anna.team, anna.skills)
        level, ok = max(prefixes, key=lambda p: len(p[1]))  # a menu if the team allows
        completer = term._completer()
        assert completer is not None
        offered = [(c.text, c.display_meta_text) for c in completer.get_completions(
            Document(f"build {level} / "), CompleteEvent(completion_requested=True))]
        if not ok:  # none can (a team without skills): Tab offers nothing
            assert offered == []
        elif len(ok) == 1:  # the one size that can stand there: Tab types it in
            assert [text for text, _ in offered] == [str(ok[0])]
        else:  # the menu lists exactly those that can, largest first
            assert all(re.fullmatch(r"\d+ left|start the next level", meta)
                       for _, meta in offered), offered
            assert [text for text, _ in offered] == [str(s) for s in ok]
