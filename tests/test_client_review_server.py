"""A server's review in the client (docs/review.md): `review` on the game-over screen and
`review N` in the lobby, through the whole full-screen client (Controller, Session,
TerminalScreen) against a real server: the progress bar drawn from the server's
``review_progress`` pushes on the status line, then the review viewer over the board, its
keys, and `q` back; the second time read from the server's store (no progress, no
computation). The plain client prints the review as text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import CastellServer
from shared.review import Budget
from shared.view import RoomStatus
from tests.support.screens import board, full_screen, plain, status_line, until
from tests.support.servers import serving

pytestmark = pytest.mark.timeout(60)

SMALL = Budget(samples=1, candidates=2)


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[CastellServer, str]]:
    async with serving(review_samples=SMALL.samples,
                       review_candidates=SMALL.candidates) as (server, url):
        yield server, url


def reviews(server: CastellServer, source: str) -> float:
    assert server.metrics is not None
    return server.metrics.registry.get_sample_value("castell_reviews_total",
                                                   {"source": source}) or 0.0


async def test_review_on_the_game_over_screen_then_review_n_in_the_lobby(served, tmp_path):
    server, url = served
    async with full_screen(url, "Anna", tmp_path / "anna") as anna:
        ctrl = anna.controller
        await ctrl.handle("create Dissabte seats=2")
        await ctrl.handle("bot easy")
        await until(lambda: ctrl.view is not None and len(ctrl.view.players) == 2)
        # no help during a game
        await ctrl.handle("start")
        await until(lambda: ctrl.view.status == RoomStatus.PLAYING)
        await ctrl.handle("review")
        assert "`review` comes once the game is over" in status_line(anna)
        for _ in range(12):  # one `end!` a round: the bot (no delay) plays the rest
            await until(lambda: ctrl.view.status == RoomStatus.FINISHED or ctrl.view.turn == 0)
            if ctrl.view.status == RoomStatus.FINISHED:
                break
            await ctrl.handle("end!")
        await until(lambda: ctrl.view.status == RoomStatus.FINISHED)
        assert "`review` goes over it" in status_line(anna)

        # `review`: the status line draws the progress bar as the pushes come
        bars: list[str] = []
        drawn = anna.review_progress

        def watched(name: str, done: int, total: int) -> None:
            drawn(name, done, total)
            bars.append(status_line(anna))

        anna.review_progress = watched  # type: ignore[method-assign]
        await ctrl.handle("review")
        total = len(bars) - 1
        assert total >= 20  # ten rounds of two seats: a push at 0, then one a turn
        assert bars[0].startswith("reviewing 'Dissabte'") and bars[0].endswith(
            f" 0/{total} turns")
        assert bars[total // 2].endswith(f" {total // 2}/{total} turns")
        assert "━" in bars[total // 2] and bars[-1].endswith(f" {total}/{total} turns")
        # then the viewer, over the board: the summary, turns with n/p, the charts, q back
        assert anna.viewer is not None
        shown = board(anna)
        assert "review 'Dissabte' · summary" in shown and "accuracy" in shown
        # (the key `n` as the screen binds it: the viewer's while it is open)
        # (of the keys bound to `n`, the one that acts now: later ones, a replay's, are off)
        binding = next(b for b in reversed(anna.app.key_bindings.get_bindings_for_keys(("n",)))
                       if b.filter())
        binding.handler(None)
        assert f"turn 1/{total}" in board(anna)
        assert anna.review_key("n") and f"turn 2/{total}" in board(anna)
        assert anna.review_key("p") and f"turn 1/{total}" in board(anna)
        assert anna.review_key("c") and "chart 1/" in board(anna)
        assert anna.review_key("q") and anna.viewer is None
        assert "review 'Dissabte'" not in board(anna) and not binding.filter()
        assert reviews(server, "computed") == 1

        # `review N` from the lobby: the game of `games`, read from the store this time
        await ctrl.handle("leave")
        await ctrl.handle("games")
        bars.clear()
        await ctrl.handle("review 1")
        assert anna.viewer is not None and "review 'Dissabte' · summary" in board(anna)
        assert bars == []  # no progress: nothing was computed
        assert (reviews(server, "computed"), reviews(server, "stored")) == (1, 1)
        await ctrl.handle("review 7")
        assert "no game number 7" in status_line(anna)


async def test_the_plain_client_prints_the_review_with_its_progress(served, tmp_path):
    _, url = served
    async with full_screen(url, "Anna", tmp_path / "anna") as anna:
        ctrl = anna.controller
        await ctrl.handle("create Dissabte seats=2")
        await ctrl.handle("bot easy")
        await until(lambda: ctrl.view is not None and len(ctrl.view.players) == 2)
        await ctrl.handle("start")
        for _ in range(12):
            await until(lambda: ctrl.view.status == RoomStatus.FINISHED or ctrl.view.turn == 0)
            if ctrl.view.status == RoomStatus.FINISHED:
                break
            await ctrl.handle("end!")
        await until(lambda: ctrl.view.status == RoomStatus.FINISHED)
    # the same account (its key kept under tmp_path / "anna"), in the plain client
    printed = await plain(url, "Anna", tmp_path / "anna", "games\nreview 1\nquit\n")
    assert "the server reviews 'Dissabte':" in printed
    assert "turns reviewed" in printed
    assert "accuracy" in printed and "points after round" in printed
    assert printed.count("'s turn (") >= 20  # every turn, in words
