"""What a player reads in the flows the play-tests walked through: festival results when the
prizes ran out, ``hint`` and ``hint deep`` with the training still open, the end-of-turn
question, the rules pages, the waiting room's and the spectator's hints, a name clash, the
replay's step line, the shell after a seat was taken back, ``castell account export``, the
lobby's and ``games``' lines, and the host's console. Each through the real client in this
process (the full-screen client over a real server, or a view drawn by ``render``) with the
rules engine making every position it shows; the server's words through a real server; a
pty only for the replay's rows."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import attrs
import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from rich.cells import cell_len

from client.cli import main as cli_main
from client.cli import run_screen
from client.control.commands import CommandError, Rules, parse
from client.control.controller import Controller
from client.local.keys import KeyStore, new_key, recovery_line
from client.local.seats import SeatStore
from client.modes.replay import Viewer, step_text, steps_of
from client.net.net import GameClient, ServerError
from client.net.session import Session
from client.screens import app, rulebook
from client.screens.app import TerminalScreen
from client.screens.render import event_lines, render_plain
from server.ops.admin_cli import main as admin_main
from server.store import open_store
from shared import messages as m
from shared.board import ADJACENT, REGION_INDEX, REGIONS, wheel_segments, wheel_tile_index
from shared.codec import event_to_wire
from shared.festival import resolve
from shared.solver import FestivalGoal, best_tower, best_with_training
from shared.state import Festival, GameState, Prizes, Skills
from shared.tower import festival_score
from shared.view import RoomStatus, make_view
from tests.support.games import game, showing, with_player
from tests.support.rooms import room_info
from tests.support.screens import Sized, full_screen, screen, status_line, until
from tests.support.servers import serving
from tests.support.terminal import Terminal
from tests.test_client_cli import _recorded_game

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


# A game at a chosen position, through the whole client ----------------------------------


@contextlib.asynccontextmanager
async def _playing(server, url: str, home: Path, change: Callable[[GameState], GameState],
                   rows: int = 60) -> AsyncIterator[TerminalScreen]:
    """Anna (a guest) in seat 0 of a started 2-seat game against a bot, at her turn in the
    position ``change`` makes of the game, taken back with ``leave`` and ``resume`` so that
    the client is sent it as any returning player is."""
    async with full_screen(url, "Anna", home, guest=True, rows=rows) as anna:
        ctrl = anna.controller
        for line in ("create Friday night seats=2", "bot", "start"):
            await ctrl.handle(line)
        await until(lambda: ctrl.view is not None and ctrl.view.turn == 0)
        room = server.lobby.rooms[ctrl.session.room].room
        room.state = change(attrs.evolve(room.state, turn=0, done=()))
        await ctrl.handle("leave")
        await ctrl.handle("resume")
        wanted = room.state
        await until(lambda: ctrl.view is not None and ctrl.view.round == wanted.round
                    and ctrl.mode == "game")
        yield anna


def _figueres(state: GameState, *, region: str = "gir", round_: int = 10,
              **anna: object) -> GameState:
    """Round ``round_`` (earlier festivals held), Figueres (gir, size 6) at its end, Anna's
    pawn in ``region`` and her player changed by ``anna``. The region has castellers to
    recruit: where the deal (or the bot's turn before Anna's) left it empty, two come from
    the bag, as a refill would bring them."""
    figueres = Festival(round_, "gir", "Figueres", "II", 6)
    festivals = (*(attrs.evolve(f, done=True) for f in state.festivals if f.round < round_),
                 figueres)
    state = attrs.evolve(state, round=round_, festivals=festivals)
    if not state.region_castellers(region):
        regions = list(state.regions)
        regions[REGION_INDEX[region]] = state.bag[:2]
        state = attrs.evolve(state, regions=tuple(regions), bag=state.bag[2:])
    return with_player(state, 0, region=region, **anna)


# hint: the training still open this turn counts ----------------------------------------

#: A team whose best festival tower for a 6 scores 5 with balance 1, and 6 with balance 2.
TEAM = (9, 9, 9, 7, 7, 6, 3, 2)


def test_the_best_tower_counts_a_training_still_open():
    now = best_tower(TEAM, Skills(balance=1), FestivalGoal(6))
    assert now is not None and now.score == 5
    found, skill = best_with_training(TEAM, Skills(balance=1), FestivalGoal(6),
                                      ["strength", "balance"])
    assert skill == "balance" and found is not None and found.score == 6
    assert found.levels == ((9, 9, 9), (7, 7), (6,), (3,), (2,))
    # nothing better to train: the tower as the skills stand, and no training named
    assert best_with_training(TEAM, Skills(balance=1), FestivalGoal(6), ["width"]) == (now, None)
    # a skill at rank 3 cannot go higher (§4)
    assert best_with_training(TEAM, Skills(balance=3), FestivalGoal(6), ["balance"])[1] is None


async def test_hint_names_the_training_that_makes_a_better_festival_tower(server, url,
                                                                          tmp_path):
    def position(state: GameState) -> GameState:
        state = showing(_figueres(state, team=TEAM, skills=Skills(balance=1), tower=()),
                        "all", "balance")
        return showing(state, "gir", "width")

    async with _playing(server, url, tmp_path, position) as anna:
        await anna.controller.handle("hint")
        said = "\n".join(anna.notes)
        assert ("festival at the end of this round: Figueres (gir), size 6 — your pawn is "
                "there") in said, said
        assert ("  best tower: train balance first (`train all`), then "
                "`build 9 9 9 / 7 7 / 6 / 3 / 2` scores 6; without it your team can enter "
                "with 5 at most") in said, said
        # and the hint holds: the training and the tower it names are what the rules allow
        await anna.controller.handle("train all")
        await until(lambda: anna.controller.view.players[0].skills.balance == 2)
        await anna.controller.handle("build 9 9 9 / 7 7 / 6 / 3 / 2")
        await until(lambda: len(anna.controller.view.players[0].tower) == 5)
        await anna.controller.handle("hint")
        assert "  your tower already scores 6, the best your team can do" in anna.notes


@pytest.mark.parametrize("last", [False, True], ids=["first-to-play", "last-to-play"])
async def test_hint_deep_says_what_the_line_aims_at(server, url, tmp_path, last):
    def position(state: GameState) -> GameState:
        state = _figueres(state, team=TEAM, skills=Skills(balance=2), tower=())
        # The bot has no castellers: however the deal went, nobody can contest Figueres,
        # so its festival is the line to play (with a strong rival team, which some deals
        # give, the play-outs may rightly prefer another line: one deal in twelve did)
        state = with_player(state, 1, team=(), tower=())
        # Anna plays first in the round, or last: then her end of turn holds the festival
        return attrs.evolve(state, first=1 if last else 0, turns_taken=1 if last else 0)

    async with _playing(server, url, tmp_path, position) as anna:
        await anna.controller.handle("hint deep")
        said = anna.notes
        why = said[said.index("why:") + 1:]
        # the festival of this round it plays for, the tower it builds and what it scores
        # there; the prize it expects, or (its turn ending the round) the prize it takes
        then = (r"and it is held at once: trophy" if last else
                r"1st of the towers standing there now \(a trophy, 5 points; its best tower "
                r"from 0 to \2 \(\+\2\)\)")
        aims = [found for line in why if (found := re.fullmatch(
            r"  - the festival at Figueres \(gir\) at the end of this round, size 6: "
            rf"`(build [\d /]+)` scores (\d+) there, {then}", line))]
        assert len(aims) == 1, "\n".join(said)
        build, score = aims[0].groups()
        assert any(re.fullmatch(rf"  \d+\. {build}", step)  # a step of the line shown
                   for step in said[1:said.index("why:")])
        levels = tuple(tuple(map(int, level.split())) for level in
                       build.removeprefix("build ").split(" / "))
        assert festival_score(levels, 6) == int(score) >= 6
        if last:  # what it gains at once (§9: its best tower and the trophy, at least)
            gain = next(found for line in why if (found := re.fullmatch(
                r"  - its score now goes from (\d+) to (\d+) \(\+\d+\)", line)))
            assert int(gain[2]) - int(gain[1]) >= int(score) + 5
        # and what its play-outs expect
        assert re.fullmatch(r"  - (played out \d+ times? to the end of the game: on average "
                            r"\d+\.\d points (ahead of|behind) the best rival|every plan it "
                            r"weighed came to this line: nothing to play out)", why[-1]), \
            "\n".join(said)


# The end of a turn: no "you have not moved" at one's festival; tokens that would waste ---


async def _question(anna: TerminalScreen) -> str:
    """Type ``end`` and return the question it asks, answered "no"."""
    asking = asyncio.get_running_loop().create_task(anna.controller.handle("end"))
    await until(lambda: anna._asking is not None or asking.done())
    if anna._asking is None:
        await asking
        return ""
    question, answer = anna._asking
    # a question too long for the input line is whole on the status line
    whole = anna._asked or question
    answer.set_result("n")
    await asking
    return whole


async def test_end_does_not_ask_to_move_off_a_festival_and_counts_the_tokens(server, url,
                                                                             tmp_path):
    def position(state: GameState) -> GameState:
        return _figueres(state, round_=9, tokens=3)

    async with _playing(server, url, tmp_path, position) as anna:
        question = await _question(anna)
        # her pawn is at this round's festival: staying is the point, moving is not asked
        assert question.startswith("you have not recruited or trained; 3 tokens left for 1 "
                                   "more turn (unspent ones score nothing): end anyway?"), \
            question


async def test_end_away_from_a_festival_asks_to_move_and_leaves_spendable_tokens_alone(
        server, url, tmp_path):
    def position(state: GameState) -> GameState:
        return _figueres(state, region="ebr", round_=9, tokens=1)

    async with _playing(server, url, tmp_path, position) as anna:
        question = await _question(anna)
        assert question.startswith("you have not moved, recruited or trained: end anyway?"), \
            question


async def test_end_in_the_last_round_names_the_tokens_alone(server, url, tmp_path):
    def position(state: GameState) -> GameState:
        state = _figueres(state, tokens=2)
        return attrs.evolve(state, done=("recruit", "train"))

    async with _playing(server, url, tmp_path, position) as anna:
        question = await _question(anna)
        assert question.startswith("2 tokens left, and unspent ones score nothing: end "
                                   "anyway?"), question


# The rules pages: lists on their own lines, every § explained, the missing topics -------


def test_a_numbered_list_keeps_one_line_an_item():
    scoring = rulebook.rules_page("scoring").splitlines()
    items = [line for line in scoring if re.match(r"\d+\. ", line)]
    assert [line[:2] for line in items] == ["1.", "2.", "3.", "4.", "5."], scoring
    assert items[0] == "1. Best tower — your best festival score."
    assert items[1].startswith("2. Diversity — the regions in which you took anything")
    towers = rulebook.rules_page("towers").splitlines()
    assert "3. each level has fewer castellers than the level below;" in towers
    # an item's wrapped lines join that item, not the next one
    assert "2. After rounds 2, 4, 6 and 8, the refill: each region, in board order, draws " \
           "castellers from the bag until it holds its refill level again (5 with 4 players, " \
           "4 with 3, 3 with 2), or until the bag is empty." in rulebook.rules_page("round")


def test_every_mark_of_a_section_is_named_at_the_foot_of_its_page():
    book = (Path(__file__).parents[1] / "docs" / "rules.md").read_text(encoding="utf-8")
    titles = dict(re.findall(r"^## §(\d+) (.+)$", book, re.M))
    assert {int(n): t for n, t in titles.items()} == \
        {n: title for n, (title, _) in rulebook.SECTIONS.items()}  # the book's own titles
    for topic in rulebook.topics():
        page = rulebook.rules_page(topic)
        marks = sorted({int(n) for n in re.findall(r"§(\d+)", page)})
        assert marks, topic
        foot = page.splitlines()[-1]
        assert foot.startswith("Sections named here, of the full rule book (docs/rules.md): ")
        for n in marks:
            assert f"§{n} {rulebook.SECTIONS[n][0]}" in foot, (topic, foot)
    assert "(§4) names the section of the full rule book" in rulebook.rules_page(None)
    # and a section's number opens its page
    assert parse("rules 7") == Rules("towers") and parse("rules §8") == Rules("round")
    with pytest.raises(CommandError, match=r"§3 \(Setup\) has no short page"):
        parse("rules 3")


def test_the_map_page_lists_each_region_s_neighbours_as_the_rules_do():
    page = rulebook.rules_page("map")
    listed = dict(re.findall(r"^- `(\w+)` — (.+)$", page, re.M))
    assert set(listed) == set(REGIONS)
    for region, neighbours in listed.items():
        assert neighbours.split(", ") == [r for r in REGIONS if r in ADJACENT[region]]


def test_the_wheel_page_says_which_way_it_turns():
    page = rulebook.rules_page("wheel")
    order = re.search(r"in the wheel's order ((?:`\w+`, )+`\w+`)", page)
    assert order is not None, page
    segments = re.findall(r"`(\w+)`", order.group(1))
    assert tuple(segments) == wheel_segments("normal")
    # "next round each segment shows the tile the next segment shows now" (§4)
    for i in range(8):
        for round_ in range(1, 10):
            assert wheel_tile_index(i, round_ + 1) == wheel_tile_index((i + 1) % 8, round_)
    for topic in ("skills", "round"):
        assert rulebook.rules_page(topic)
    assert parse("rules sk") == Rules("skills")


# The waiting room: what a rated room, a spectator and a name clash are told --------------


async def test_a_rated_room_offers_no_bots_and_says_what_its_question_mark_means(
        tmp_path: Path):
    async with open_store(tmp_path / "castell.sqlite3") as store, \
            serving(store) as (_, url), full_screen(url, "Anna", tmp_path / "anna") as anna:
        await anna.controller.start()
        await anna.controller.handle("create Lliga seats=2 rated")
        lines = anna.controller.room_lines()
        assert lines[1] == ("Rated game (accounts only, no bots): Anna 1500? (? provisional: "
                            "too few rated games, or opponents, to be sure yet)"), lines
        assert lines[-1] == ("1 seat free: wait for players (a rated game seats no bots); "
                             "`start` once every seat is taken"), lines
        anna.message = None  # the hint line, not the last news
        status = status_line(anna)
        assert "`bot`" not in status and "`fill`" not in status, status
        assert "`start`" in status and "`chat`" in status, status


async def test_a_spectator_of_a_waiting_room_is_offered_what_a_spectator_can_do(
        server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path / "anna", guest=True) as anna, \
            full_screen(url, "Carme", tmp_path / "carme", guest=True) as carme:
        await anna.controller.handle("create Friday night seats=3")
        await carme.controller.handle("list")
        await carme.controller.handle("watch 1")
        await until(lambda: carme.controller.mode == "room" and carme.controller.view is not None)
        assert carme.controller.me is None
        assert "You are watching. `leave` returns to the lobby." in carme.controller.room_lines()
        carme.message = None
        status = status_line(carme)
        assert status.strip() == "You are watching. `chat` · `help` · `leave` for the lobby", \
            status
        # the player of an unrated room is still offered bots
        anna.message = None
        assert "`bot` · `fill` · `start`" in status_line(anna)


async def test_a_name_clash_names_the_one_already_in_the_room(connect):
    anna = await connect("Anna")
    made = await anna.request(m.CreateRoom, name="Friday night", seats=3)
    other = await connect("ANNA")
    with pytest.raises(ServerError) as caught:
        await other.request(m.JoinRoom, room=made.room)
    assert caught.value.code == "name_taken"
    assert caught.value.message.startswith(
        "someone in room 'Friday night' is already called 'Anna' ('ANNA' counts as the same "
        "name): "), caught.value.message


# The replay at 80x24: the step's line says what it did -----------------------------------


def test_the_replay_says_what_each_step_did_under_the_board_at_80x24():
    record = _recorded_game(5)
    viewer = Viewer(record, color=False)
    steps = steps_of(record)
    viewer.go(3)
    body = viewer.body(80, 22)  # 24 rows: the board, the step's line, the footer
    assert len(body) == 22 and viewer.hidden > 0  # the board is taller: the log is below
    line = viewer.step_line(80)
    assert cell_len(line) <= 80
    said = event_lines(steps[3].view, steps[3].events)
    assert said and line.strip().startswith(said[0].strip()[:70]), (line, said)
    assert viewer.footer(80).startswith(" replay 'Friday night' · step 3/")
    # the setup says what it is, and a long step is cut with a mark, not wrapped
    viewer.go(0)
    assert viewer.step_line(80).strip().startswith("the board as the game was set up")
    festival = next(i for i, step in enumerate(steps)
                    if any(e.get("kind") == "festival" for e in step.events))
    viewer.go(festival)  # the end of a turn, the round's festival, the next round: one line
    line = viewer.step_line(80)
    assert "ended the turn · Festival at " in line, line
    assert line.endswith("…") and cell_len(line) == 80, line


@pytest.mark.timeout(60)
def test_the_replay_in_a_terminal_of_80x24_shows_the_step_line(tmp_path):
    record = _recorded_game(5)
    path = tmp_path / "game.json"
    path.write_text(record.to_json())
    said = step_text(steps_of(record)[3])
    term = Terminal(["replay", str(path)], tmp_path, columns=80, rows=24)
    try:
        term.wait_for(r"the board as the game was set up")
        term.type("nnn")
        term.wait_for(r"step 3/")
        rows = term.text().splitlines()
        assert rows[-2].strip() == said, rows[-3:]
        assert rows[-1].startswith(" replay 'Friday night' · step 3/"), rows[-3:]
        term.type("q")
    finally:
        term.close()


# The shell and the lobby's lines ----------------------------------------------------------


async def test_a_full_screen_displaced_by_another_castell_says_why_on_the_shell(
        server, url, tmp_path, monkeypatch, capsys):
    """The whole full-screen client (run_screen, as ``castell`` runs it) on a pipe: another
    client of the same player takes the seat back; the first closes by itself (after a
    pause for reading, set to nothing here) and tells the shell why."""
    monkeypatch.setattr(app, "SEAT_LOST_PAUSE", 0.0)
    state = tmp_path / "state"
    session = Session(url, "Anna", seats=SeatStore(state), first_retry=0.05, max_retry=0.2)
    await session.open()
    playing = asyncio.Event()

    async def startup(ctrl: Controller) -> None:
        for line in ("create Friday night seats=2", "bot", "start"):
            await ctrl.handle(line)
        playing.set()

    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(100, 40)):
        running = asyncio.create_task(run_screen(session, startup, plain=False, color=False))
        await asyncio.wait_for(playing.wait(), 10)
        async with full_screen(url, "Anna", state) as second:
            await second.controller.start(resume=True)
            assert second.controller.mode == "game"
            code = await asyncio.wait_for(running, 10)
    assert code == 1
    shell = capsys.readouterr().out.splitlines()
    assert shell[-1] == ("Your seat was taken back by another connection (another castell "
                         "playing it?): this one has closed."), shell


def test_an_exported_account_is_said_to_be_a_password(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    url = "ws://127.0.0.1:8765"
    key = new_key()
    KeyStore().put(url, key)
    assert cli_main(["account", "export", url]) == 0
    out, err = capsys.readouterr()
    assert out == recovery_line(url, key) + "\n"  # alone on stdout: a file, or a pipe, takes it
    assert "Treat it as a password" in err and "whoever has it plays as you" in err
    # and what it says works: the line, imported elsewhere, is the same key
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "elsewhere"))
    assert cli_main(["account", "import", out.strip()]) == 0
    assert KeyStore().get(url) == key


async def _play_out(ctrl: Controller) -> None:
    """Seat 0 ends each of its turns until the game is over (10 rounds)."""
    while ctrl.view.status != RoomStatus.FINISHED:
        await until(lambda: ctrl.view.turn == 0 or ctrl.view.status == RoomStatus.FINISHED)
        if ctrl.view.status != RoomStatus.FINISHED:
            version = ctrl.session.state.version
            await ctrl.handle("end!")
            await until(lambda v=version: ctrl.session.state.version > v)


async def test_the_lobby_lists_finished_games_apart_from_the_open_rooms(server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path / "anna", guest=True) as anna, \
            full_screen(url, "Biel", tmp_path / "biel", guest=True) as biel:
        ctrl = anna.controller
        for line in ("create Over seats=2", "bot", "start"):
            await ctrl.handle(line)
        await _play_out(ctrl)  # Anna ends each turn: 10 rounds
        await ctrl.handle("leave")
        await biel.controller.handle("create Open seats=3")  # Biel waits in it
        await ctrl.handle("list")
        lines = ctrl.lobby_lines()
        head = lines.index(next(line for line in lines if line.startswith("Open rooms on ")))
        over = lines.index("Finished games (`watch N` shows how one ended):")
        assert re.fullmatch(r" +1\. Open — 1/3 seats .* waiting .*", lines[head + 1]), lines
        assert head < over and re.fullmatch(r" +2\. Over — 2/2 seats .* finished .*",
                                            lines[over + 1]), lines
        assert "Games under way" not in "\n".join(lines)


async def test_games_says_a_full_rematch_waits_for_its_start(tmp_path: Path):
    async with open_store(tmp_path / "castell.sqlite3") as store, \
            serving(store) as (_, url), full_screen(url, "Anna", tmp_path / "anna") as anna:
        ctrl = anna.controller
        await ctrl.start()
        assert ctrl.session.account
        for line in ("create Torre seats=2", "bot", "start"):
            await ctrl.handle(line)
        finished = ctrl.session.room
        await _play_out(ctrl)
        await ctrl.handle("rematch")  # Anna and the bot again: every seat is taken
        await until(lambda: ctrl.session.room != finished and ctrl.view is not None
                    and len(ctrl.view.players) == 2)
        rematch = ctrl.session.room
        await ctrl.refresh_games()  # what `games` shows
        line = next(line for line in ctrl.game_lines() if line.endswith(f"id {rematch}"))
        assert "every seat taken · waiting for the start" in line, line
        assert "waiting for players" not in line


# The host's console -----------------------------------------------------------------------


async def test_the_host_console_answers_in_lines_and_a_room_closed_twice_says_so(
        short_dir, capsys):
    sock = str(short_dir / "admin")

    errors: list[str] = []

    async def admin(*args: str) -> tuple[int, list[str]]:
        code = await asyncio.to_thread(admin_main, ["--socket", sock, *args])
        said = capsys.readouterr()
        errors.append(said.err)
        return code, said.out.splitlines()

    async with serving(admin_socket=sock) as (_, url):
        anna = await GameClient.connect(url)
        try:
            await anna.hello("Anna")
            made = await anna.request(m.CreateRoom, name="Friday night", seats=3)
            await anna.request(m.AddBot, level="hard")
            code, rooms = await admin("rooms")
            assert code == 0 and len(rooms) == 1, rooms
            assert re.fullmatch(rf"{made.room}  'Friday night'  waiting · Anna, \S+ · "
                                r"1 connected · idle \d+(\.\d+)? s", rooms[0]), rooms
            code, shown = await admin("show", made.room)
            assert code == 0
            assert not any(mark in line for line in shown for mark in "[]{}"), shown
            seats = shown.index("seats:")
            assert shown[seats + 1] == "  0  Anna (connected)", shown
            assert re.fullmatch(r"  1  \S+ \(bot hard\)", shown[seats + 2]), shown
            assert shown[seats + 3] == "  2  free", shown
            assert "spectators: none" in shown and "private: no" in shown, shown
            assert await admin("close", made.room, "--reason", "spam") == \
                (0, [f"room {made.room} closed"])
            # closed already: said so, with why, not as a room nobody serves
            assert await admin("close", made.room) == \
                (0, [f"room {made.room} is already closed (spam)"])
            code, _ = await admin("close", "rnothere0")
            assert code == 1
            assert "no room rnothere0 is served here" in errors[-1]
        finally:
            await anna.close()
