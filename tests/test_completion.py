"""Tab completion offers exactly what the engine says is legal, and every client command."""

from __future__ import annotations

import contextlib
import itertools

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from client.control.commands import (
    CLIENT_COMMANDS,
    COMMANDS,
    CommandError,
    action_to_command,
    parse,
)
from client.control.completion import CommandCompleter, complete, hint_lines
from client.screens import rulebook
from shared.actions import Build, Dismantle, EndTurn, Move, Recruit, Special, Train
from shared.engine import legal_actions
from shared.state import Skills
from tests.support.games import random_game


def _normal(action):
    """Recruit choices are a multiset: the engine lists (8, 3), a player may type 3 8."""
    if isinstance(action, Recruit):
        return Recruit(tuple(sorted(action.sizes, reverse=True)))
    return action


def walk(legal) -> tuple[set, set]:
    """Accept completions word by word from an empty line: the actions typed on the way,
    and those typed when nothing more was offered."""
    typed, ends = set(), set()
    todo = [w + " " for w in complete("", legal) if w not in CLIENT_COMMANDS and w != "build"]
    while todo:
        line = todo.pop()
        assert len(line.split()) <= 4, line
        action = None
        with contextlib.suppress(CommandError):  # an unfinished line: "special move "
            action = _normal(parse(line))
            typed.add(action)
        more = complete(line, legal)
        if not more:
            assert action is not None, f"completion stuck at {line!r}"
            ends.add(action)
        todo.extend(line + w + " " for w in more)
    return typed, ends


def played_states():
    """States met in seeded random games, at several points of a turn."""
    for seats, seed, variant in [(2, 3, "normal"), (3, 5, "advanced"), (4, 8, "normal")]:
        steps = itertools.islice(random_game(seats, variant=variant, seed=seed), 60)
        for i, step in enumerate(steps):
            if i % 7 == 0:
                yield step.before


def test_completions_reach_exactly_the_legal_actions():
    checked = 0
    for state in played_states():
        legal = {_normal(a) for a in legal_actions(state, state.turn)}
        typed, ends = walk(list(legal))
        assert legal <= typed  # every legal action can be typed by completion alone
        assert ends <= legal  # and completion never leads anywhere else
        assert typed - legal <= {Train("region"), Train("all")}  # "train all " + effect
        checked += 1
    assert checked >= 20


def test_every_offered_word_leads_to_a_legal_action():
    for state in played_states():
        legal = legal_actions(state, state.turn)
        commands = [action_to_command(a).split() for a in legal]
        for words in commands:
            for k in range(1, len(words)):
                line = " ".join(words[:k]) + " "
                offered = complete(line, legal)
                assert words[k] in offered or words[0] == "recruit"
                for w in offered:
                    prefix = [*words[:k], w]
                    assert any(c[:k + 1] == prefix for c in commands) or words[0] == "recruit"


def test_command_names_are_client_commands_plus_the_legal_kinds():
    legal = [Move("gir"), Move("alt"), Recruit((8, 3)), EndTurn()]
    assert complete("", legal) == ["move", "recruit", "build", "end", *CLIENT_COMMANDS]
    assert complete("re", legal) == ["recruit"]
    assert complete("", []) == list(CLIENT_COMMANDS)  # not your turn
    assert complete("move ", []) == []


def test_move_offers_legal_regions_by_id_or_name():
    legal = [Move("alt"), Move("cen"), Move("bcn")]
    assert complete("move ", legal) == ["alt", "cen", "bcn"]
    assert complete("move Bar", legal) == ["bcn"]
    assert complete("move g", legal) == []  # gir is not adjacent
    completer = CommandCompleter(lambda: legal)
    (only,) = completer.get_completions(Document("MOVE cat"), CompleteEvent())
    assert only.text == "cen" and only.start_position == -3
    assert only.display_meta_text == "Catalunya Central"


@pytest.mark.parametrize(("typed", "replaced"), [
    ("move Terres d", "Terres d"), ("move terres de l'", "terres de l'"),
    ("move Terres ", "Terres "),
    ("special move Terres d", "Terres d"),
])
def test_a_region_name_of_several_words_completes_to_its_id(typed, replaced):
    legal = [Move("ebr"), Move("alt"), Special("move", region="ebr")]
    completer = CommandCompleter(lambda: legal)
    (only,) = completer.get_completions(Document(typed), CompleteEvent())
    assert only.text == "ebr" and only.start_position == -len(replaced)
    assert complete("move Alt P", legal) == ["alt"]
    assert complete("move Catalunya C", legal) == []  # not a legal move now
    assert complete("move alt ", legal) == [] and complete("move Terres de l'Ebre ", legal) == []


def test_recruit_offers_sizes_in_the_region_in_any_order():
    legal = [Recruit(s) for s in [(8,), (3,), (2,), (8, 3), (8, 2), (3, 2)]]
    assert complete("recruit ", legal) == ["8", "3", "2"]
    assert complete("recruit 3 ", legal) == ["8", "2"]
    assert complete("recruit 8 3 ", legal) == []
    legal = [Recruit(s) for s in [(8,), (3,), (8, 8), (8, 3)]]
    assert complete("recruit 8 ", legal) == ["8", "3"]
    assert complete("recruit 3 ", legal) == ["8"]


def test_train_and_special_offer_their_effects():
    legal = [Train("region", effect="move", region="alt"),
             Train("region", effect="recruit", size=6), Train("all"),
             Special("perform", tile="lp12"), Special("move", region="alt")]
    assert complete("train ", legal) == ["region", "all"]
    assert complete("train region ", legal) == ["move", "recruit"]
    assert complete("train region recruit ", legal) == ["6"]
    assert complete("train all ", legal) == []
    assert complete("special ", legal) == ["perform", "move"]
    completer = CommandCompleter(lambda: legal)
    (tile,) = completer.get_completions(Document("special perform "), CompleteEvent())
    assert tile.text == "lp12" and "shape 3·3·2·1" in tile.display_meta_text


def test_build_offers_the_team_left_and_level_breaks():
    team = [9, 7, 7, 7, 5, 5, 2]
    legal = [EndTurn()]
    assert complete("build ", legal, team) == ["9", "7", "5", "2"]
    assert complete("build 7 7 7 ", legal, team) == ["9", "5", "2", "/"]
    assert complete("build 7 7 7 / 5 5 / ", legal, team) == ["9", "2"]
    assert complete("build ", legal) == []  # no team known


def test_build_offers_only_the_sizes_that_can_stand_in_the_level_being_typed():
    team = [9, 8, 8, 6, 6, 5, 3, 2]
    legal = [EndTurn()]
    # one casteller above one needs Balance; a 6 on a 6 needs Strength; a 9 is too big
    balance = Skills(balance=1)
    assert complete("build 8 8 / 6 / ", legal, team, balance) == ["5", "3", "2"]
    assert complete("build 8 8 / 6 / ", legal, team, Skills(balance=1, strength=1)) == [
        "6", "5", "3", "2"]
    assert complete("build 8 8 / 6 / ", legal, team, Skills()) == []
    # in a level being typed, a second size only where the level still stands (no Mix: 8 only)
    assert complete("build 8 ", legal, team, Skills()) == ["8", "/"]
    assert complete("build 8 8 / 6 / 3", legal, team, balance) == ["3"]
    # `/` only once the level typed stands; no third casteller above two
    assert complete("build 8 8 / 6 6 ", legal, team, balance) == ["/"]
    assert complete("build 8 8 / 6 6 ", legal, team, Skills()) == []


def test_help_and_rules_complete_their_topics():
    assert complete("help ", []) == list(COMMANDS)
    assert complete("help b", []) == ["build"]
    assert complete("rules ", []) == rulebook.topics()
    assert complete("rules t", []) == ["turn", "towers"]
    assert complete("chat ", [EndTurn()]) == []
    assert complete("quit ", []) == []


def test_hint_lines_are_typable_commands():
    legal = [Move("alt"), Move("cen"), Recruit((8, 3)), Recruit((8,)), Dismantle(), EndTurn()]
    lines = hint_lines(legal)
    assert lines[:4] == ["move alt | cen", "recruit 8 3 | 8", "dismantle", "end"]
    assert lines[-1].startswith("build ")
    assert hint_lines([]) == []


def test_hint_lines_group_a_regions_recruits_and_the_effects_of_each_choice():
    legal = [Recruit(s) for s in [(8,), (7,), (3,), (8, 7), (8, 3), (7, 7), (7, 3)]]
    legal += [Train("region"), Train("all", effect="move", region="lle"),
              Train("all", effect="move", region="bcn"), Train("all", effect="recruit", size=5),
              Special("move", region="lle"), Special("perform", tile="lp12"), EndTurn()]
    lines = hint_lines(legal, {"region": "balance", "all": "special"})
    assert lines[:5] == [
        "recruit 8 | 7 | 3, or two of them (e.g. `recruit 8 7`)",
        "train region (balance)",
        "train all (special): move lle | bcn · recruit 5",
        "special (costs a token): move lle · perform lp12",
        "end",
    ]


@pytest.mark.parametrize("action", [Build(((7, 7, 7), (5, 5))), EndTurn(), Dismantle()])
def test_actions_without_arguments_complete_nothing(action):
    assert complete(action_to_command(action) + " ", [action]) == []
