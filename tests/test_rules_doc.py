"""The players' rules page (docs/rules.md) agrees with the code: every board table, every
tower example, every worked example, and the list of rule codes the engine can refuse with."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from shared import board
from shared.actions import Move, Special
from shared.board import (
    ADJACENT,
    DIVERSITY_POINTS,
    FESTIVALS_PER_ROUND,
    PRIZE_BY_RANK,
    REGION_NAMES,
    TILES,
    TOWNS,
)
from shared.engine import apply, new_game
from shared.festival import of_size
from shared.scoring import score_player
from shared.state import Player, Taken
from shared.tower import check_tile, check_tower, festival_score

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
NAME_TO_ID = {name: rid for rid, name in REGION_NAMES.items()}


def section(title: str) -> str:
    """The text of the section whose heading starts with ``title``, up to the next one."""
    start = DOC.index(f"\n## {title}")
    end = DOC.find("\n## ", start + 1)
    return DOC[start:] if end < 0 else DOC[start:end]


def prose(title: str) -> str:
    """A section's text on one line, quote markers and line breaks gone."""
    return " ".join(re.sub(r"^> ?", "", section(title), flags=re.M).split())


def rows(text: str, first_cell: str) -> list[list[str]]:
    """Table rows (cells stripped) whose first cell matches the regex ``first_cell``."""
    out = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.strip().startswith("|") and re.fullmatch(first_cell, cells[0]):
            out.append(cells)
    return out


def tower(text: str) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(map(int, lv.split(","))) for lv in re.findall(r"\[([\d,]+)\]", text))


def ranks(text: str) -> dict[str, int]:
    return {} if text == "none" else {
        skill: int(rank) for skill, rank in (part.split() for part in text.split(", "))
    }


def test_the_page_has_sections_one_to_ten_in_order():
    numbers = [int(n) for n in re.findall(r"^## §(\d+) ", DOC, re.M)]
    assert numbers == list(range(1, 11))


def test_regions_and_adjacency():
    text = section("§2")
    assert {r[0].strip("`"): r[1] for r in rows(text, "`[a-z]{3}`")} == REGION_NAMES
    table = {r[0]: r[1] for r in rows(text, "|".join(REGION_NAMES.values())) if len(r) == 2}
    assert len(table) == 7
    for name, neighbours in table.items():
        names = [n.replace("(coastal route)", "").strip() for n in neighbours.split(",")]
        listed = {NAME_TO_ID[n] for n in names}
        assert listed == ADJACENT[NAME_TO_ID[name]], name


def test_festival_tables():
    text = section("§5")
    for r in rows(text, r"\d players"):
        seats = int(r[0][0])
        assert [int(c) for c in r[1:9]] == [FESTIVALS_PER_ROUND[seats][n] for n in range(3, 11)]
        assert int(r[9]) == sum(FESTIVALS_PER_ROUND[seats].values())
    towns = {NAME_TO_ID[r[0]]: {"I": r[1], "II": r[2]} for r in rows(text, "|".join(
        REGION_NAMES.values())) if len(r) == 3}
    assert towns == TOWNS
    prizes = {int(r[0]): tuple(c for c in r[1:] if c != "—") for r in rows(text, r"[234]")}
    assert prizes == {n: tuple(p.value for p in table) for n, table in PRIZE_BY_RANK.items()}


def test_local_performance_tiles():
    table = rows(section("§6"), r"`lp\d\d`")
    assert len(table) == 32
    for tile_id, kind, what, points in table:
        tile = TILES[tile_id.strip("`")]
        assert (tile.kind, tile.points) == (kind, int(points))
        if kind == "shape":
            assert tuple(int(n) for n in what.split(",")) == tile.shape
        else:
            assert tuple(what.split(", ")) == tile.skills


def test_tower_examples():
    table = rows(section("§7"), r"\[.*")
    assert len(table) >= 14
    for levels, skills, legal, uses in table:
        check = check_tower(tower(levels), ranks(skills))
        assert check.legal == (legal == "yes"), (levels, skills, check.reason)
        if check.legal:
            used = frozenset().union(*check.readings)
            assert used == (frozenset() if uses == "—" else set(uses.split(", "))), levels


def test_exhibition_examples():
    assert check_tile(tower("[8,8,8,8] [6,6,6] [4,4] [2,2]"), {"balance": 1, "width": 1},
                      "lp27").legal
    assert check_tile(tower("[10,10,10,10,10] [8,8,8,8] [6,6,6] [4,4] [2]"),
                      {"base": 1, "width": 1}, "lp30").legal
    assert not check_tile(tower("[9,9,9,9] [6,6,6] [3,3] [1]"), {"base": 1, "width": 1},
                          "lp30").legal
    assert check_tile(tower("[9,9,9] [6,6] [3]"), {}, "lp04").legal


def test_the_festival_example():
    towers = {
        "Anna": (tower("[9,9,9] [7,7] [5] [3]"), {"balance": 1}),
        "Biel": (tower("[8,8,8] [5,5,5] [3] [1]"), {"balance": 2}),
        "Carme": (tower("[9,9,9,9] [6,6,6] [5,5] [4]"), {"width": 1}),
    }
    for levels, skills in towers.values():
        assert check_tower(levels, skills).legal
    scores = {name: festival_score(levels, 5) for name, (levels, _) in towers.items()}
    assert scores == {"Anna": 5, "Biel": 7, "Carme": 6}
    fives = {name: of_size(levels, 5) for name, (levels, _) in towers.items()}
    assert max(fives, key=fives.get) == "Biel"


def test_the_scoring_example():
    anna = Player(
        seat=0, name="Anna", best=9, tiles=(Taken("lp05", "lle"),), taken_tokens=2,
        prizes=(Taken("medal", "bcn"),), sizes=(Taken(4, "gir"), Taken(4, "gir")),
    )
    score = score_player(anna)
    assert (score.tower, score.diversity, score.prizes, score.sizes, score.performances) == (
        9, 3, 3, 3, 5)
    assert score.total == 23 and "Total 23" in section("§9")


def test_the_diversity_table():
    [header] = rows(section("§9"), "regions")
    [points] = rows(section("§9"), "points")
    assert [int(n) for n in header[1:]] == list(range(8))
    assert tuple(int(n) for n in points[1:]) == DIVERSITY_POINTS


def raised_codes() -> set[str]:
    """Every rule code the engine can refuse an action with, read from its source."""
    codes = {"not_your_turn", "game_over"}
    for module in ("engine", "turn", "legal", "rounds", "festival", "scoring", "setup"):
        source = (ROOT / "shared" / f"{module}.py").read_text(encoding="utf-8")
        codes |= set(re.findall(r'refuse\(\s*"(\w+)"', source))
        codes |= set(re.findall(r'code="(\w+)"', source))
        codes |= set(re.findall(r'"(already_\w+)"', source))  # the once-per-turn table
    tower = (ROOT / "shared" / "tower.py").read_text(encoding="utf-8")
    # the engine never asks check_tower for required skills; check_tile reports those itself
    codes |= set(re.findall(r'_refuse\(\s*"(\w+)"', tower)) - {"tower_skill_unused"}
    return codes


def test_every_rule_code_is_explained():
    explained = set(re.findall(r"`([a-z_]+)`", section("Why an action is refused")))
    assert explained == raised_codes()


@pytest.mark.parametrize("word", ["spec/", "../"])
def test_the_page_stands_alone(word):
    assert word not in DOC


def test_the_wheel_example():
    """§4: the ring in the example, and what the page says three segments show."""
    text = prose("§4")
    ring = re.search(r"The ring holds, from position 0: ([a-z, ]+)\.", text).group(1).split(", ")
    state = attrs.evolve(new_game(["Anna", "Biel"], seed=0), wheel=tuple(ring))
    claims = {
        1: {"alt": "mix", "gir": "special", "all": "special"},
        2: {"alt": "special", "gir": "width", "all": "mix"},
    }
    for round_, shown in claims.items():
        wheel = attrs.evolve(state, round=round_).wheel_tiles()
        assert {segment: wheel[segment] for segment in shown} == shown
    assert "In round 1 Alt Pirineu (segment 0) shows mix and Girona (segment 1) shows" in text
    assert "Alt Pirineu shows special, Girona width, and *all* shows mix" in text


def test_the_special_move_example():
    """§4: Carme in Girona moves to Catalunya Central, then makes a special move to
    Tarragona; her token lies on Catalunya Central's row."""
    state = new_game(["Anna", "Biel", "Carme"], seed=0)
    state = attrs.evolve(state, turn=2, done=())
    players = list(state.players)
    players[2] = attrs.evolve(players[2], region="gir")
    state = attrs.evolve(state, players=tuple(players))
    state, _ = apply(state, 2, Move("cen"))
    state, _ = apply(state, 2, Special("move", region="tar"))
    assert state.players[2].region == "tar"
    assert [row.tokens for row in state.rows] == [
        1 if region == "cen" else 0 for region in REGION_NAMES
    ]
    assert "Her token lies on Catalunya Central's row." in prose("§4")


def test_the_components_table():
    """§1: the counts the page gives are the counts the game uses."""
    table = {r[0]: r[1] for r in rows(section("§1"), r"[a-z ]+")}
    assert table["castellers"].startswith(
        f"{board.CASTELLER_COUNT}, in sizes 1 to 10, fifteen of each size")
    assert board.CASTELLERS_PER_SIZE == 15 and tuple(range(1, 11)) == board.SIZES
    assert table["special action tokens"] == f"{board.SPECIAL_TOKENS} for each player"
    assert table["size tokens"] == "30: sizes 1 to 10, three of each"
    assert board.SIZE_TOKENS_PER_SIZE == 3
    prizes = re.findall(r"(\d+) \*\*(\w+?)(?:ies|s)\*\* \((\d+) points?\)", table["prize tokens"])
    assert {
        {"troph": "trophy"}.get(name, name): (int(n), int(points)) for n, name, points in prizes
    } == {p.value: (board.PRIZE_SUPPLY[p], board.PRIZE_POINTS[p]) for p in board.PRIZES}
    assert sorted(board.BOARD_SKILL_TILES) == sorted(
        [*(s.value for s in board.SKILLS), "special", "special", "special"])


def test_the_wheel_segments_in_order():
    """§4: the segments, clockwise, as the page lists them, are the engine's segments 0-7."""
    listed = re.search(r"The wheel's segments, clockwise, are (.+?) and \*all\* \(or \*none\*\)",
                       prose("§4")).group(1).split(", ")
    assert [NAME_TO_ID[name] for name in listed] == list(board.wheel_segments("normal")[:7])
    assert board.wheel_segments("normal")[7] == "all"
    assert board.wheel_segments("advanced")[7] == "none"


# The order of the rules, and the names the network never carries -------------------------------

#: For each rule of the page's second table, an action the rules engine refuses with it: over
#: the network each is out of its field's form, so the server refuses it as invalid_field.
FORM_ONLY = {
    "unknown_action": {"kind": "fly"},
    "unknown_region": {"kind": "move", "region": "mad"},
    "bad_size": {"kind": "recruit", "sizes": [11]},
    "bad_recruit": {"kind": "recruit", "sizes": [5, 5, 5]},
    "bad_choice": {"kind": "train", "choice": "top"},
    "unknown_tile": {"kind": "special", "effect": "perform", "tile": "lp99"},
    "tower_empty": {"kind": "build", "levels": []},
    "tower_empty_level": {"kind": "build", "levels": [[5], []]},
    "tower_bad_size": {"kind": "build", "levels": [[11]]},
}


def form_only_table() -> set[str]:
    body = section("Why an action is refused")
    second = body[body.index("never\nreceives them"):]
    return set(re.findall(r"`([a-z_]+)`", second))


def test_the_rules_a_client_never_receives_are_refused_for_their_form_over_the_network():
    import msgpack

    from shared.codec import decode_request
    from shared.errors import CastellError

    assert form_only_table() == set(FORM_ONLY)
    for rule, action in FORM_ONLY.items():
        frame = msgpack.packb({"type": "action", "id": 1, **action})
        with pytest.raises(CastellError) as info:
            decode_request(frame)
        assert info.value.code == "invalid_field", rule


def test_an_action_that_breaks_several_rules_is_refused_for_the_first_in_the_page_s_order():
    """A tower nine castellers wide of sizes the team does not have: too wide comes before the
    team (§7); a tower mixing sizes two apart and too wide: its shape comes first; a special
    action without tokens and with a move to a region not adjacent: tokens before the move."""
    from shared.actions import Build
    from shared.errors import RuleError
    from tests.support.games import game, on_turn, with_player

    start = on_turn(game(3, seed=1), 0)
    state = with_player(start, 0, team=(1, 2), region="bcn")
    order = [c for row in rows_of_rules() for c in row]
    cases = [
        (Build(((9,) * 9,)), ("tower_too_wide", "not_in_team")),
        (Build(((9, 7, 7, 7, 7, 7, 7, 7, 7),)), ("tower_mixed_sizes", "tower_too_wide")),
        (Special("move", region="alt"), ("no_tokens", "not_adjacent")),
    ]
    no_tokens = with_player(state, 0, tokens=0)
    for action, (first, later) in cases:
        with pytest.raises(RuleError) as info:
            apply(no_tokens if isinstance(action, Special) else state, 0, action)
        assert info.value.code == first
        assert order.index(first) < order.index(later)


def rows_of_rules() -> list[list[str]]:
    """The rule names of the page's first table of refusals, row by row, in its order."""
    body = section("Why an action is refused")
    first = body[:body.index("never\nreceives them")]
    return [re.findall(r"`([a-z_]+)`", line.split("|")[1])
            for line in first.splitlines() if line.startswith("| `")]
