"""The lessons of ``castell learn``, as data: a short scripted game, one rule at a time.

Each :class:`Lesson` sets up its position (a :class:`~shared.state.GameState` built for it with
:mod:`client.learn.positions`, one the rules could reach), says in a few lines what it teaches
and which sections of docs/rules.md tell it, and asks the learner for one thing. Its
:attr:`~Lesson.goal` checks the thing was done; :meth:`Lesson.judge` sorts any action the rules
accepted into done, a step on the way (the free actions of §7: building and dismantling), or
off the lesson's point (taken back, the lesson's :attr:`~Lesson.hint` said). What the rules
refuse, the engine refuses in its own words: every lesson names one such try
(:attr:`~Lesson.mistake`, refused for :attr:`~Lesson.mistake_rule`) and one way to do what it
asks (:attr:`~Lesson.answer`). Pure: the tests hold every lesson to all of this by value.

The learner sits in seat 0 of a three-player table, under their own name; Biel and Carme (the
players of the rules' examples) sit beside them and act only in the lessons' past.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from enum import StrEnum

import attrs

from client.learn.positions import (
    at_turn,
    hold_festival,
    set_festival,
    set_player,
    set_region,
    set_row,
    set_wheel,
    spend,
    take_tile,
)
from shared.actions import Action, Build, Dismantle, EndTurn, Move, Recruit, Special, Train, Undo
from shared.engine import new_game
from shared.state import GameState, Skills

#: The learner's seat.
LEARNER = 0
#: The other players, by the rules' examples (one is passed over if the learner has its name).
OTHERS = ("Biel", "Carme", "Dani")
#: The seed of the new game every position starts from (§3).
SEED = 31


class Verdict(StrEnum):
    """What an action the rules accepted does for a lesson."""

    DONE = "done"  # the lesson's one thing is done
    STEP = "step"  # a step on the way: kept
    OFF = "off"  # legal, but not what the lesson asks: taken back


@attrs.frozen
class Lesson:
    """One lesson: see the module docstring."""

    key: str  # stable, kept in the learner's progress
    title: str
    sections: tuple[int, ...]  # of docs/rules.md
    topic: str  # the `rules` page that tells it in short
    teaches: str
    ask: str  # the one thing, in words
    hint: str  # said when a legal action misses the ask
    learned: str  # said once it is done
    answer: tuple[Action, ...]  # one way to do it, action by action
    mistake: Action  # a try the rules refuse...
    mistake_rule: str  # ...for this rule (shared.errors codes)
    position: Callable[[str], GameState]  # the learner's name → the lesson's start
    goal: Callable[[GameState, GameState], bool]  # (the start, now) → done?
    steps: tuple[type, ...] = (Build, Dismantle)

    def judge(self, start: GameState, action: Action, after: GameState) -> Verdict:
        """Whether ``action``, which the rules accepted and which led to ``after``, does
        the lesson's thing, is a step on the way (a free action, or an undo), or misses."""
        if self.goal(start, after):
            return Verdict.DONE
        if isinstance(action, (*self.steps, Undo)):
            return Verdict.STEP
        return Verdict.OFF


# The positions ---------------------------------------------------------------------------------


def table(learner: str) -> GameState:
    """The new game every lesson starts from: the learner in seat 0, two others beside."""
    others = [name for name in OTHERS if name.casefold() != learner.casefold()][:2]
    return new_game([learner, *others], "normal", SEED)


#: The learner's team after round 1: the seven dealt and two recruited.
ROUND_1_TEAM = (9, 9, 9, 7, 7, 5, 5, 3, 2)


def _round_2(learner: str) -> GameState:
    """Round 2, the learner first: everyone's pawn was placed in round 1; Lleida holds
    9 6 6 2; the wheel shows Balance in Lleida and a special tile on `all`; round 3's
    festival is Manresa's (Catalunya Central), size 5."""
    s = set_festival(table(learner), 0, "cen", 5)
    s = set_player(s, 0, team=ROUND_1_TEAM, region="tar")
    s = set_player(s, 1, region="bcn")
    s = set_player(s, 2, region="cen")
    s = set_region(s, "lle", (9, 6, 6, 2))
    s = at_turn(s, 2, first=0, seat=0)
    return set_wheel(s, {"lle": "balance", "all": "special"})


def moving(learner: str) -> GameState:
    """§2, §4: the pawn in Tarragona at the start of the turn."""
    return _round_2(learner)


def recruiting(learner: str) -> GameState:
    """§4: moved to Lleida this turn."""
    s = set_player(_round_2(learner), 0, region="lle")
    return at_turn(s, 2, first=0, seat=0, done=("move",))


def training(learner: str) -> GameState:
    """§4, §7: the two 6s recruited."""
    s = set_player(_round_2(learner), 0, region="lle", team=(*ROUND_1_TEAM, 6, 6))
    s = set_region(s, "lle", (9, 2))
    return at_turn(s, 2, first=0, seat=0, done=("move", "recruit"))


def building(learner: str) -> GameState:
    """§7: Balance trained to rank 1."""
    s = set_player(training(learner), 0, skills=Skills(balance=1))
    return at_turn(s, 2, first=0, seat=0, done=("move", "recruit", "train"))


#: The learner's team from round 3 on.
TEAM = (9, 9, 9, 8, 7, 7, 6, 6, 5, 5, 5, 3, 2)
LEARNER_SKILLS = Skills(balance=1, mix=1)
#: Biel's team and tower at Manresa: 4 levels, one 5 (festival score 5).
BIEL_TEAM = (10, 10, 10, 9, 8, 8, 5, 4, 2)
BIEL_TOWER = ((10, 10, 10), (8, 8), (5,), (2,))


def _round_3(learner: str) -> GameState:
    """Round 3's end is near: the festival at Manresa (Catalunya Central, size 5); Biel
    stands there with a tower of 4 levels."""
    s = set_festival(table(learner), 0, "cen", 5)
    s = set_player(s, 0, team=TEAM, region="cen", skills=LEARNER_SKILLS,
                   tower=((9, 9, 9), (7, 7), (6, 6), (3,)))
    s = set_player(s, 1, team=BIEL_TEAM, region="cen", skills=Skills(balance=1),
                   tower=BIEL_TOWER)
    return set_player(s, 2, region="tar", tower=((8, 8, 8), (6,)))


def festival(learner: str) -> GameState:
    """§5: the learner last of round 3, in Manresa with a tower holding no 5."""
    return at_turn(_round_3(learner), 3, first=1, seat=0, done=("move", "recruit", "train"))


def _after_manresa(learner: str) -> GameState:
    """Manresa's festival held: the learner's trophy and size-5 token, Biel's medal."""
    s = at_turn(_round_3(learner), 4, first=2, seat=0)
    s = set_player(s, 0, tower=((9, 9, 9), (7, 7), (5, 5), (3,)))
    return hold_festival(s, 0, {0: 6, 1: 5}, {0: "trophy", 1: "medal"}, size_token=0)


def performance(learner: str) -> GameState:
    """§6: round 4, the learner in Lleida with a 3·2·1 tower; Lleida's row shows lp04 and
    lp05 and two tokens (Biel's and Carme's); the wheel shows a special tile there."""
    s = _after_manresa(learner)
    s = set_player(s, 0, region="lle", tower=((9, 9, 9), (6, 6), (3,)))
    s = set_row(s, "lle", ("lp04", "lp05"))
    s = spend(spend(s, 1, "lle"), 2, "lle")
    s = at_turn(s, 4, first=2, seat=0, done=("move",))
    return set_wheel(s, {"lle": "special"})


def special(learner: str) -> GameState:
    """§4: round 5, the learner first, moved to Girona this turn, seven tokens."""
    s = _after_manresa(learner)
    s = set_row(s, "lle", ("lp04", "lp05"))
    s = spend(spend(s, 1, "lle"), 2, "lle")
    s = take_tile(s, 0, "lp04")
    s = hold_festival(s, 1, {2: 6, 1: 5}, {2: "trophy", 1: "medal"}, size_token=2)
    s = set_player(s, 0, region="gir")
    return at_turn(s, 5, first=0, seat=0, done=("move",))


#: Round 10: the festivals of rounds 3 to 9 as they went — (participants' scores, prizes,
#: who took the size token) for each of the calendar's first ten.
HISTORY: tuple[tuple[dict[int, int], dict[int, str], int | None], ...] = (
    ({0: 6, 1: 5}, {0: "trophy", 1: "medal"}, 0),
    ({2: 6, 1: 5}, {2: "trophy", 1: "medal"}, 2),
    ({0: 7, 2: 6}, {0: "trophy", 2: "medal"}, None),
    ({1: 7}, {1: "trophy"}, 1),
    ({0: 8, 1: 6}, {0: "trophy", 1: "medal"}, 0),
    ({2: 8}, {2: "trophy"}, 2),
    ({1: 9, 0: 8}, {1: "trophy", 0: "medal"}, None),
    ({0: 9, 2: 7}, {0: "trophy", 2: "medal"}, 0),
    ({2: 9, 0: 8}, {2: "trophy", 0: "medal"}, 2),
    ({1: 10}, {1: "trophy"}, 1),
)
FINAL_TEAM = (10, 10, 10, 10, 9, 9, 9, 8, 8, 8, 7, 7, 6, 6, 6, 5, 5, 5, 4, 3, 2, 2)
FINAL_TOWER = ((10, 10, 10, 10), (8, 8, 8), (6, 6), (4,), (2,))


def scoring(learner: str) -> GameState:
    """§9: round 10, the learner last of the game, in Terres de l'Ebre for Amposta's
    festival (size 8) with a tower of 5 levels and every token spent."""
    s = table(learner)
    s = set_festival(s, 0, "cen", 5)
    s = set_festival(s, 10, "ebr", 8)
    for index, (scores, prizes, token) in enumerate(HISTORY):
        s = hold_festival(s, index, scores, prizes, token)
    s = set_player(s, 0, team=FINAL_TEAM, region="ebr", tower=FINAL_TOWER,
                   skills=Skills(balance=2, mix=1, width=1, strength=1))
    s = set_player(s, 1, team=(9, 9, 9, 9, 8, 8, 7, 6, 5, 4, 4, 1, 1), region="gir",
                   skills=Skills(balance=2, strength=1, base=1),
                   tower=((9, 9, 9), (8, 8), (7,), (6,)))
    s = set_player(s, 2, team=(10, 10, 10, 10, 9, 8, 8, 8, 8, 6, 6, 5, 3), region="ebr",
                   skills=Skills(balance=1, mix=2, width=1),
                   tower=((10, 10, 10), (8, 8), (6,), (3,)))
    for seat, region, tokens in ((0, "gir", 1), (0, "bcn", 2), (0, "tar", 2), (0, "ebr", 2),
                                 (1, "lle", 1), (1, "tar", 1), (1, "alt", 1),
                                 (2, "lle", 1), (2, "cen", 2), (2, "gir", 1)):
        s = spend(s, seat, region, tokens)
    s = set_row(s, "lle", ("lp04", "lp05"))
    s = set_row(s, "gir", ("lp02",))
    s = set_row(s, "tar", ("lp01",))
    s = set_row(s, "cen", ("lp03",))
    s = take_tile(take_tile(s, 0, "lp04"), 0, "lp02")
    s = take_tile(take_tile(s, 1, "lp01"), 2, "lp03")
    return at_turn(s, 10, first=1, seat=0, done=("move", "recruit", "train"))


# What each lesson asks ---------------------------------------------------------------------------


def _in_lleida(start: GameState, now: GameState) -> bool:
    me = now.players[LEARNER]
    return me.region == "lle" and me.tokens == start.players[LEARNER].tokens  # not a special


def _two_sixes(start: GameState, now: GameState) -> bool:
    return Counter(now.players[LEARNER].team)[6] - Counter(start.players[LEARNER].team)[6] == 2


def _balance_up(start: GameState, now: GameState) -> bool:
    return now.players[LEARNER].skills.balance == start.players[LEARNER].skills.balance + 1


def _four_levels(start: GameState, now: GameState) -> bool:
    return len(now.players[LEARNER].tower) >= 4


def _trophy_in_cen(start: GameState, now: GameState) -> bool:
    def trophies(state: GameState) -> int:
        return sum(t.item == "trophy" and t.region == "cen"
                   for t in state.players[LEARNER].prizes)

    return trophies(now) > trophies(start)


def _lp04(start: GameState, now: GameState) -> bool:
    return any(t.item == "lp04" for t in now.players[LEARNER].tiles)


def _special_move(start: GameState, now: GameState) -> bool:
    me = now.players[LEARNER]
    return me.region == "bcn" and me.tokens == start.players[LEARNER].tokens - 1


def _game_over(start: GameState, now: GameState) -> bool:
    return now.over


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        key="moving", title="Moving", sections=(2, 4), topic="map",
        teaches="Your pawn stands in Tarragona (`tar` in the Regions panel). Once a turn you "
                "may move it to an adjacent region: the panel's `next to` column lists them "
                "(Barcelona and Terres de l'Ebre touch by the coastal route). The very first "
                "move of a game places the pawn anywhere.",
        ask="Move your pawn from Tarragona to Lleida.",
        hint="Lleida (`lle`) is next to Tarragona",
        learned="Your pawn stands in Lleida: this turn you recruit and train from there. You "
                "have moved this turn; the next move waits for your next turn (or for a "
                "special action: lesson 7).",
        answer=(Move("lle"),), mistake=Move("gir"), mistake_rule="not_adjacent",
        position=moving, goal=_in_lleida,
    ),
    Lesson(
        key="recruiting", title="Recruiting", sections=(4,), topic="turn",
        teaches="Castellers stand face up in every region. Once a turn you may recruit one or "
                "two of them from the region your pawn stands in, and you choose which. Your "
                "team only grows: building, performing and festivals never use anyone up.",
        ask="Recruit the two 6s of Lleida.",
        hint="Lleida holds 9 6 6 2, and `recruit` names the sizes you take",
        learned="Two 6s joined your team (your panel's `team`). Lleida holds fewer now: the "
                "regions are refilled from the bag after rounds 2, 4, 6 and 8 (§8).",
        answer=(Recruit((6, 6)),), mistake=Recruit((5,)), mistake_rule="not_in_region",
        position=recruiting, goal=_two_sixes,
    ),
    Lesson(
        key="training", title="Training and skills", sections=(4, 7), topic="skills",
        teaches="Each region has a segment of the skill wheel (the `trains` column), and so "
                "has `all`. Once a turn you may train with your region's tile or the `all` "
                "one: a skill tile raises that skill a rank (0 to 3); a special tile gives a "
                "free effect instead (lesson 6). Skills let towers break the basic rules: "
                "Balance lets a level be as wide as the one below it. The wheel turns each "
                "round.",
        ask="Raise your Balance with the tile Lleida's segment shows.",
        hint="Lleida's segment shows Balance: `train region` uses your region's tile",
        learned="Your Balance is at rank 1: in each tower you build, one level may be as "
                "wide as the level below it. Each rank more allows one more such level.",
        answer=(Train("region"),), mistake=Train("region", effect="move", region="bcn"),
        mistake_rule="not_special",
        position=training, goal=_balance_up,
    ),
    Lesson(
        key="building", title="Building a tower", sections=(7,), topic="towers",
        teaches="You build a tower from your team, bottom level first, levels split by `/`. "
                "Without skills a tower keeps four rules: one size per level, smaller on "
                "top, narrower on top, at most 3 wide; so at most 3 levels. Each skill rank "
                "lets it break one rule once. Building is free, as often as you like; a new "
                "tower replaces the old, and it stands between turns.",
        ask="Build a tower of 4 levels: your Balance lets one level be as wide as the one "
            "below.",
        hint="levels of 3, 2, 2 and 1 castellers, each level's size smaller than the one "
             "below, use Balance once",
        learned="Your tower stands with 4 levels, the least a festival takes (lesson 5). Its "
                "levels hold 3, 2, 2 and 1: the second 2 is your Balance at work.",
        answer=(Build(((9, 9, 9), (7, 7), (6, 6), (3,))),),
        mistake=Build(((9, 9, 9), (7, 7), (6, 6), (5, 5))),
        mistake_rule="tower_missing_skill",
        position=building, goal=_four_levels,
    ),
    Lesson(
        key="festivals", title="Festivals and prizes", sections=(5,), topic="festivals",
        teaches="Festivals close rounds 3 to 10 (the Festivals panel). Whoever's pawn stands in "
                "the festival's region with a tower of 4 levels or more holding the size "
                "token's size takes part, and scores 1 a level plus 1 a casteller of that "
                "size. The best takes a trophy (5 points), the next a medal (3); the most "
                "castellers of the size takes the size token. Your best score is your best "
                "tower.",
        ask="Win the trophy at Manresa's festival (size 5), held when you end this turn, the "
            "last of round 3.",
        hint="your tower holds no 5, so it cannot take part: rebuild it with your 5s first "
             "(Biel's scores 5), then `end`",
        learned="You scored 6 (4 levels and two 5s) to Biel's 5: the trophy and the size-5 "
                "token are yours, and belong to Catalunya Central; your best tower is 6. Then "
                "round 4 began: the first-player marker passed on, the wheel turned.",
        answer=(Build(((9, 9, 9), (7, 7), (5, 5), (3,))), EndTurn()),
        mistake=Build(((9, 9, 9), (7, 7), (5, 5), (5,))), mistake_rule="tower_missing_skill",
        position=festival, goal=_trophy_in_cen,
    ),
    Lesson(
        key="performances", title="Local performances", sections=(6,), topic="performances",
        teaches="Each region's row shows performance tiles (the Local performances panel). A "
                "shape tile wants your tower's levels to hold its counts, bottom first; an "
                "exhibition, as many levels as its points, using its skills. You need a "
                "perform effect there: a special action, or a special tile when you train "
                "(free). You take the tile's points and every token lying on the row.",
        ask="Complete lp04 (shape 3·2·1) with the special tile Lleida's segment shows.",
        hint="your tower [9,9,9] [6,6] [3] has lp04's shape: `train region perform lp04`",
        learned="lp04 is yours: 3 points at the end, and the two tokens Biel and Carme had "
                "left on Lleida's row, 1 point each. Your tower still stands.",
        answer=(Train("region", effect="perform", tile="lp04"),),
        mistake=Train("region", effect="perform", tile="lp05"),
        mistake_rule="tile_wrong_shape",
        position=performance, goal=_lp04,
    ),
    Lesson(
        key="special", title="Special actions", sections=(4,), topic="turn",
        teaches="You have 7 special action tokens. Once a turn you may spend one for a "
                "special move, recruit (one casteller) or perform. It lies on the row of the "
                "region you stand in (for a move, the one you leave); the next performance "
                "there takes it. Unspent tokens score nothing.",
        ask="You moved this turn already: go on to Barcelona with a special move.",
        hint="`special move bcn` spends a token for it",
        learned="Your pawn stands in Barcelona, and your token lies on Girona's row: whoever "
                "completes a performance in Girona next takes it.",
        answer=(Special("move", region="bcn"),), mistake=Move("bcn"),
        mistake_rule="already_moved",
        position=special, goal=_special_move,
    ),
    Lesson(
        key="scoring", title="Final scoring", sections=(9,), topic="scoring",
        teaches="After round 10's festivals the game ends. Five categories score: best tower; "
                "region diversity (regions where you took a tile, prize or size token: 2 "
                "score 1, 3 score 3, 4 score 5 ... 7 score 14); prizes (trophy 5, medal 3, "
                "ribbon 1); size tokens (2 the first of a size, 1 each more); performances "
                "(tile points, 1 a token taken). Most points wins; a tie, the best tower.",
        ask="End the last turn of the game: Amposta's festival (size 8) and Figueres' are "
            "held, then the final scoring.",
        hint="`end` ends your turn",
        learned="The table at the top is the final score, category by category (PgUp and "
                "PgDn scroll the board). You know the game now: `castell play` starts one "
                "against bots (`--bots easy` for a gentle first one).",
        answer=(EndTurn(),), mistake=Special("recruit", size=5), mistake_rule="no_tokens",
        position=scoring, goal=_game_over,
    ),
)


def lesson_index(key: str | None) -> int | None:
    """The index of the lesson called ``key``, if one is."""
    return next((i for i, lesson in enumerate(LESSONS) if lesson.key == key), None)
