"""The terminal screen: what a view looks like at 100 and 80 columns, and in --plain mode."""

from __future__ import annotations

import io
import re

import attrs
import pytest
from rich.cells import cell_len
from rich.console import Console

from client.screens.render import FESTIVAL_ROWS, chat_text, print_view, render_plain
from client.screens.rulebook import rules_page
from shared import describe
from shared.sanitize import safe
from shared.scoring import score_player
from shared.view import state_from_view
from tests.support import sample_views as sv
from tests.support.screens import screen

VIEWS = {"two_seat": sv.two_seat, "four_seat": sv.four_seat, "finished": sv.finished,
         "waiting": sv.waiting}


def line_with(text: str, needle: str) -> str:
    found = [line for line in text.splitlines() if needle in line]
    assert found, f"{needle!r} not on screen"
    return found[0]


# Layout ---------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [100, 80])
@pytest.mark.parametrize("name", list(VIEWS))
def test_no_line_is_wider_than_the_console(name, width):
    view = sv.typed(VIEWS[name]())
    for me in [None, *(p.seat for p in view.players)]:
        text = screen(view, me, sv.round_four_events(), width=width)
        assert max(len(line) for line in text.splitlines()) <= width


@pytest.mark.parametrize("name", ["two_seat", "four_seat", "finished"])
def test_a_game_fits_100_by_40_with_room_for_the_prompt(name):
    view = sv.typed(VIEWS[name]())
    text = screen(view, 0, sv.round_four_events(), width=100)
    # the prompt and the error line take the last two rows
    assert len(text.splitlines()) <= 38


def test_regions_panel_lists_castellers_pawns_wheel_and_neighbours():
    text = screen(sv.typed(sv.two_seat()), 0)
    for region in ("alt", "gir", "cen", "lle", "bcn", "tar", "ebr"):
        assert line_with(text, f"│ {region} ")
    alt = line_with(text, "│ alt ")
    assert "10 9 7" in alt and "Bru" in alt and "Mix" in alt and "gir cen lle" in alt
    cen = line_with(text, "│ cen ")
    assert "Balance" in cen and "alt gir lle bcn tar" in cen
    assert "all regions: Special" in text and "bag 118" in text


def test_header_shows_round_turn_actions_and_countdown():
    header = screen(sv.typed(sv.two_seat()), 0).splitlines()[0]
    assert "Friday night" in header and "round 4/10" in header and "your turn" in header
    assert "move ✓" in header and "recruit ·" in header and "special ·" in header
    assert "time 1:42" in header
    other = screen(sv.typed(sv.two_seat()), 1).splitlines()[0]
    assert "Anna's turn" in other and "your turn" not in other


def test_countdown_needs_a_clock_and_never_goes_negative():
    assert "time" not in screen(sv.typed(sv.two_seat()), 0, now=None).splitlines()[0]
    assert "time 0:00" in screen(sv.typed(sv.two_seat()), 0, now=sv.NOW + 500).splitlines()[0]


def test_a_correspondence_turn_s_time_left_reads_in_hours_and_days():
    from shared.describe import countdown

    assert countdown(1000.0 + 59 * 60 + 59, 1000.0) == "59:59"
    assert countdown(1000.0 + 5 * 3600 + 12 * 60 + 30, 1000.0) == "5 h 12 min"
    assert countdown(1000.0 + 2 * 86400 - 1, 1000.0) == "1 d 23 h"  # not "2879:59"
    view = sv.typed(sv.two_seat())
    header = screen(view, 0, now=view.deadline - 2 * 86400 + 1).splitlines()[0]
    assert "time 1 d 23 h" in header


def test_festivals_mark_the_next_round_and_the_players_region():
    text = screen(sv.typed(sv.four_seat()), 2)
    assert "▶" in line_with(text, "Tortosa") and "▶" in line_with(text, "Barcelona")
    assert "▶" not in line_with(text, "Manresa")
    assert "✓" in line_with(text, "Lleida")
    assert "← you" in line_with(text, "Barcelona") and "← you" not in line_with(text, "Tortosa")
    assert "more" in text  # the calendar is longer than the panel
    assert "trophy 10 medal 13 ribbon 14" in text
    assert "who enters: `rules festivals`" in text  # who takes part (§5): a page away


def test_at_80_columns_each_region_lists_its_coming_festivals():
    text = screen(sv.typed(sv.four_seat()), 2, width=80)
    assert "Festivals" not in text  # no room for the panel beside the regions
    assert "festivals" in line_with(text, "│ reg ")
    # the next festivals (round 5) are marked; a region's later festival gives its round
    assert "▶R5 size 7 +R7" in line_with(text, "│ bcn ")
    assert "▶R5 size 2 +R10" in line_with(text, "│ ebr ")
    assert "R6 size 9 +R9" in line_with(text, "│ cen ") and "▶" not in line_with(text, "│ cen ")
    assert "R8 size 10" in line_with(text, "│ tar ")  # Valls (R3) is done: not listed
    assert "prizes: trophy 10 medal 13 ribbon 14" in text


def test_a_long_header_drops_the_brand_before_shortening_its_words():
    # with "CASTELL · " the line is 105 cells long
    view = attrs.evolve(sv.typed(sv.two_seat()), name="Friday night games")
    header = screen(view, 1, width=100).splitlines()[0]
    assert header.startswith("Friday night games · round 4/10 · Anna's turn: move ✓  recruit ·")


def test_a_compact_header_ticks_what_is_done_and_a_shared_win_fits():
    header = screen(sv.typed(sv.two_seat()), None, width=80).splitlines()[0]
    assert "your turn" not in header and ": move✓ recruit train special " in header
    view = attrs.evolve(sv.typed(sv.finished()), winners=(0, 1, 2))
    assert "game over: Anna, Bru and Cai share the victory" in \
        screen(view, None, width=100).splitlines()[0]
    narrow = screen(view, None, width=80).splitlines()
    assert narrow[0].startswith("Diumenge · game over") and narrow[1].startswith("╭")


def test_below_80_columns_regions_keep_their_ids_and_castellers():
    text = screen(sv.typed(sv.four_seat()), 2, width=60)
    assert max(cell_len(line) for line in text.splitlines()) <= 60
    assert "10 10 9 8 1" in line_with(text, "│ alt ") and "7 6 6 3 1" in line_with(text, "│ bcn ")


@pytest.mark.parametrize("width", [100, 80])
@pytest.mark.parametrize("me", [1, None])
def test_the_header_stays_on_one_line(width, me):
    view = attrs.evolve(sv.typed(sv.two_seat()), name="A rather long room name here")
    lines = screen(view, me, width=width).splitlines()
    assert "time 1:42" in lines[0] and "Anna's turn" in lines[0]
    assert lines[1].startswith("╭")


def test_a_short_screen_shows_the_players_before_the_performances():
    tall = screen(sv.typed(sv.two_seat()), 0, width=80)
    assert tall.index("Local performances") < tall.index("Anna (you)")
    short = screen(sv.typed(sv.two_seat()), 0, width=80, short=True)
    assert short.index("Regions") < short.index("Anna (you)") < short.index("Local performances")


def test_player_panels_of_a_row_are_as_tall_as_each_other():
    lines = screen(sv.typed(sv.four_seat()), 2, width=100).splitlines()
    top = next(i for i, line in enumerate(lines) if "Anna ─" in line)
    bottom = next(i for i, line in enumerate(lines) if i > top and line.startswith("╰"))
    assert lines[bottom].count("╰") == 4 and lines[bottom].count("╯") == 4


def test_performances_describe_tiles_and_tokens():
    text = screen(sv.typed(sv.two_seat()), 0, width=100)
    gir = line_with(text, "│ gir  lp12")
    assert "shape 3·3·2·1 (5 pts)" in gir and "tokens 2" in gir
    assert "lp26 4 levels: mix+strength (4 pts)" in text
    narrow = screen(sv.typed(sv.two_seat()), 0, width=80)
    assert "lp26 4lv mix+str (4)" in narrow


def test_player_panels_show_team_tower_skills_and_takings():
    text = screen(sv.typed(sv.two_seat()), 0)
    assert "▶ Anna (you)" in text and "Bru (bot)" in text
    assert "team 9×2 8 7×3 5×2 4 3 2 1" in text
    assert "5 tokens · bal 1 str 1" in text
    # the score so far, as the rules engine counts it (§9), stands beside the best tower
    view = sv.typed(sv.two_seat())
    now = {p.seat: score_player(p).total for p in state_from_view(view).players}
    assert now[0] > 0 and f"at gir · best 8 · score {now[0]}" in text
    assert f"at alt · best 0 · score {now[1]}" in text
    assert "took gir lp04 · tar trophy size 6 · 1 token" in text
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if re.search(r"│\s+2\s+│", line))
    assert "5 5" in lines[top + 1] and "7 7 7" in lines[top + 2]  # top level drawn first


def test_four_players_share_a_row_at_100_and_stack_at_80():
    wide = screen(sv.typed(sv.four_seat()), 2, width=100)
    row = line_with(wide, "Anna ─")
    assert all(name in row for name in ("Bru", "Caterina (you)", "Dolors (offline)"))
    narrow = screen(sv.typed(sv.four_seat()), 2, width=80)
    assert "Caterina" not in line_with(narrow, "Anna ─")
    assert "Dolors" in line_with(narrow, "Caterina (you) ─")
    # the player's own panel comes first, the others in turn order after it
    assert narrow.index("Caterina (you) ─") < narrow.index("Anna ─") < narrow.index("Bru (bot)")
    assert wide.index("Caterina (you) ─") < wide.index("Dolors") < wide.index("Anna ─")
    watched = screen(sv.typed(sv.four_seat()), None, width=100)
    assert watched.index("Anna ─") < watched.index("Bru (bot)") < watched.index("Caterina ─")


def test_spectator_sees_everything_but_no_you():
    text = screen(sv.typed(sv.four_seat()), None)
    assert "spectating" in text.splitlines()[0]
    assert "(you)" not in text and "← you" not in text
    assert "Caterina's turn" in text


def test_finished_game_shows_the_score_table_and_winner():
    text = screen(sv.typed(sv.finished()), 0, [{"kind": "game_over", "scores": [], "winners": [1]}])
    assert "Final score" in text and "game over" in text.splitlines()[0]
    header = line_with(text, "diversity")
    for category in ("tower", "prizes", "sizes", "performances", "total"):
        assert category in header
    table = text[text.index("Final score"):]
    bru = line_with(table, "Bru ")
    assert re.search(r"12\s+5\s+10\s+4\s+3\s+34", bru) and "winner" in bru
    assert "winner" not in line_with(table, "Cai ")
    assert "Game over: Bru wins" in text
    assert text.index("Final score") < text.index("Regions")  # the result first
    assert "game over: Bru wins" in text.splitlines()[0]
    assert "a tie on 34 points goes to the better best tower (§9): Cai had a lower one" in text
    narrow = screen(sv.typed(sv.finished()), 0, width=80)
    assert "performances" in narrow and "…" not in narrow[:narrow.index("Regions")]


def test_a_replay_says_so_in_the_header():
    header = screen(sv.typed(sv.two_seat()), None, watching="replay").splitlines()[0]
    assert header.endswith("· replay") and "spectating" not in header


def test_waiting_room_renders_without_a_board():
    text = screen(sv.typed(sv.waiting()), 0, [{"kind": "joined", "seat": 0, "name": "Anna"}])
    assert "waiting for players 1/3" in text and "Anna (you)" in text
    assert "seat 0  Anna (you)" in text and "seat 2  free" in text
    assert "team" not in text and "tokens" not in text  # no game yet: nothing to count
    assert "Anna joined" in text


# Events -----------------------------------------------------------------------------------


def test_events_are_told_in_words():
    text = screen(sv.typed(sv.two_seat()), 0, sv.round_four_events(), max_event_lines=20)
    assert "Bru recruited 6 6 in alt" in text
    assert "Bru built 2 levels: 6 6 / 2" in text
    assert "Anna moved to gir" in text
    assert "round 4, Bru plays first" in text
    assert "Festival at Valls (tar), size 6" in text
    result = line_with(text, "trophy  size token")
    assert "Anna" in result and "8" in result


def test_only_the_latest_event_lines_are_kept():
    text = screen(sv.typed(sv.two_seat()), 0, sv.round_four_events(), max_event_lines=2)
    assert "Anna moved to gir" in text and "Anna's turn" in text
    assert "Bru ended the turn" not in text


def test_region_of_an_action_is_where_the_pawn_stood_then():
    view = sv.typed(sv.two_seat())
    events = [sv.action_event(0, "recruit", sizes=[9]),
              sv.action_event(0, "special", effect="move", region="bcn"),
              sv.action_event(0, "recruit", sizes=[7])]
    # Anna is in gir now, but the second recruit came after her move to bcn, and where she
    # stood before that move is unknown: no region rather than a wrong one.
    assert describe.regions_at(events, view) == [None, None, "bcn"]
    assert describe.regions_at(events[:1], view) == ["gir"]


def test_every_event_kind_has_words():
    view = sv.typed(sv.four_seat())
    events = [
        sv.action_event(2, "train", choice="all", effect="perform", tile="lp08"),
        sv.action_event(2, "train", choice="region"),
        {"kind": "trained", "seat": 2, "tile": "width"},
        {"kind": "performed", "seat": 2, "tile": "lp08", "region": "bcn", "tokens": 3},
        sv.action_event(0, "special", effect="recruit", size=6),
        sv.action_event(0, "dismantle"),
        {"kind": "timeout", "seat": 3},
        {"kind": "disconnected", "seat": 3, "name": "Dolors"},
        {"kind": "connected", "seat": 3, "name": "Dolors"},
        {"kind": "left", "seat": None, "name": "Visitor"},
        {"kind": "started"},
        {"kind": "refill", "drawn": {"alt": [3]}},
        sv.festival_event("ebr", "Tortosa", 2, []),
        {"kind": "mystery\x1b[2J"},
    ]
    lines = render_plain(view, 0, events)
    tail = lines[-len(events) + 1:]  # a training and the skill it raised make one line
    assert tail == [
        "Caterina trained with the `all` tile: perform lp08",
        "Caterina raised width with the tile in bcn",
        "Caterina completed lp08 in bcn and 3 tokens",
        "Anna spent a token to recruit a 6",
        "Anna dismantled the tower",
        "Dolors ran out of time",
        "Dolors lost the connection",
        "Dolors is back",
        "Visitor left",
        "the game starts",
        "the regions are refilled from the bag",
        "Festival at Tortosa (ebr), size 2: nobody took part",
        "(mystery)",
    ]


def test_an_undone_action_has_a_line_saying_what_was_taken_back():
    view = sv.typed(sv.four_seat())
    taken_back = [
        {"kind": "move", "region": "gir"},
        {"kind": "recruit", "sizes": [8, 3]},
        {"kind": "train", "choice": "all"},
        {"kind": "special", "effect": "perform", "tile": "lp08"},
        {"kind": "build", "levels": [[7, 7], [5]]},
        {"kind": "dismantle"},
    ]
    lines = render_plain(view, 0, [{"kind": "undone", "seat": 0, "action": action}
                                   for action in taken_back])
    assert lines[-len(taken_back):] == [
        "Anna took back: move to gir",
        "Anna took back: recruit 8 3",
        "Anna took back: train with the `all` tile",
        "Anna took back: spend a token to perform lp08",
        "Anna took back: build 2 levels: 7 7 / 5",
        "Anna took back: dismantle the tower",
    ]


def test_a_skill_trained_alone_still_has_its_own_line():
    lines = render_plain(sv.typed(sv.four_seat()), 0,
                         [{"kind": "trained", "seat": 2, "tile": "mix"}])
    assert lines[-1] == "Caterina raised mix"


def test_chat_lines_stand_among_the_events_in_the_order_said():
    events = [*sv.round_four_events()[-2:],
              {"kind": "chat", "seat": 1, "name": "Bru", "text": "good move"},
              sv.action_event(0, "recruit", sizes=[8])]
    text = screen(sv.typed(sv.two_seat()), 0, events, max_event_lines=10)
    assert text.index("Bru: good move") < text.index("Anna recruited 8")


def test_a_long_chat_line_counts_every_line_it_takes():
    chat = {"kind": "chat", "seat": 1, "name": "Bru", "text": "la " * 60}  # 3 lines at 80
    events = [sv.action_event(0, "recruit", sizes=[8]), chat]
    bare = len(screen(sv.typed(sv.two_seat()), 0, width=80, max_event_lines=0).splitlines())
    text = screen(sv.typed(sv.two_seat()), 0, events, width=80, max_event_lines=3)
    assert "Bru: la la" in text and "Anna recruited" not in text
    assert len(text.splitlines()) == bare + 3


def test_chat_lines_keep_brackets_and_drop_escapes():
    text = chat_text(sv.typed(sv.two_seat()), {"room": "r", "seat": 1, "name": "Bru",
                                     "text": "[bold]hi[/] \x1b[2Jthere"})
    assert text.plain == "Bru: [bold]hi[/] there"


# Hostile text -------------------------------------------------------------------------------

EVIL = {0: "\x1b[31mEvil", 1: "\x1b]0;title\x07Bru"}
EVIL4 = {0: "\x1b[31mEvil", 1: "\x1b]0;title\x07Bru", 2: "\x9b2JCai\u202e", 3: "[bold]Dol[/bold]"}


@pytest.mark.parametrize("color", [None, "truecolor"])
def test_escape_sequences_in_names_never_reach_the_terminal(color):
    view = sv.renamed(sv.typed(sv.four_seat()), EVIL4)
    events = [sv.action_event(s, "end_turn") for s in range(4)]
    out = io.StringIO()
    console = Console(width=100, file=out, color_system=color, force_terminal=color is not None)
    print_view(console, view, 0, events, now=sv.NOW)
    written = out.getvalue()
    for raw in ("\x1b[31mEvil", "\x1b]0;", "\x07", "\x9b", "\u202e", "\x1b[2J"):
        assert raw not in written
    if color is None:
        assert "\x1b" not in written
    assert "Evil" in written and "[bold]Dol[/bold]" in written  # markup shown literally


def test_no_color_console_gets_no_colour_codes():
    out = io.StringIO()
    console = Console(width=100, file=out, force_terminal=True, no_color=True)
    print_view(console, sv.typed(sv.four_seat()), 2, sv.round_four_events(), now=sv.NOW)
    codes = {int(c) for seq in re.findall(r"\x1b\[([0-9;]*)m", out.getvalue())
             for c in seq.split(";") if c}
    assert not codes & {*range(30, 39), *range(40, 49), *range(90, 98), *range(100, 108)}


def test_plain_mode_is_one_fact_per_line_and_safe():
    view = sv.renamed(sv.typed(sv.two_seat()), EVIL)
    lines = render_plain(view, 0, sv.round_four_events(), now=sv.NOW)
    assert lines[0].startswith("Castell · Friday night · round 4/10 · your turn")
    assert "done: move" in lines[0] and "left: recruit train special" in lines[0]
    assert "time 1:42" in lines[0]
    assert any(line.startswith("region gir (Girona): castellers 8 3 · Evil") for line in lines)
    assert "festival R4 Girona (gir) size 3: next" in lines
    assert any(line.startswith("player Evil (you) (seat 0): at gir · best 8") for line in lines)
    assert "  Evil 8 trophy + size token" in lines
    assert "Bru recruited 6 6 in alt" in lines
    for line in lines:
        assert "\n" not in line
        assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in line)


def test_plain_mode_lists_final_scores():
    lines = render_plain(sv.typed(sv.finished()), None)
    assert ("score Bru: tower 12, diversity 5, prizes 10, sizes 4, performances 3, total 34"
            " · winner") in lines
    assert "score Cai: tower 10, diversity 7, prizes 11, sizes 2, performances 4, total 34" in lines
    assert lines[0] == "Castell · Diumenge · game over: Bru wins · spectating"
    assert lines[-1].startswith("a tie on 34 points goes to the better best tower")


# Pieces -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x1b[31mEvil", "Evil"),
    ("\x1b]0;title\x07", ""),
    ("\x1b]8;;http://x\x1b\\link", "link"),
    ("\x9b31mred", "red"),
    ("a\x00b\x7fc\x85d", "a\ufffdb\ufffdc d"),
    ("tab\there\nnext", "tab here next"),
    ("\u202eevil\u2066", "evil"),
    ("lone \x1b", "lone "),
    ("Puigcerdà [bold]", "Puigcerdà [bold]"),
    (42, "42"),
])
def test_safe(raw, shown):
    assert safe(raw) == shown


def test_tower_is_drawn_top_first_and_centred():
    assert describe.tower_lines([[10, 10, 10, 10], [8, 8, 8], [6, 6], [3]]) == [
        "     3", "    6 6", "   8 8 8", "10 10 10 10",
    ]
    assert describe.tower_lines([]) == []


def test_team_is_grouped_by_size():
    assert describe.team_text([10, 9, 9, 7, 7, 7, 1]) == "10 9×2 7×3 1"


def test_a_crowded_board_with_wide_names_still_fits():
    names = {0: "漢字" * 12, 1: "W" * 24, 2: "Ünïcødé 🎉🎉🎉 name!", 3: "x"}
    wire = sv.with_names(sv.four_seat(), names)
    wire["name"] = "N" * 40
    wire["regions"]["bcn"]["pawns"] = [0, 1, 2, 3]
    caterina = wire["players"][2]
    caterina["tower"] = [[10] * 9, [9, 9, 9], [8, 8], [7], [6], [5]]
    caterina["team"] = [10] * 9 + [9, 9, 9, 8, 8, 7, 6, 5]
    view = sv.typed(wire)
    for width in (100, 80):
        text = screen(view, 2, width=width)
        assert max(cell_len(line) for line in text.splitlines()) <= width
        assert "10×9" in text  # a level too wide for its panel is grouped, not wrapped
        bcn = line_with(text, "│ bcn 7 6 6 3 1")
        assert "漢" in bcn and "WW" in bcn and " x " in bcn  # every pawn keeps a place
    assert len(screen(view, 2, width=100).splitlines()) <= 40


def test_tower_levels_too_wide_are_grouped():
    assert describe.tower_lines([[10] * 6, [9]], width=12) == [" 9", "10×6"]


# Small screens and long names -------------------------------------------------------------

LONG = {0: "Núria·greedy", 1: "Jordi·greedy", 2: "Pau", 3: "Montserrat·steady"}


def test_the_festival_footer_reads_as_a_whole_phrase():
    text = screen(sv.typed(sv.four_seat()), 2, width=100)
    footer = line_with(text, "who enters")
    # the whole phrase, closed by the panel's border: nothing cut off
    assert re.search(r"╰─ who enters: `rules festivals` ─+╯$", footer.rstrip())
    assert "Who takes part: every player whose pawn is in the festival's region" in \
        rules_page("festivals")  # the page the footer names says it in full


def test_at_80_columns_the_next_festivals_name_their_towns():
    text = screen(sv.typed(sv.four_seat()), 2, width=80)
    line = line_with(text, "next festivals (R5)")
    assert "Tortosa (ebr) size 2" in line and "Barcelona (bcn) size 7" in line


def _festivals_panel_lines(text: str) -> list[str]:
    """The lines inside the Festivals panel (its frame and footer left out)."""
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if "╭─ Festivals" in line)
    left = lines[top].index("╭─ Festivals")
    body = []
    for line in lines[top + 1:]:
        cell = line[left:]
        if cell.startswith("╰"):
            return body
        body.append(cell.strip("│").strip())
    raise AssertionError(text)


@pytest.mark.parametrize("width", [100, 120, 160])
@pytest.mark.parametrize("me", [0, 1, None])  # in bcn, in cen, watching
def test_the_festivals_panel_names_every_town_whole_in_its_height(width, me):
    view = sv.four_seat()
    # the longest towns next, with seat 0's pawn (in bcn) at the first (``← you``)
    view["festivals"][3:7] = [
        {**view["festivals"][7], "round": 5}, {**view["festivals"][4], "round": 5},
        {**view["festivals"][6], "round": 6}, {**view["festivals"][3], "round": 6}]
    body = _festivals_panel_lines(screen(sv.typed(view), me, width=width))
    rows = body[:body.index(next(line for line in body if line.startswith("left:")))]
    assert len(rows) <= FESTIVAL_ROWS
    towns: list[str] = []
    for line in rows:  # a town too long for its line goes on at a space onto the next
        row = re.match(r"[✓▶]?R\d+ (.+?) +[a-z]{3} size \d+( ← you)?$", line)
        if row:
            towns.append(row.group(1))
        elif not line.startswith("…"):
            towns[-1] += " " + line
    assert towns[1:5] == ["Vilafranca del Penedès", "Barcelona", "La Seu d'Urgell",
                          "Tortosa"], rows
    assert ("← you" in "".join(rows)) == (me == 0)


@pytest.mark.parametrize("width", [100, 80])
def test_full_names_stand_in_the_panels_and_no_title_touches_its_border(width):
    view = sv.typed(sv.with_names(sv.four_seat(), LONG))
    text = screen(view, 2, width=width)
    for name in LONG.values():
        assert re.search(rf"─ (▶ )?{re.escape(name)}[ (]", text), name
    # a title ends with a space before the border's line, never right against it
    for line in text.splitlines():
        if line.startswith("╭"):
            assert not re.search(r"[^─ ╮╭]─╮", line), line
    assert "offline ·" in text or "Montserrat·steady (offline)" in text


def test_a_players_items_never_break_across_lines():
    wire = sv.with_names(sv.four_seat(), LONG)
    wire["players"][0]["skills"] = {"balance": 1, "width": 2}
    text = screen(sv.typed(wire), 2, width=100)
    assert "bal 1 wid 2" in text  # not `bal 1 wid` / `2`
    took = next(line for line in text.splitlines() if "took gir lp02" in line)
    assert "trophy" in took and not re.search(r"size\s*│", took)


def test_the_room_name_is_whole_in_a_compact_header():
    view = attrs.evolve(sv.typed(sv.two_seat()), name="Montserrat's game")
    header = screen(view, 0, width=80).splitlines()[0]
    assert header.startswith("Montserrat's game · ")


def test_panels_keep_their_places_whoever_plays_first():
    wire = sv.four_seat()
    turned = {**wire, "players": wire["players"][1:] + wire["players"][:1]}
    for me in (2, None):
        rows = [line_with(screen(sv.typed(w), me, width=100), "Anna ─") for w in (wire, turned)]
        assert rows[0] == rows[1]
        assert rows[0].index("Anna") < rows[0].index("Bru") < rows[0].index("Dolors") or me


def test_an_8_is_recruited_with_an_article_that_fits():
    lines = render_plain(sv.typed(sv.four_seat()), 0,
                         [sv.action_event(0, "special", effect="recruit", size=8)])
    assert lines[-1] == "Anna spent a token to recruit an 8"


def test_a_name_too_long_for_its_title_is_said_whole_inside_the_panel():
    longest = "Montserrat Vilanova Puig"  # 24 characters, the most a name may have
    view = sv.typed(sv.with_names(sv.four_seat(), {2: longest}))
    text = screen(view, 2, width=100)
    title = line_with(text, "─ Montserrat")
    assert re.search(r"─ Montserrat Vila\S*… ─", title)  # cut, and marked as cut
    lines = text.splitlines()
    top = lines.index(title)
    own = " ".join(line[:25].strip("│ ") for line in lines[top + 1:top + 4])  # her panel
    assert own.startswith(f"{longest} · you · ")  # whole, if on two lines


def test_a_pawns_name_is_whole_where_the_column_has_room_and_marked_where_cut():
    view = sv.typed(sv.with_names(sv.four_seat(), {1: "Bernat·steady", 0: "Núria·greedy"}))
    text = screen(view, 2, width=80)
    assert "Bernat·steady " in line_with(text, "│ cen ")  # alone in cen: whole
    bcn = line_with(text, "│ bcn ")
    # crowded: every pawn keeps a place, the longest names give way first, marked as cut
    assert re.search(r"Núr\S*… Cat\S* Dol\S* ", bcn) and "Bernat" not in bcn


def test_a_move_taken_back_no_longer_says_where_the_pawn_stood():
    view = sv.typed(sv.two_seat())
    events = [sv.action_event(0, "move", region="bcn"),
              sv.action_event(0, "recruit", sizes=[9]),
              sv.action_event(0, "move", region="tar"),
              {"kind": "undone", "seat": 0, "action": {"kind": "move", "region": "tar"}},
              sv.action_event(0, "recruit", sizes=[7])]
    assert describe.regions_at(events, view)[1] == "bcn"
    assert describe.regions_at(events, view)[4] == "bcn"  # back in bcn after the undo
    # an action marked where it happened keeps it, whatever the list around it says
    marked = [{**sv.action_event(0, "recruit", sizes=[9]), "at": "ebr"},
              sv.action_event(0, "move", region="bcn")]
    assert describe.regions_at(marked, view)[0] == "ebr"
    assert "recruited 9 in ebr" in screen(view, 0, marked)
