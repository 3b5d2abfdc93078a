"""The public view: key for key as documented, no secrets, and back to a usable state."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

import attrs
import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import codec
from shared.actions import Action, Build
from shared.board import BOARD_SKILL_TILES, REGIONS, wheel_segments
from shared.engine import apply, legal_actions, new_game
from shared.errors import ProtocolError, RuleError
from shared.state import GameState, Taken
from shared.view import (
    RoomInfo,
    SeatInfo,
    View,
    build_view,
    make_view,
    parse_view,
    state_from_view,
)
from shared.wire import converter
from tests.support import sample_views
from tests.support.games import any_legal, game, play_out, states
from tests.support.rooms import room_info, room_of
from tests.support.wire_strategies import msgpack_values

NAMES = ("Anna", "Biel", "Carme", "Dani")
VIEW_KEYS = [
    "room", "name", "variant", "seats", "turn_seconds", "status", "round", "turn", "first",
    "done", "deadline", "bag", "wheel", "regions", "festivals", "performances", "prizes",
    "players", "scores", "winners", "spectators",
]
PLAYER_KEYS = ["seat", "name", "bot", "connected", "region", "team", "tower", "skills",
               "tokens", "best", "taken"]


def room_for(state: GameState, **changes) -> RoomInfo:
    """Seat 1 a bot, seat 2 offline."""
    return room_info(state, bots=(1,), offline=(2,), **changes)


def build_now_and_then(state: GameState, seat: int, rng: random.Random) -> Action:
    """Now and then a small tower from the team (so that views show towers and
    performances), when the rules allow it; else any legal action."""
    if rng.random() < 0.15:
        team = sorted(state.players[seat].team, reverse=True)
        pairs = [s for s in set(team) if team.count(s) >= 2]
        candidates = [[[team[0]]]]
        if pairs:
            big = max(pairs)
            smaller = [s for s in team if s < big]
            candidates.append([[big, big], [smaller[0]]] if smaller else [[big, big]])
        build = Build(rng.choice(candidates))
        with contextlib.suppress(RuleError):
            apply(state, seat, build)
            return build
    return any_legal(state, seat, rng)


def random_states(seats: int, variant: str, seed: int) -> Iterator[GameState]:
    """Every state of one game of random legal actions, the last one finished."""
    start = game(seats, seed=seed, variant=variant)
    return states(start, play_out(start, random.Random(seed), build_now_and_then))


def test_a_fresh_game_s_view_has_the_documented_keys_in_order():
    state = new_game(NAMES[:3], variant="normal", seed=4)
    view = build_view(room_for(state), state)
    assert list(view) == VIEW_KEYS
    assert [list(p) for p in view["players"]] == [PLAYER_KEYS] * 3
    assert list(view["regions"]) == list(REGIONS) == list(view["performances"])
    assert list(view["wheel"]) == list(wheel_segments("normal"))
    assert list(view["players"][0]["skills"]) == ["balance", "base", "mix", "strength", "width"]
    assert list(view["players"][0]["taken"]) == ["tiles", "prizes", "sizes", "tokens"]
    assert list(view["prizes"]) == ["trophy", "medal", "ribbon"]
    assert list(view["festivals"][0]) == ["round", "region", "town", "type", "size", "done"]
    assert (view["round"], view["turn"], view["first"]) == (1, state.turn, state.first)
    assert view["bag"] == len(state.bag)
    assert [(p["bot"], p["connected"]) for p in view["players"]] == \
        [(False, True), (True, True), (False, False)]
    assert view["deadline"] == 1_700_000_090.5 and view["status"] == "playing"


def test_the_wheel_shows_ring_position_i_plus_round_minus_one():
    ring = ("base", "special", "mix", "special", "width", "balance", "special", "strength")
    state = attrs.evolve(new_game(NAMES[:2], seed=1), wheel=ring, round=3)
    wheel = build_view(room_for(state), state)["wheel"]
    for i, segment in enumerate(wheel_segments("normal")):
        assert wheel[segment] == ring[(i + 3 - 1) % 8]
    assert sorted(wheel.values()) == sorted(BOARD_SKILL_TILES)


def test_regions_list_castellers_largest_first_and_the_pawns_there():
    state = new_game(NAMES[:3], seed=2)
    players = list(state.players)
    players[0] = attrs.evolve(players[0], region="gir")
    players[2] = attrs.evolve(players[2], region="gir")
    regions = list(state.regions)
    regions[REGIONS.index("gir")] = (2, 9, 5)
    state = attrs.evolve(state, players=tuple(players), regions=tuple(regions))
    view = build_view(room_for(state), state)
    assert view["regions"]["gir"] == {"castellers": [9, 5, 2], "pawns": [0, 2]}
    assert view["regions"]["alt"]["pawns"] == []


def test_before_the_start_the_taken_seats_are_players_with_nothing():
    room = room_info(room="r-2", name="Open", variant="advanced", seats=4, status="waiting",
                     turn_seconds=None, deadline=None,
                     players=(SeatInfo(2, "Carme", bot=True), SeatInfo(0, "Anna")))
    view = build_view(room, None)
    assert list(view) == VIEW_KEYS
    assert (view["round"], view["turn"], view["first"], view["status"]) == \
        (0, None, None, "waiting")
    assert view["bag"] == 150 and view["wheel"] == {} and view["festivals"] == []
    assert view["regions"] == {} and view["performances"] == {}
    assert view["prizes"] == {"trophy": 12, "medal": 14, "ribbon": 14}
    assert [(p["seat"], p["name"], p["bot"]) for p in view["players"]] == \
        [(0, "Anna", False), (2, "Carme", True)]
    assert all(p["team"] == [] and p["tower"] == [] and p["region"] is None
               for p in view["players"])
    assert view["scores"] is None and view["winners"] is None


def _all_keys(value):
    if isinstance(value, dict):
        for key, sub in value.items():
            yield key
            yield from _all_keys(sub)
    elif isinstance(value, list):
        for sub in value:
            yield from _all_keys(sub)


def test_the_view_holds_no_seed_no_bag_order_and_no_token():
    assert "token" not in attrs.fields_dict(RoomInfo)
    assert "token" not in attrs.fields_dict(SeatInfo)
    with pytest.raises(TypeError):
        RoomInfo("r", "n", "normal", 2, token="s3cr3t")  # type: ignore[call-arg]
    *_, middle = (s for s, _ in zip(random_states(3, "normal", 7), range(60), strict=False))
    view = build_view(room_for(middle), middle)
    assert isinstance(view["bag"], int) and view["bag"] == len(middle.bag) > 20
    keys = set(_all_keys(view))
    assert not keys & {"seed", "token", "tokens_secret", "code"}
    frame = codec.encode_state("r-1", 12, view, [])
    assert msgpack.packb(list(middle.bag)) not in frame
    assert msgpack.packb(list(middle.bag[:8])) not in frame


@settings(max_examples=6, deadline=None)
@given(st.integers(2, 4), st.sampled_from(["normal", "advanced"]), st.integers(0, 10**6))
def test_state_from_view_rebuilds_what_the_view_and_the_legal_actions_need(seats, variant, seed):
    for state in random_states(seats, variant, seed):
        room = room_for(state, status="finished" if state.over else "playing")
        view = build_view(room, state)
        rebuilt = state_from_view(view)
        assert build_view(room, rebuilt) == view
        assert len(rebuilt.bag) == len(state.bag)
        if not state.over:
            assert rebuilt.turns_taken == state.turns_taken
            assert set(legal_actions(rebuilt, state.turn)) == \
                set(legal_actions(state, state.turn))
    assert view["scores"] is not None and view["winners"]
    assert [s["total"] for s in view["scores"]] == [s.total for s in state.scores]


def test_the_view_survives_the_codec():
    state = new_game(NAMES[:4], seed=3)
    view = build_view(room_for(state), state)
    push = codec.decode(codec.encode_state("r-1", 1, view, []))
    assert push.view == view
    assert build_view(room_for(state), state_from_view(push.view)) == view


@pytest.mark.parametrize("make", [sample_views.two_seat, sample_views.four_seat,
                                  sample_views.finished, sample_views.waiting])
def test_the_client_s_sample_views_match_the_schema(make):
    view = make()
    assert converter.unstructure(parse_view(view), View) == view
    # a view without `spectators` (a version 1 server's) reads as one with nobody watching
    del view["spectators"]
    assert parse_view(view).spectators == ()


def _broken(change, field):
    view = sample_views.two_seat()
    change(view)
    with pytest.raises(ProtocolError) as info:
        state_from_view(view)
    assert (info.value.code, info.value.field) == ("invalid_field", field)


def test_a_malformed_view_is_one_protocol_error_naming_the_key():
    _broken(lambda v: v["players"][1]["team"].__setitem__(0, 11), "view.players[1].team[0]")
    _broken(lambda v: v.pop("wheel"), "view.wheel")
    _broken(lambda v: v.__setitem__("bag", [3, 1, 4]), "view.bag")
    _broken(lambda v: v.__setitem__("seed", 42), "view.seed")
    _broken(lambda v: v["regions"].pop("ebr"), "view.regions")
    _broken(lambda v: v["wheel"].pop("all"), "view.wheel")
    _broken(lambda v: v["players"].pop(), "view.players")
    _broken(lambda v: v.__setitem__("turn", 3), "view.turn")
    _broken(lambda v: v["festivals"][0].__setitem__("town", "Paris"), "view.festivals[0]")
    _broken(lambda v: v["players"][0]["skills"].__setitem__("mix", 4),
            "view.players[0].skills.mix")
    with pytest.raises(ProtocolError) as info:
        state_from_view(sample_views.waiting())
    assert info.value.field == "view.round"
    with pytest.raises(ProtocolError) as info:
        state_from_view([1, 2])
    assert info.value.field == "view"


def test_a_bag_bigger_than_the_game_is_refused_not_allocated():
    view = sample_views.four_seat()
    view["bag"] = 3_321_693_005  # a hostile server must not make the client build this bag
    with pytest.raises(ProtocolError) as info:
        state_from_view(view)
    assert info.value.field == "view.bag"


@settings(max_examples=50, suppress_health_check=[HealthCheck.too_slow])  # a loaded machine
@given(st.sampled_from(VIEW_KEYS), msgpack_values)
def test_any_damage_to_a_view_is_a_protocol_error(key, value):
    view = sample_views.four_seat()
    view[key] = value
    try:
        state_from_view(view)
    except ProtocolError as exc:
        assert exc.code == "invalid_field" and exc.field.startswith("view")


@pytest.mark.parametrize("make", [sample_views.two_seat, sample_views.four_seat,
                                  sample_views.finished])
def test_views_with_taken_tiles_prizes_sizes_and_scores_round_trip(make):
    view = make()
    state = state_from_view(view)
    assert build_view(room_of(view), state) == view
    if view["scores"]:
        assert [s.total for s in state.scores] == [s["total"] for s in view["scores"]]


def _same(a, b) -> bool:
    """Equal, and of the same types all the way down (a list is not a tuple)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize(("seats", "variant", "seed"), [(2, "advanced", 1), (4, "normal", 2)])
def test_build_view_is_the_view_classes_unstructured(seats, variant, seed):
    # build_view writes a started game's view out directly; it must stay exactly what
    # unstructuring make_view's classes gives, through a whole game.
    for i, state in enumerate(random_states(seats, variant, seed)):
        room = room_for(state, status="finished" if state.over else "playing")
        if i % 3 == 0 or state.over:
            assert _same(build_view(room, state),
                         converter.unstructure(make_view(room, state), View))
    # What random games seldom reach: tiles, prizes and sizes taken, a seat nobody holds.
    players = list(state.players)
    players[0] = attrs.evolve(players[0], tiles=(Taken("lp04", "lle"),),
                              prizes=(Taken("trophy", "bcn"), Taken("medal", "gir")),
                              sizes=(Taken(7, "tar"),), taken_tokens=3)
    state = attrs.evolve(state, players=tuple(players))
    room = room_for(state, players=room_for(state).players[1:])
    assert _same(build_view(room, state), converter.unstructure(make_view(room, state), View))
