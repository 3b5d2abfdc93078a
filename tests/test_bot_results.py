"""The player's record against the bots in ``castell play``: kept by value (each game once, by
the bots' level, won, lost, average points), read from a finished game's view, and shown by
the real client in this process — when ``castell play`` starts its game, in its lobby, and
after a whole game against bots on a real server."""

from __future__ import annotations

import json

import attrs
import pytest

from client.control.results import ResultsController, bots_level, game_result, record_lines
from client.local.results import BotResults, Result
from shared.actions import EndTurn
from shared.engine import apply
from shared.view import RoomInfo, RoomStatus, SeatInfo, make_view
from tests.support.games import game, with_player
from tests.support.screens import full_screen, until
from tests.support.servers import serving

pytestmark = pytest.mark.timeout(60)


def test_each_game_counts_once_by_level_weakest_first(tmp_path):
    results = BotResults(tmp_path)
    assert results.by_level(("easy", "normal", "hard")) == []
    assert record_lines(results) == ["Your record against the bots: no game finished yet."]
    assert results.add(Result("r1", "hard", 4, 60, False))
    assert results.add(Result("r2", "normal", 3, 71, True))
    assert results.add(Result("r3", "hard", 2, 55, True))
    assert not results.add(Result("r3", "hard", 2, 99, True))  # that game was counted
    levels = BotResults(tmp_path).by_level(("easy", "normal", "hard"))
    assert [(r.level, r.games, r.won, r.lost, r.average) for r in levels] == [
        ("normal", 1, 1, 0, 71.0), ("hard", 2, 1, 1, 57.5)]
    assert record_lines(results) == [
        "Your record against the bots (`castell play` games finished here):",
        "  normal  1 game · 1 won · 0 lost · 71.0 points on average",
        "  hard    2 games · 1 won · 1 lost · 57.5 points on average"]
    assert (tmp_path / "bot-results.json").stat().st_mode & 0o777 == 0o600


def test_a_damaged_file_is_no_game_and_a_damaged_entry_is_skipped(tmp_path):
    (tmp_path / "bot-results.json").write_text("{not json")
    assert BotResults(tmp_path).results() == []
    (tmp_path / "bot-results.json").write_text(json.dumps({"games": [
        {"room": "r1", "level": "easy", "seats": 2, "points": 40, "won": True},
        {"room": "r2", "level": "easy"}, "nonsense"]}))
    assert BotResults(tmp_path).results() == [Result("r1", "easy", 2, 40, True)]


def _finished(names: tuple[str, ...], bots: tuple[bool, ...]):
    """The view of a game just ended (its last turn ended in round 10), seats ``names``."""
    state = game(len(names))
    for seat, name in enumerate(names):
        state = with_player(state, seat, name=name)
    seats = len(names)
    state = attrs.evolve(state, round=10, first=1, turn=0, turns_taken=seats - 1)
    state, _ = apply(state, 0, EndTurn())
    info = RoomInfo(room="rdone", name="Anna's game", variant="normal", seats=len(names),
                    status=RoomStatus.FINISHED.value,
                    players=tuple(SeatInfo(i, n, bot=b) for i, (n, b) in enumerate(
                        zip(names, bots, strict=True))))
    return make_view(info, state)


def test_the_result_of_a_finished_view_by_the_bots_level():
    view = _finished(("Anna", "Pau·greedy", "Núria·greedy"), (False, True, True))
    assert view.scores is not None and view.winners is not None
    assert bots_level(view, 0) == "normal"  # greedy is normal's old name
    result = game_result(view, 0)
    assert result == Result("rdone", "normal", 3, view.scores[0].total, 0 in view.winners)
    assert game_result(view, None) is None
    mixed = _finished(("Anna", "Pau·easy", "Núria·hard"), (False, True, True))
    assert bots_level(mixed, 0) is None and game_result(mixed, 0) is None
    friends = _finished(("Anna", "Biel"), (False, False))
    assert game_result(friends, 0) is None  # no bots: no record against them


async def test_the_record_at_the_start_in_the_lobby_and_after_a_game(tmp_path):
    BotResults(tmp_path).add(Result("rbefore", "hard", 4, 70, True))
    async with serving() as (_, url), \
            full_screen(url, "Anna", tmp_path, guest=True, make=ResultsController) as anna:
        c = anna.controller
        assert isinstance(c, ResultsController)
        await c.start_play(2, "normal", "random", "new")
        assert anna.notes == [
            "Your record against the bots (`castell play` games finished here):",
            "  hard    1 game · 1 won · 0 lost · 70.0 points on average"]
        while c.view is None or c.view.status != RoomStatus.FINISHED:
            await until(lambda: c.view.status == RoomStatus.FINISHED or c.view.turn == c.me)
            if c.view.status != RoomStatus.FINISHED:
                await c.handle("end!")
        view = c.view
        mine = view.scores[0].total
        verdict = "won" if 0 in view.winners else "lost"
        await until(lambda: any(line.startswith("You ") for line in anna.notes))
        festivals = [line for line in anna.notes if line.startswith("Festival at ")]
        assert festivals  # round 10's festivals stay above the record
        assert anna.notes[-4:] == [
            f"You {verdict} with {mine} points against random bots.",
            "Your record against the bots (`castell play` games finished here):",
            f"  random  1 game · {int(verdict == 'won')} won · {int(verdict == 'lost')} lost "
            f"· {mine:.1f} points on average",
            "  hard    1 game · 1 won · 0 lost · 70.0 points on average"]
        assert [r.room for r in BotResults(tmp_path).results()] == ["rbefore", view.room]
        await c.handle("leave")
        assert c.lobby_lines()[-3:] == anna.notes[-3:]


async def test_no_record_is_shown_over_the_first_game_before_any_game_finished(tmp_path):
    async with serving() as (_, url), \
            full_screen(url, "Anna", tmp_path, guest=True, make=ResultsController) as anna:
        c = anna.controller
        await c.start_play(2, "normal", "random", "new")
        assert c.mode == "game" and not any("record" in line for line in anna.notes)
        await c.handle("leave")
        assert "Your record against the bots: no game finished yet." in c.lobby_lines()
