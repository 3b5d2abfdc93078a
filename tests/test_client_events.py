"""The game screen at 80x24, the size most terminals open at: the event lines (what the last
turns did, the player's own actions echoed, the last festival's result and the server's word
kept until the player's next action, the chat, a marker of the chat they leave out), the
player's own panel on the first page, a question too long for the input line, the framed Tab
menu, Home after PgDn, whole names in the Regions panel, who watches in the header; and at
100x40 the layout as it was, the event lines filling what it leaves.

Words and choices are tested on the event lines' own functions with sample views; the screen
through the real full-screen client (Controller, Session, TerminalScreen) fed state pushes,
drawn to an output that draws nothing (:mod:`tests.support.screens`). Three tests run the real
``castell`` in a pseudo-terminal, where what the terminal shows is the subject: a bot's whole
turn at the player's next turn, the festival's result kept when a bot opens the round, and
chat seen in a game.
"""

from __future__ import annotations

import asyncio
import copy
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.application.current import set_app
from prompt_toolkit.buffer import CompletionState
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Screen as Canvas
from prompt_toolkit.layout.screen import WritePosition
from websockets.sync.client import connect as ws_connect
from websockets.typing import Subprotocol

from client.control.controller import Controller
from client.net.session import RoomState, Session
from client.screens import eventline
from client.screens.app import ANSWER_ROOM, TerminalScreen
from client.screens.eventline import action_brief, entries, pick
from server.ops.export import record_file
from server.store import open_store
from shared import describe as d
from shared import messages as m
from shared.actions import EndTurn, action_fields
from shared.codec import encode
from shared.events import ActionTaken, FestivalResolved
from shared.record import GameRecordFile
from shared.replay import record_steps
from tests.support import sample_views as sv
from tests.support.screens import Sized, notes_pane, screen, status_line
from tests.support.terminal import Terminal, castell_server

pytestmark = pytest.mark.timeout(120)

ESC = "\x1b"
PAGE_DOWN = "\x1b[6~"


def act(seat: int, kind: str, **fields: Any) -> dict[str, Any]:
    return sv.action_event(seat, kind, **fields)


def bot_turn(seat: int = 1) -> list[dict[str, Any]]:
    """A bot's whole turn as the server tells it, event by event."""
    return [
        {"kind": "turn", "seat": seat},
        act(seat, "move", region="bcn"),
        act(seat, "train", choice="region"),
        {"kind": "trained", "seat": seat, "tile": "balance"},
        act(seat, "recruit", sizes=[7, 4]),
        act(seat, "build", levels=[[7, 7], [6, 6], [5]]),
        act(seat, "special", effect="perform", tile="lp05"),
        {"kind": "trained", "seat": seat, "tile": "special"},
        {"kind": "performed", "seat": seat, "tile": "lp05", "region": "bcn", "tokens": 1},
        act(seat, "end_turn"),
    ]


def words(found: Sequence[eventline.Entry]) -> list[str]:
    return ["".join(p.text for p in e.parts) for e in found]


def shown(area: eventline.Area) -> list[str]:
    return [line.plain.rstrip() for line in area.lines]


# The event lines' words -------------------------------------------------------------------


def test_a_turn_is_one_line_saying_each_of_its_actions_in_a_few_words():
    view = sv.typed(sv.with_names(sv.two_seat(), {1: "Bru·greedy"}))
    assert words(entries(view, bot_turn(), 0)) == [
        "Bru: moved to bcn, trained balance, recruited 7 4, built 7 7/6 6/5, special: perform "
        "lp05, completed lp05 (+1 token)"]
    # a recruit said without the move that led there names its region
    assert words(entries(view, [{**act(1, "recruit", sizes=[9]), "at": "alt"}], 0)) == [
        "Bru: recruited 9 in alt"]
    # a turn the timer ended, and one that did nothing
    ran_out = [{"kind": "turn", "seat": 1}, {"kind": "timeout", "seat": 1}, act(1, "end_turn"),
               {"kind": "turn", "seat": 0}, act(0, "end_turn")]
    assert words(entries(view, ran_out, 0)) == ["Bru: ran out of time", "You: passed"]
    # a turn the server ended because the host removed the player: no clock involved
    kicked = [{"kind": "turn", "seat": 1}, {"kind": "timeout", "seat": 1, "reason": "removed"},
              act(1, "end_turn")]
    assert words(entries(view, kicked, 0)) == ["Bru: turn skipped (removed by the host)"]
    assert d.plain(d.event_parts(view, d.fold_training(kicked)[1])) == (
        "Bru·greedy's turn skipped (removed by the host)")


def test_the_players_own_actions_are_echoed_and_one_taken_back_is_said_instead():
    view = sv.typed(sv.two_seat())
    mine = [{"kind": "turn", "seat": 0}, act(0, "move", region="gir"),
            act(0, "recruit", sizes=[8, 3])]
    assert words(entries(view, mine, 0))[-1] == "You: moved to gir, recruited 8 3"
    undone = [*mine, {"kind": "undone", "seat": 0, "action": {"kind": "recruit", "sizes": [8, 3]}}]
    assert words(entries(view, undone, 0))[-1] == "You: moved to gir, took back: recruit 8 3"
    # a spectator reads the same turn under the player's name
    assert words(entries(view, mine, None))[-1] == "Anna: moved to gir, recruited 8 3"


def test_each_festival_of_a_round_is_an_entry_kept_until_the_players_next_action():
    view = sv.typed(sv.with_names(sv.two_seat(), {1: "Bru·greedy"}))
    held = [act(0, "end_turn"),
            sv.festival_event("tar", "Valls", 6, [(1, 9, "trophy", True), (0, 8, "medal", False)]),
            sv.festival_event("gir", "Girona", 3, []),
            {"kind": "round", "round": 5, "first": 1}, *bot_turn()]
    found = entries(view, held, 0)
    assert words(found) == [
        "You: passed",
        "Festival at Valls (tar), size 6: Bru 9 trophy + size token, Anna 8 medal",
        "Festival at Girona (gir), size 3: nobody took part",
        words(entries(view, bot_turn(), 0))[0]]
    # in fewer words, for a narrow screen
    assert "".join(p.text for p in found[1].short) == (
        "Valls festival (tar) size 6: Bru 9 trophy+size, Anna 8 medal")
    assert [e.pinned for e in found] == [False, True, True, False]
    # the player acts: the result is no longer kept
    after = entries(view, [*held, {"kind": "turn", "seat": 0}, act(0, "move", region="gir")], 0)
    assert not after[1].pinned and not after[2].pinned
    # a spectator's: until a turn ends after it
    assert not entries(view, held, None)[1].pinned
    assert entries(view, held[:4], None)[1].pinned


def test_the_newest_line_comes_first_then_the_kept_ones_and_a_long_one_is_cut():
    view = sv.typed(sv.with_names(sv.two_seat(), {1: "Bru·greedy"}))
    events = [sv.festival_event("tar", "Valls", 6, [(1, 9, "trophy", True)]),
              {"kind": "chat", "seat": 0, "name": "Anna", "text": "bona sort"},
              *bot_turn()]
    found = entries(view, events, 0)
    two = shown(pick(found, 80, 2, me=0))
    # the festival kept on the first line, the bot's turn (newest, played since the
    # player's last action) in its short words on the second, rather than cut
    assert two[0] == "Festival at Valls (tar), size 6: Bru 9 trophy + size token"
    assert two[1] == "Bru: to bcn, built 7 7/6 6/5, lp05 done"
    # a turn before the player's last action is no longer fresh: cut when it must be
    seen = entries(view, [*events, act(0, "move", region="gir")], 0)
    cut = shown(pick(seen, 80, 2, me=0))
    assert cut[0].startswith("Bru: moved to bcn, trained balance") and cut[0].endswith("…")
    assert len(cut[0]) <= 80 and cut[1] == "You: moved to gir"
    three = shown(pick(found, 80, 3, me=0))  # room for the whole turn: all of it
    assert three[0].startswith("Festival at Valls")
    assert " ".join(three[1:]) == words(found)[-1]
    # nothing kept: older lines fill what the newest leaves
    plain = entries(view, [{"kind": "chat", "seat": 0, "name": "Anna", "text": "hi"},
                           act(1, "move", region="bcn")], 0)
    assert shown(pick(plain, 80, 2, me=0)) == ["Anna: hi", "Bru: moved to bcn"]


def test_a_chat_line_left_out_unread_is_counted_in_a_marker_of_its_own():
    view = sv.typed(sv.two_seat())
    events = [{"kind": "chat", "seat": 1, "name": "Bru", "text": "bona sort"},
              {"kind": "chat", "seat": None, "name": "Carme", "text": "hola"},
              *bot_turn(), {"kind": "turn", "seat": 0}, act(0, "move", region="gir")]
    found = entries(view, events, 0)
    area = pick(found, 80, 2)
    assert area.mark == "chat: 2 unread (F2)" and area.hidden == [0, 1]
    # never over the turn's words: those lines are the turn's alone
    assert not any("unread" in line for line in shown(area))
    assert shown(area)[0].startswith("Bru: moved to bcn")
    # on a line of its own when the caller has no other place for it
    own = pick(found, 80, 3, mark_row=True)
    assert shown(own)[0] == "── chat: 2 unread (F2) ──"
    assert shown(own)[1:] == shown(area)
    # read once the player has had them on screen (the log, or a line typed while shown)
    assert not pick(found, 80, 2, unread_from=2).hidden
    # the player's own chat is never unread
    own = entries(view, [{"kind": "chat", "seat": 0, "name": "Anna", "text": "hi"},
                         *bot_turn(), act(0, "move", region="gir")], 0)
    assert not pick(own, 80, 1, me=0).hidden


# The screen at 80x24 --------------------------------------------------------------------


def _round_of_six_bot_turns() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A 4-seat game where the player (seat 0, Anna) played first in round 7 and plays last in
    round 8: six bot turns since her last action, two festivals between them."""
    view = sv.with_names(sv.four_seat(), {1: "Pau·normal", 2: "Núria·normal",
                                          3: "Jordi·normal"})
    for p in view["players"]:
        p["bot"] = p["seat"] != 0
    view = {**view, "round": 8, "turn": 0, "done": []}

    def turn(seat: int, region: str, tile: str) -> list[dict[str, Any]]:
        return [{"kind": "turn", "seat": seat}, act(seat, "move", region=region),
                act(seat, "train", effect="recruit", size=5), act(seat, "recruit", sizes=[9, 5]),
                act(seat, "build", levels=[[5, 5], [4]]),
                act(seat, "special", effect="perform", tile=tile),
                {"kind": "trained", "seat": seat, "tile": "special"},
                {"kind": "performed", "seat": seat, "tile": tile, "region": region,
                 "tokens": 1}, act(seat, "end_turn")]

    events = [{"kind": "turn", "seat": 0}, act(0, "end_turn"),
              *turn(1, "ebr", "lp01"), *turn(2, "alt", "lp02"), *turn(3, "tar", "lp03"),
              sv.festival_event("alt", "La Seu d'Urgell", 6,
                                [(3, 6, "trophy", True), (2, 4, "medal", False)]),
              sv.festival_event("cen", "Manresa", 5,
                                [(0, 7, "trophy", True), (1, 5, "medal", False),
                                 (3, 4, "ribbon", False)]),
              {"kind": "round", "round": 8, "first": 1},
              *turn(1, "bcn", "lp04"), *turn(2, "gir", "lp05"), *turn(3, "lle", "lp06"),
              {"kind": "turn", "seat": 0}]
    return view, events


BOT_TURNS = [("Pau", "ebr", "lp01"), ("Núria", "alt", "lp02"), ("Jordi", "tar", "lp03"),
             ("Pau", "bcn", "lp04"), ("Núria", "gir", "lp05"), ("Jordi", "lle", "lp06")]


def _turns_said(text: str) -> list[tuple[str, str, str]]:
    """The bot turns of :data:`BOT_TURNS` whose name, move and completed tile ``text`` says
    together (a turn's line, or its part of a line of several)."""
    return [(name, region, tile) for name, region, tile in BOT_TURNS
            if re.search(rf"{name}: (moved )?to {region}[^·]*(completed {tile}|{tile} done)",
                         text)]


def test_at_80x24_every_bot_turn_since_the_players_last_shows_or_is_counted(small):
    view, events = _round_of_six_bot_turns()
    push(small, {**view, "turn": 3}, 1)
    push(small, view, 2, events)
    lines = board(small)
    fold = next(i for i, line in enumerate(lines) if "── ↓" in line)
    rows = event_rows(lines)
    said = _turns_said("\n".join(rows))
    counted = re.search(r"… (\d+) more turns? \(F2\)", lines[fold])
    assert len(said) + (int(counted.group(1)) if counted else 0) == 6, "\n".join(lines)
    assert said == BOT_TURNS[len(BOT_TURNS) - len(said):]  # the newest ones, in order
    assert len(said) >= 4
    # both festivals whole, the player's own trophy among them
    text = "\n".join(rows)
    assert "Jordi 6 trophy" in text and "Núria 4 medal" in text
    assert "Anna 7 trophy" in text and "Pau 5 medal" in text and "Jordi 4 ribbon" in text
    assert not any(row.endswith("…") for row in rows if "estival" in row or "size" in row)
    # the player's own panel still whole on the first page
    assert lines[fold - 1].startswith("╰") or "╰" in "\n".join(lines[fold - 3:fold])
    # at 100x40 too: every one of them
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(100, 40)):
        big = TerminalScreen(Controller(Session("ws://127.0.0.1:1", "Anna")), color=False)
        push(big, {**view, "turn": 3}, 1)
        push(big, view, 2, events)
        text = "\n".join(board(big))
        counted = re.search(r"… (\d+) more turns? \(F2\)", text)
        assert len(_turns_said(text)) + (int(counted.group(1)) if counted else 0) == 6, text


def test_each_festival_of_the_round_stands_whole_on_the_first_lines_of_the_log(small):
    view, events = _round_of_six_bot_turns()
    push(small, {**view, "turn": 3}, 1)
    push(small, view, 2, events)
    small.show_log()
    _, *rows = notes_pane(small).split("\n")
    pinned = [row for row in rows if row.startswith(("▲", "  "))]
    assert pinned[0].startswith("▲ ") and "La Seu d'Urgell" in pinned[0]
    manresa = next(row for row in pinned if "Manresa" in row)
    assert manresa.startswith("▲ ") and "Anna 7 trophy" in " ".join(pinned)
    assert "Jordi 4 ribbon" in " ".join(pinned) and not any(r.endswith("…") for r in pinned)
    assert all(len(row) <= 80 for row in rows)
    assert rows[-1] == "— Anna's turn"  # and the log's latest line below them


def test_the_chat_counter_never_stands_over_a_turns_words(small):
    view, events = _round_of_six_bot_turns()
    push(small, {**view, "turn": 3}, 1)
    for i, who in enumerate(("Pau", "Núria")):
        small.controller.on_chat(m.ChatPush(room=view["room"], seat=i + 1, name=who,
                                            text="bona sort"))
    push(small, view, 2, events)
    lines = board(small)
    fold = next(i for i, line in enumerate(lines) if "── ↓" in line)
    assert "chat: 2 unread (F2)" in lines[fold]
    assert not any("unread" in row for row in event_rows(lines))
    # what the turns' lines say is theirs alone: none ends in the counter
    assert all(re.fullmatch(r"[^·]*: .*", row) or row.startswith(("Festival", "  "))
               or "size" in row for row in event_rows(lines)), lines




@pytest.fixture
def small() -> Iterator[TerminalScreen]:
    """The full-screen client at 80x24, with no server: state pushes are handed to it."""
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(80, 24)):
        session = Session("ws://127.0.0.1:1", "Anna")
        yield TerminalScreen(Controller(session), color=False)


def push(screen: TerminalScreen, view: dict, version: int, events: Sequence[dict] = (),
         seat: int | None = 0) -> None:
    """Hand ``view`` and ``events`` to the screen as the session does with a state push."""
    session = screen.controller.session
    session.room, session.seat = view["room"], seat
    state = RoomState.of(m.StatePush(room=view["room"], version=version, view=view,
                                     events=tuple(events)))
    session.state = state
    screen.controller.on_state(state)


def board(screen: TerminalScreen) -> list[str]:
    """The board as drawn above the status and input lines (the whole screen, notes shut)."""
    width, rows = screen._size()
    height = rows - 1 - screen._status_height() - screen._notes_height()
    return screen.board_text(width, height).split("\n")


def event_rows(lines: list[str]) -> list[str]:
    """The event lines: the rows under the board's ``↓`` line."""
    marker = next(i for i, line in enumerate(lines) if "── ↓" in line)
    return lines[marker + 1:]


def drawn(screen: TerminalScreen) -> list[str]:
    """The whole layout (board, notes, status, input line, the Tab menu) as prompt_toolkit
    draws it, one string per row."""
    columns, rows = screen._size()
    canvas = Canvas()
    screen.app.render_counter += 1  # a new frame: the controls draw afresh, as on a redraw
    with set_app(screen.app):
        screen.app.layout.container.write_to_screen(
            canvas, MouseHandlers(), WritePosition(0, 0, columns, rows), "", erase_bg=False,
            z_index=None)
        canvas.draw_all_floats()
    return ["".join(canvas.data_buffer[y][x].char for x in range(columns)).rstrip()
            for y in range(rows)]


def test_at_80x24_the_players_own_tower_and_takings_are_on_the_first_page(small):
    push(small, sv.four_seat(), 1, seat=2)  # Caterina, with a tower of four levels
    lines = board(small)
    assert len(lines) <= 22 and lines[0].startswith("Quatre · ")
    title = next(i for i, line in enumerate(lines) if "Caterina (you) · at bcn" in line)
    fold = next(i for i, line in enumerate(lines) if "── ↓" in line)
    bottom = next(i for i in range(title, fold) if lines[i].startswith("╰"))
    panel = "\n".join(lines[title:bottom])
    assert "took gir lp02 trophy size 3" in panel and "10 10 10 10" in panel and "6 6" in panel
    # a tower too tall to be drawn there is written on one line, still above the fold
    tall = sv.four_seat()
    tall["players"][2]["tower"] = [[10, 10, 10, 10], [8, 8, 8], [7, 7], [6], [5], [4], [3]]
    push(small, tall, 2, seat=2)
    lines = board(small)
    fold = next(i for i, line in enumerate(lines) if "── ↓" in line)
    first_page = "\n".join(lines[:fold])
    assert "tower 10 10 10 10 / 8 8 8 / 7 7 / 6 / 5 / 4 / 3" in first_page
    assert "took gir lp02" in first_page
    # late in a game: long towns next, much taken, a festival's result kept (three event
    # lines): the panel still whole above the fold
    late = copy.deepcopy(tall)
    late["festivals"][3]["town"], late["festivals"][4]["town"] = ("Vilafranca del Penedès",
                                                                  "La Seu d'Urgell")
    late["players"][2]["taken"]["tiles"] = [{"tile": f"lp{i:02}", "region": r} for i, r in
                                            ((2, "gir"), (7, "alt"), (9, "cen"), (14, "tar"))]
    festival = sv.festival_event("tar", "Valls", 6, [(2, 9, "trophy", True)])
    push(small, {**late, "turn": 3}, 3, seat=2)
    push(small, late, 4, [act(3, "end_turn"), festival, *bot_turn(3), {"kind": "turn", "seat": 2}],
         seat=2)
    lines = board(small)
    fold = next(i for i, line in enumerate(lines) if "── ↓" in line)
    # (both turns since the player's last, in few words around the festival)
    assert lines[fold + 1:] == ["Dolors: passed",
                                "Festival at Valls (tar), size 6: Caterina 9 trophy + size token",
                                "Dolors: to bcn, built 7 7/6 6/5, lp05 done"]
    first_page = "\n".join(lines[:fold])
    assert "Vilafranca del Penedès" in first_page and "tower 10 10 10 10 / 8 8 8" in first_page
    assert "tar lp14" in first_page and first_page.split("\n")[-1].startswith("╰")


def test_at_80x24_a_bots_turn_and_the_players_echo_stand_under_the_board(small):
    view = sv.with_names(sv.two_seat(), {1: "Bru·greedy"})
    push(small, {**view, "turn": 1}, 1)
    push(small, view, 2, [*bot_turn(), {"kind": "turn", "seat": 0}])
    rows = event_rows(board(small))
    assert " ".join(rows) == ("Bru: moved to bcn, trained balance, recruited 7 4, built 7 7/6 6/5,"
                              " special: perform lp05, completed lp05 (+1 token)")
    push(small, view, 3, [act(0, "move", region="gir")])
    assert event_rows(board(small))[-1] == "You: moved to gir"  # the player's action echoed
    # under an open pane too
    small.show(["you can:"] + [f"  line {i}" for i in range(30)])
    width, rows_ = small._size()
    height = rows_ - 1 - small._status_height() - small._notes_height()
    assert small.board_text(width, height).split("\n")[-1] == "You: moved to gir"


async def test_the_servers_word_is_never_hidden(small):
    view = sv.two_seat()
    push(small, {**view, "turn": 1}, 1)
    small.controller.on_chat(m.ChatPush(room=view["room"], seat=None, name="server",
                                        text="the server restarts at 22:00"))
    festival = sv.festival_event("tar", "Valls", 6, [(1, 9, "trophy", True)])
    push(small, view, 2, [act(1, "end_turn"), festival, *bot_turn(), *bot_turn(),
                          {"kind": "turn", "seat": 0}])
    small.show([f"help line {i}" for i in range(40)])  # a pane open over the board
    text = "\n".join(drawn(small))
    assert "server: the server restarts at 22:00" in text
    assert "Festival at Valls (tar), size 6" in text
    push(small, view, 3, [act(0, "move", region="gir")])  # read: it goes with the next action
    assert "the server restarts" not in "\n".join(drawn(small))


def test_a_chat_line_the_screen_leaves_out_is_marked_unread_until_the_log_shows_it(small):
    view = sv.two_seat()
    push(small, {**view, "turn": 1}, 1)
    small.controller.on_chat(m.ChatPush(room=view["room"], seat=1, name="Bru", text="bona sort"))
    assert event_rows(board(small))[-1] == "Bru: bona sort"  # chat in a game, on the lines
    push(small, view, 2, [*bot_turn(), {"kind": "turn", "seat": 0}])
    push(small, view, 3, [act(0, "move", region="gir")])
    lines = board(small)
    assert next(line for line in lines if "── ↓" in line).endswith("chat: 1 unread (F2)\x1b[0m")
    assert not any("unread" in row for row in event_rows(lines))  # not over a turn's words
    small.show_log()
    assert any("Bru: bona sort" in line for line in small.notes)
    small.notes, small.log_open = [], False  # (Esc)
    assert not any("unread" in line for line in board(small))


def test_the_log_opens_with_the_kept_festival_on_its_first_line(small):
    view = sv.with_names(sv.two_seat(), {1: "Bru·greedy"})
    push(small, {**view, "turn": 1}, 1)
    festival = sv.festival_event("tar", "Valls", 6, [(1, 9, "trophy", True),
                                                    (0, 8, "medal", False)])
    push(small, view, 2, [act(1, "end_turn"), festival, {"kind": "round", "round": 5, "first": 1},
                          *bot_turn(), *bot_turn(), {"kind": "turn", "seat": 0}])
    small.show_log()
    title, first, *_ = notes_pane(small).split("\n")
    assert first == ("▲ Festival at Valls (tar), size 6: Bru 9 trophy + size token, Anna 8 "
                     "medal")
    assert "more line" not in title  # and the log's latest lines below it
    assert notes_pane(small).split("\n")[-1] == "— Anna's turn"
    push(small, view, 3, [act(0, "move", region="gir")])  # the next action: no longer kept
    assert not notes_pane(small).split("\n")[1].startswith("▲")


async def test_a_question_too_long_for_the_input_line_goes_on_the_status_line(small):
    view = sv.two_seat()
    push(small, {**view, "done": []}, 1)
    question = ("you have not moved, recruited or trained: end anyway? [y/N] (`warn off` stops "
                "asking) ")
    asked = asyncio.ensure_future(small.ask(question))
    await asyncio.sleep(0)
    prompt = "".join(text for _, text in small._prompt())
    assert prompt == "end anyway? [y/N] " and len(prompt) <= 80 - ANSWER_ROOM
    assert " ".join(status_line(small).split("\n")) == question.strip()
    assert all(len(row) <= 80 for row in status_line(small).split("\n"))
    small.input.text = "n"
    small._accept(small.input)
    assert await asked == "n"
    assert "warn off" not in status_line(small)
    short = asyncio.ensure_future(small.ask("quit now? [y/N] "))
    await asyncio.sleep(0)
    assert "".join(text for _, text in small._prompt()) == "quit now? [y/N] "
    small._asking[1].set_result(None)
    await short


async def test_the_tab_menu_is_framed(small):
    push(small, sv.two_seat(), 1)
    small.input.document = Document("recruit ")
    completions = list(small._game_completer.get_completions(small.input.document,
                                                            CompleteEvent(True)))
    assert completions
    small.input.complete_state = CompletionState(small.input.document, completions)
    rows = drawn(small)
    top = next(i for i, row in enumerate(rows) if re.search(r"┌─+┐", row))
    bottom = next(i for i, row in enumerate(rows) if re.search(r"└─+┘", row))
    left = rows[top].index("┌")
    assert bottom - top - 1 == min(8, len(completions))
    for row in rows[top + 1:bottom]:  # each offer between the frame's sides
        assert row[left] == "│" and row[rows[top].index("┐")] == "│"
    assert rows[-1].startswith("> recruit")


def _key(screen: TerminalScreen, key: Keys) -> Any:
    """The handler bound to ``key`` whose filter holds now."""
    with set_app(screen.app):
        return next(b for b in screen.app.key_bindings.get_bindings_for_keys((key,))
                    if b.filter())


async def test_home_a_typed_line_or_the_turn_bring_the_board_back_to_its_top(small):
    view = sv.two_seat()
    push(small, view, 1)
    top = board(small)[1]
    small.page(1)
    assert small.board_top > 0 and board(small)[1] != top
    _key(small, Keys.Home).handler(None)  # Home, with nothing typed
    assert small.board_top == 0 and board(small)[1] == top
    small.page(1)
    small.input.text = "hint"
    small._accept(small.input)
    assert small.board_top == 0
    small.page(1)
    push(small, {**view, "turn": 1}, 2)
    push(small, {**view, "round": 5, "done": []}, 3)  # the player's turn begins again
    assert small.board_top == 0
    small.input.text = "move"  # with a line typed, Home is the line's
    with set_app(small.app):
        assert not any(b.filter() for b in small.app.key_bindings.get_bindings_for_keys(
            (Keys.Home,)) if b.handler.__name__ == "_home")


def test_in_the_regions_panel_bots_lose_their_level_before_names_are_cut():
    wire = sv.with_names(sv.four_seat(), {1: "Pau·easy", 3: "Núria·easy"})
    for p in wire["players"]:
        p["bot"] = p["seat"] in (1, 3)
    wire["regions"]["cen"]["pawns"] = [1, 3]
    wire["players"][3]["region"] = "cen"
    text = screen(sv.typed(wire), 2, width=80, short=True, page=17)
    cen = next(line for line in text.splitlines() if line.startswith("│ cen "))
    assert re.search(r" Pau Núria ", cen) and "…" not in cen
    # where they fit whole, whole
    alone = screen(sv.typed(sv.with_names(sv.four_seat(), {1: "Pau·easy"})), 2, width=80)
    assert "Pau·easy " in next(line for line in alone.splitlines() if line.startswith("│ cen "))


def test_who_watches_is_in_the_header():
    view = attrs.evolve(sv.typed(sv.two_seat()), spectators=("Carme", "Pere"))
    lines = screen(view, 0, width=100).splitlines()
    assert lines[0].endswith("· watching: Carme, Pere")
    assert not any(line.startswith("watching:") for line in lines[1:])  # said once
    # at 80 columns, with the turn's clock: counted, the names at the board's end
    lines = screen(view, 0, width=80, short=True, page=17).splitlines()
    assert lines[0].endswith("1:42 · 2 watching") and len(lines[0]) <= 80
    assert lines[-1] == "watching: Carme, Pere"
    untimed = attrs.evolve(view, deadline=None, spectators=("Carme",), name="Anna's game")
    assert screen(untimed, 0, width=80).splitlines()[0].endswith("· watching: Carme")


def test_at_100x40_the_layout_is_kept_and_the_event_lines_fill_what_it_leaves():
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(100, 40)):
        big = TerminalScreen(Controller(Session("ws://127.0.0.1:1", "Anna")), color=False)
        view = sv.with_names(sv.two_seat(), {1: "Bru·greedy"})
        push(big, {**view, "turn": 1}, 1)
        push(big, view, 2, [*bot_turn(), {"kind": "turn", "seat": 0}])
        lines = board(big)
        laid_out = screen(sv.typed(view), 0, width=100, max_event_lines=0).rstrip("\n")
        assert "\n".join(lines).startswith("\n".join(
            line.rstrip() for line in laid_out.split("\n"))[:20])
        assert not any("── ↓" in line for line in lines)  # nothing scrolled away
        assert lines[len(laid_out.split("\n")):] == [
            "Bru: moved to bcn, trained balance, recruited 7 4, built 7 7/6 6/5, special: perform"
            " lp05, completed",
            "lp05 (+1 token)"]


# In a real terminal at 80x24 --------------------------------------------------------------


def _terminal_events(term: Terminal) -> str:
    """The event lines on the terminal: the rows between the board's ``↓`` line and the
    status line, joined as the words they wrap."""
    lines = term.lines()
    marker = max(i for i, line in enumerate(lines) if line.startswith("── "))
    status = next(i for i in range(marker + 1, len(lines))
                  if lines[i].startswith(("Your turn", "✗", ">")))
    return " ".join(lines[marker + 1:status])


def _record(state: Path) -> GameRecordFile:
    """The game ``castell play`` keeps under ``state`` (read-only, beside the running client)."""

    async def read() -> GameRecordFile:
        async with open_store(state / "data" / "castell" / "play.sqlite3",
                              read_only=True) as store:
            rooms = await store.unfinished_summaries()
            record = await store.load(rooms[0].room.room)
        assert record is not None
        return record_file(record)

    return asyncio.run(read())


def _at_my_turn(state: Path, round_: int, timeout: float = 10.0
                ) -> tuple[GameRecordFile, list[Any]]:
    """The record once it stands at the player's turn in ``round_`` (it is stored as the
    screen shows that turn, or just after), and the events of its every action."""
    end = time.monotonic() + timeout
    while True:
        record = _record(state)
        steps = record_steps(record)
        now = steps[-1][0]
        if now.round == round_ and now.turn == 0 and not now.done:
            return record, [e for _, events in steps for e in events]
        assert time.monotonic() < end, (now.round, now.turn, now.done)
        time.sleep(0.05)


def _play(tmp_path: Path) -> Terminal:
    return Terminal(["play", "--seats", "2", "--bot-delay", "0", "--name", "Anna"], tmp_path,
                    columns=80, rows=24)


def test_in_a_terminal_at_80x24_a_bots_whole_turn_shows_at_the_players_next_turn(tmp_path):
    term = _play(tmp_path)
    try:
        term.wait_for(r"(round |R)1/10 · your turn")
        record, _ = _at_my_turn(tmp_path, 1)
        if not record.actions:  # Anna plays first: the bot's turn comes after hers
            term.type("end!\r")
            term.wait_for(r"(round |R)2/10 · your turn")
            record, _ = _at_my_turn(tmp_path, 2)
        turn = [record.actions[-1].action]  # its end, and what it did before (back to the
        for done in reversed(record.actions[:-1]):  # player's turn, or the bot's turn before)
            if done.seat == 0 or isinstance(done.action, EndTurn):
                break
            turn.insert(0, done.action)
        bot = record.seats[1].split("·")[0]
        said = _terminal_events(term)
        # its every action, in order, on the line that names it
        line = said[said.rindex(f"{bot}: "):]
        at = 0
        for action in turn:
            if isinstance(action, EndTurn):
                continue
            brief = action_brief(action_fields(action))
            assert brief in line[at:], (brief, line, term.text())
            at = line.index(brief, at) + len(brief)
        if all(isinstance(action, EndTurn) for action in turn):
            assert line.startswith(f"{bot}: passed")
        assert "…" not in line
        term.quit()
    finally:
        term.close()


def test_in_a_terminal_at_80x24_the_festivals_result_stays_when_a_bot_opens_the_round(
        tmp_path):
    term = _play(tmp_path)
    try:
        for round_ in range(1, 11):
            term.wait_for(rf"(round |R){round_}/10 · your turn")
            record, events = _at_my_turn(tmp_path, round_)
            mine = max((i for i, e in enumerate(events)
                        if isinstance(e, ActionTaken) and e.seat == 0), default=-1)
            since = events[mine + 1:]
            held = [i for i, e in enumerate(since) if isinstance(e, FestivalResolved)]
            if held and any(isinstance(e, ActionTaken) for e in since[held[-1]:]):
                break  # a festival, then the bot opened this round
            term.type("end!\r")
        else:
            raise AssertionError("no festival before a round the bot opened, in ten rounds")
        festival = since[held[-1]]
        assert isinstance(festival, FestivalResolved)
        said = _terminal_events(term)
        assert f"Festival at {festival.town} ({festival.region}), size {festival.size}: " in said
        for result in festival.results:
            name = record.seats[result.seat].split("·")[0]
            assert f"{name} {result.score}" in said
        bot = record.seats[1].split("·")[0]
        assert f"{bot}: " in said  # the bot's turn below it
        term.type("log\r")  # and on the first page of the log
        term.wait_for(r"──── Game log")
        assert re.search(rf"Festival at {re.escape(festival.town)}", term.text()
                         [term.text().index("──── Game log"):])
        term.type(ESC)
        term.quit()
    finally:
        term.close()


def test_in_a_terminal_at_80x24_chat_said_in_a_game_shows_on_the_event_lines(tmp_path):
    with castell_server() as (url, _):
        term = Terminal([url, "--name", "Anna"], tmp_path, columns=80, rows=24)
        try:
            term.wait_for(r"Open rooms on ws://")
            term.type("create Friday night seats=2\r")
            room = term.wait_for(r"join (r[0-9a-f]+)").group(1)
            term.type("bot\r")
            term.wait_for(r"Every seat is taken")
            term.type("start\r")
            term.wait_for(r"(round |R)1/10 · (your|\w+'s) turn")
            with ws_connect(url, subprotocols=[Subprotocol(m.SUBPROTOCOL)]) as carme:
                carme.send(encode(m.Hello(id=1, name="Carme")))
                carme.recv(5)
                carme.send(encode(m.JoinRoom(id=2, room=room, as_="spectator")))
                carme.recv(5)
                term.wait_for(r"watching: Carme")  # who watches, in the header
                assert "watching: Carme" in term.lines()[0]
                carme.send(encode(m.Chat(id=3, text="bona sort a tothom")))
                term.wait_for(r"Carme \(watching\): bona sort a tothom")
                assert "Carme (watching): bona sort a tothom" in _terminal_events(term)
            term.quit()
        finally:
            term.close()
