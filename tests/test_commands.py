"""Typed commands: every command parses to its action or client command, errors say why."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from client.control import commands as c
from client.control.commands import CommandError, action_to_command, parse
from client.screens import rulebook
from shared.actions import Build, Dismantle, EndTurn, Move, Recruit, Special, Train, Undo
from shared.board import REGION_NAMES
from shared.errors import CastellError
from tests.support.wire_strategies import actions


@pytest.mark.parametrize(("line", "expected"), [
    ("move gir", Move("gir")),
    ("MOVE Girona", Move("gir")),
    ("move tarr", Move("tar")),
    ("move Terres de l'Ebre", Move("ebr")),
    ("move  catalunya   central ", Move("cen")),
    ("move b", Move("bcn")),
    ("recruit 7 5", Recruit((7, 5))),
    ("recruit 10", Recruit((10,))),
    ("recruit 7,5", Recruit((7, 5))),
    ("train region", Train("region")),
    ("train ALL", Train("all")),
    ("train region recruit 6", Train("region", effect="recruit", size=6)),
    ("train all move tar", Train("all", effect="move", region="tar")),
    ("train region perform lp12", Train("region", effect="perform", tile="lp12")),
    ("special move tar", Special("move", region="tar")),
    ("special recruit 6", Special("recruit", size=6)),
    ("special perform lp12", Special("perform", tile="lp12")),
    ("special perform LP5", Special("perform", tile="lp05")),
    ("special perform 7", Special("perform", tile="lp07")),
    ("build 7 7 7 / 5 5 / 2", Build(((7, 7, 7), (5, 5), (2,)))),
    ("build 10 10/9/8", Build(((10, 10), (9,), (8,)))),
    ("build 9", Build(((9,),))),
    ("build [7,7,7] [5,5] [2]", Build(((7, 7, 7), (5, 5), (2,)))),  # as the rules print it
    ("build [7, 7, 7][5 5] [2]", Build(((7, 7, 7), (5, 5), (2,)))),
    ("build [10,10]/[9]", Build(((10, 10), (9,)))),
    ("dismantle", Dismantle()),
    ("end", EndTurn()),
    ("end_turn", EndTurn()),
    ("undo", Undo()),
    ("chat hello there", c.Chat("hello there")),
    ("chat   [bold]x[/]  y ", c.Chat("[bold]x[/]  y")),
    ("hint", c.Hint()),
    ("help", c.Help()),
    ("help build", c.Help("build")),
    ("help end_turn", c.Help("end")),
    ("?", c.Help()),
    ("rules", c.Rules()),
    ("rules towers", c.Rules("towers")),
    ("rules fest", c.Rules("festivals")),
    ("quit", c.Quit()),
    ("exit", c.Quit()),
    ("leave", c.Leave()),
    ("lobby", c.Leave()),
])
def test_parse(line, expected):
    assert parse(line) == expected


@pytest.mark.parametrize(("line", "message"), [
    ("", "type a command"),
    ("   ", "type a command"),
    ("fly gir", "unknown command `fly`"),
    ("move", "move takes a region, e.g. `move gir`"),
    ("move t", "`t` could be tar or ebr"),
    ("move madrid", "no region called `madrid`"),
    ("recruit", "recruit takes one or two sizes, e.g. `recruit 7 5`"),
    ("recruit 1 2 3", "recruit takes one or two sizes"),
    ("recruit 11", "`11` is not a casteller size"),
    ("recruit big", "`big` is not a casteller size"),
    ("train", "train takes `region` or `all`"),
    ("train gir", "train takes `region` or `all`"),
    ("train region fly", "train takes `region` or `all`"),
    ("train all recruit", "train takes `region` or `all`"),
    ("train all recruit 6 7", "train takes `region` or `all`"),
    ("special", "special takes an effect"),
    ("special move", "special takes an effect"),
    ("special perform lp33", "no performance tile `lp33`"),
    ("special perform x1", "no performance tile `x1`"),
    ("build", "build takes levels of sizes separated by /"),
    ("build 7 7 / / 2", "a level of the tower is empty"),
    ("build 7 7 /", "a level of the tower is empty"),
    ("build 7 0", "`0` is not a casteller size"),
    ("build [7,7] 5", "write every level in brackets"),
    ("build [7] [] [2]", "a level of the tower is empty"),
    ("build [7 [5]]", "write every level in brackets"),
    ("dismantle now", "dismantle takes no arguments"),
    ("end please", "end takes no arguments"),
    ("quit now", "quit takes no arguments"),
    ("hint me", "hint takes nothing, or `deep`"),
    ("chat", "chat needs something to say"),
    ("chat " + "x" * 201, "at most 200 characters"),
    ("help fly", "unknown command `fly`"),
    ("help move build", "help takes at most one command"),
    ("rules chess", "no rules topic `chess`; topics: "),
    ("rules towers festivals", "rules takes at most one topic"),
    ("join 2", "`join` is for the lobby: `leave` this game first"),
    ("games", "`games` is for the lobby: `leave` this game first"),
    ("resign now", "resign takes no arguments"),
    ("quick 2", "`quick` is for the lobby: `leave` this game first"),
    ("mvoe gir", "unknown command `mvoe` (did you mean `move`?); `help` lists"),
    ("xyzzy", "unknown command `xyzzy`; `help` lists the commands"),
    ("leave now", "leave takes no arguments"),
])
def test_parse_errors_explain_the_syntax(line, message):
    with pytest.raises(CommandError) as info:
        parse(line)
    assert message in str(info.value)
    assert isinstance(info.value, CastellError) and info.value.code == "bad_command"


def test_every_region_is_reachable_by_id_and_by_name():
    for rid, name in REGION_NAMES.items():
        assert c.resolve_region(rid) == rid
        assert c.resolve_region(name.upper()) == rid
        assert c.resolve_region(name[:5].lower()) == rid


def test_help_lists_every_command_on_one_line_each():
    text = c.help_text()
    for name in c.COMMANDS:
        assert sum(line.startswith(name) for line in text.splitlines()) == 1
    assert max(len(line) for line in text.splitlines()) <= 80
    build = c.help_text("build")
    assert "build SIZES / SIZES" in build and "e.g. build 7 7 7 / 5 5 / 2" in build
    for example in (e for cmd in c.COMMANDS.values() for e in cmd.examples):
        parse(example)  # every example in the help parses


def test_rules_pages_come_as_paragraphs_for_the_screen_to_wrap():
    # the file is wrapped at 90 columns for reading it; a screen of 80 would break each of
    # its lines in two: a page holds one line per paragraph and per list item instead
    for topic in [None, *rulebook.topics()]:
        for line in rulebook.rules_page(topic).splitlines():
            assert not line.startswith("  "), (topic, line)
    festivals = rulebook.rules_page("festivals").splitlines()
    assert festivals[0].startswith("At the end of rounds 3 to 10") and \
        festivals[0].endswith("marks the next ones with ▶.")
    assert any(line.startswith("- Score: ") and line.endswith("it never goes down.")
               for line in festivals)


def test_rules_pages_cover_the_topics():
    assert set(rulebook.topics()) == {"towers", "festivals", "scoring", "turn", "performances",
                                      "map", "wheel", "skills", "round"}
    assert "width" in rulebook.rules_page("towers")
    assert "trophy 5" in rulebook.rules_page("scoring")
    # pages are shown as terminal text: no markdown emphasis left to print as stars
    assert not any("**" in rulebook.rules_page(t) for t in rulebook.topics())
    assert "towers" in rulebook.rules_page(None)


# parse is the inverse of action_to_command ----------------------------------------------

@settings(max_examples=150, deadline=None)
@given(actions)
def test_parse_inverts_action_to_command(action):
    assert parse(action_to_command(action)) == action


def test_action_to_command_examples():
    assert action_to_command(Recruit((7, 5))) == "recruit 7 5"
    assert action_to_command(Train("all", effect="move", region="tar")) == "train all move tar"
    assert action_to_command(Build(((7, 7, 7), (5, 5), (2,)))) == "build 7 7 7 / 5 5 / 2"
    assert action_to_command(EndTurn()) == "end"
    assert action_to_command(Undo()) == "undo"
