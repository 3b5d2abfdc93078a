"""The message schema: names, defaults, limits and the errors for each broken rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from shared import messages as m
from shared.actions import (
    ACTION_TYPES,
    Build,
    Dismantle,
    EndTurn,
    Move,
    Recruit,
    Special,
    Train,
    Undo,
    action_fields,
)
from shared.errors import CastellError, GameOver, NotYourTurn, ProtocolError, RuleError
from shared.wire import printable
from tests.support.wire_strategies import actions, messages

PROTOCOL_REQUESTS = {
    "hello", "list_rooms", "create_room", "join_room", "leave_room", "add_bot", "start_game",
    "chat", "action", "history", "my_games", "rematch", "record", "resync",
    "leaderboard", "profile", "quick_match", "cancel_match", "identify", "resign", "review",
    "tournament_create", "tournaments", "tournament", "tournament_join", "tournament_leave",
    "tournament_start",
    "follow", "unfollow", "friends", "presence", "block", "unblock", "inbox",
    "challenge", "accept", "decline", "challenge_cancel",
}
PROTOCOL_REPLIES_AND_PUSHES = {"welcome", "rooms", "joined", "ok", "error", "state", "chat",
                               "notice", "history", "games", "record", "invite", "your_turn",
                               "patch", "leaderboard", "profile", "matched",
                               "match_waiting", "identity", "removed", "review",
                               "review_progress", "tournaments", "tournament",
                               "tournament_table", "tournament_ended",
                               "friends", "inbox", "note", "inbox_new",
                               "challenge_sent", "challenge", "challenge_ended", "p"}


def test_registries_hold_the_protocol_types_by_direction():
    assert set(m.REQUEST_TYPES) == PROTOCOL_REQUESTS
    assert set(m.SERVER_TYPES) == PROTOCOL_REPLIES_AND_PUSHES
    for registry in (m.REQUEST_TYPES, m.SERVER_TYPES):
        for kind, cls in registry.items():
            assert kind == cls.TYPE


@settings(max_examples=60)
@given(messages)
def test_every_message_survives_its_wire_map(message):
    wire = m.to_wire(message)
    assert wire["type"] == message.TYPE
    assert m.from_wire(wire) == message


def test_missing_optional_fields_take_their_defaults():
    assert m.from_wire({"type": "create_room", "id": 1, "name": "Sala", "seats": 3}) == \
        m.CreateRoom(1, "Sala", 3, variant="normal", turn_seconds=None, private=False)
    assert m.from_wire({"type": "join_room", "id": 2, "room": "r1"}) == \
        m.JoinRoom(2, "r1", as_="player", token=None)
    assert m.from_wire({"type": "add_bot", "id": 3}) == m.AddBot(3, level="normal")


def test_as_travels_as_as():
    wire = m.to_wire(m.JoinRoom(4, "r1", as_="spectator"))
    assert wire == {"type": "join_room", "id": 4, "room": "r1", "as": "spectator", "token": None}
    assert m.from_wire(wire).as_ == "spectator"


def test_an_action_request_is_flat():
    request = m.ActionRequest(9, Build(((6, 6), (4,))))
    assert m.to_wire(request) == {"type": "action", "id": 9, "kind": "build",
                                  "levels": [[6, 6], [4]]}
    special = m.to_wire(m.ActionRequest(10, Special("move", region="gir")))
    assert special == {"type": "action", "id": 10, "kind": "special", "effect": "move",
                       "region": "gir"}


def test_ok_leaves_version_out_unless_it_answers_an_action():
    assert m.to_wire(m.Ok(5)) == {"type": "ok", "re": 5}
    assert m.to_wire(m.Ok(5, version=12)) == {"type": "ok", "re": 5, "version": 12}


def test_error_always_carries_re_and_rule():
    assert m.to_wire(m.Error(None, "bad_message", "a message must be a map")) == {
        "type": "error", "re": None, "code": "bad_message",
        "message": "a message must be a map", "rule": None,
    }


def test_history_asks_for_the_latest_200_unless_told_and_is_a_reply_with_re():
    assert m.from_wire({"type": "history", "id": 1}) == m.HistoryRequest(1, None, 200)
    assert m.from_wire({"type": "history", "id": 1, "before": 40, "limit": 500}) == \
        m.HistoryRequest(1, 40, 500)
    for limit in (0, 501, True, 2.0):
        with pytest.raises(ProtocolError) as refused:
            m.from_wire({"type": "history", "id": 1, "limit": limit})
        assert refused.value.field == "limit"
    with pytest.raises(ProtocolError) as refused:
        m.from_wire({"type": "history", "id": 1, "before": -1})
    assert refused.value.field == "before"
    reply = {"type": "history", "re": 1, "entries": [
        {"version": 3, "events": [{"kind": "chat", "seat": None, "name": "Pau", "text": "ep"}]}]}
    said = reply["entries"][0]["events"][0]
    assert m.from_wire(reply) == m.History(1, [m.HistoryEntry(3, [said])])
    assert m.to_wire(m.from_wire(reply)) == reply


def test_chat_is_a_request_with_an_id_and_a_push_without():
    assert isinstance(m.from_wire({"type": "chat", "id": 1, "text": "hola"}), m.Chat)
    push = {"type": "chat", "room": "r1", "seat": None, "name": "Pau", "text": "hola"}
    assert isinstance(m.from_wire(push), m.ChatPush)
    with pytest.raises(ProtocolError) as info:
        m.from_wire(push, sender="client")
    assert (info.value.code, info.value.field) == ("invalid_field", "id")


def _refusal(payload, **kw):
    with pytest.raises(ProtocolError) as info:
        m.from_wire(payload, **kw)
    return info.value.code, info.value.field, info.value.re


HELLO = {"type": "hello", "id": 7}
CREATE = {"type": "create_room", "id": 7, "name": "Sala", "seats": 3}
ACT = {"type": "action", "id": 7}


BROKEN = [
    # types: a bool is not an int, a float is not an int, a string is not a list
    ({**CREATE, "seats": True}, "seats"),
    ({**CREATE, "seats": 3.0}, "seats"),
    ({**CREATE, "private": 1}, "private"),
    ({**CREATE, "name": 5}, "name"),
    ({**CREATE, "turn_seconds": "60"}, "turn_seconds"),
    ({**ACT, "kind": "recruit", "sizes": "12"}, "sizes"),
    ({**ACT, "kind": "build", "levels": {"a": [1]}}, "levels"),
    # ranges
    ({**CREATE, "seats": 1}, "seats"),
    ({**CREATE, "seats": 5}, "seats"),
    ({**CREATE, "turn_seconds": 9}, "turn_seconds"),
    ({**CREATE, "turn_seconds": 7 * 24 * 3600 + 1}, "turn_seconds"),
    ({**ACT, "kind": "special", "effect": "recruit", "size": 0}, "size"),
    ({**ACT, "kind": "special", "effect": "recruit", "size": 11}, "size"),
    ({**ACT, "kind": "recruit", "sizes": [3, 11]}, "sizes[1]"),
    ({**ACT, "kind": "build", "levels": [[5, 5], [3, 0]]}, "levels[1][1]"),
    # enums
    ({**CREATE, "variant": "hard"}, "variant"),
    ({"type": "add_bot", "id": 7, "level": "genius"}, "level"),
    ({"type": "join_room", "id": 7, "room": "r", "as": "judge"}, "as"),
    ({**ACT, "kind": "move", "region": "mad"}, "region"),
    ({**ACT, "kind": "special", "effect": "perform", "tile": "lp33"}, "tile"),
    ({**ACT, "kind": "special", "effect": "fly"}, "effect"),
    ({**ACT, "kind": "train", "choice": "some"}, "choice"),
    ({**ACT, "kind": "teleport"}, "kind"),
    # text: length and printable characters
    ({**HELLO, "name": ""}, "name"),
    ({**HELLO, "name": "x" * 25}, "name"),
    ({**HELLO, "name": "evil\x1b[2J"}, "name"),
    ({**HELLO, "name": "\u202egnirts"}, "name"),
    ({**CREATE, "name": "x" * 41}, "name"),
    ({"type": "chat", "id": 7, "text": "x" * 201}, "text"),
    ({"type": "chat", "id": 7, "text": "bell\x07"}, "text"),
    ({"type": "chat", "id": 7, "text": "csi\x9b31m"}, "text"),
    # list lengths
    ({**ACT, "kind": "recruit", "sizes": []}, "sizes"),
    ({**ACT, "kind": "recruit", "sizes": [1, 2, 3]}, "sizes"),
    ({**ACT, "kind": "build", "levels": []}, "levels"),
    ({**ACT, "kind": "build", "levels": [[10]] * 14}, "levels"),
    ({**ACT, "kind": "build", "levels": [[]]}, "levels[0]"),
    ({**ACT, "kind": "build", "levels": [[9] * 31]}, "levels[0]"),
    # unknown and missing keys
    ({**HELLO, "name": "Anna", "colour": "red"}, "colour"),
    ({**ACT, "kind": "move", "region": "alt", "size": 3}, "size"),
    ({**ACT, "kind": "end_turn", "region": "alt"}, "region"),
    ({"type": "join_room", "id": 7, "room": "r", "as_": "player"}, "as_"),
    (HELLO, "name"),
    ({"type": "create_room", "id": 7, "name": "Sala"}, "seats"),
    ({**ACT, "kind": "move"}, "region"),
    ({**ACT, "region": "alt"}, "kind"),
    # an effect carries exactly its own field (§4)
    ({**ACT, "kind": "special", "effect": "move"}, "region"),
    ({**ACT, "kind": "special", "effect": "move", "region": "alt", "tile": "lp01"}, "tile"),
    ({**ACT, "kind": "special", "region": "alt"}, "effect"),
    ({**ACT, "kind": "train", "choice": "all", "effect": "perform"}, "tile"),
    ({**ACT, "kind": "train", "choice": "all", "size": 4}, "size"),
]


@pytest.mark.parametrize(("payload", "field"), BROKEN)
def test_each_broken_rule_is_an_invalid_field_naming_the_field(payload, field):
    assert _refusal(payload) == ("invalid_field", field, 7)


@pytest.mark.parametrize("bad_id", [-1, 2**31, 2**64 - 1, True, 1.5, "7", None])
def test_an_unreadable_id_is_blamed_and_not_echoed(bad_id):
    assert _refusal({"type": "list_rooms", "id": bad_id}) == ("invalid_field", "id", None)


def test_the_largest_id_is_fine():
    assert m.from_wire({"type": "list_rooms", "id": 2**31 - 1}) == m.ListRooms(2**31 - 1)


def test_a_missing_id_is_an_invalid_field():
    assert _refusal({"type": "start_game"}) == ("invalid_field", "id", None)


@pytest.mark.parametrize("payload", [[1, 2], "hello", None, 3, {"id": 1}, {"type": 4, "id": 1},
                                     {"type": None}])
def test_not_a_map_with_a_string_type_is_a_bad_message_without_re(payload):
    code, _, re = _refusal(payload)
    assert (code, re) == ("bad_message", None)


def test_unknown_types_keep_the_id():
    assert _refusal({"type": "fly", "id": 3}) == ("unknown_type", "type", 3)
    assert _refusal({"type": "welcome", "id": 3, "re": 1, "player": "p", "server": "s"},
                    sender="client") == ("unknown_type", "type", 3)
    assert _refusal({"type": "hello", "id": 3, "name": "x"}, sender="server")[0] == \
        "unknown_type"


def test_a_bad_nested_field_is_named_by_its_path():
    summary = {"room": "r", "name": "n", "seats": 2, "taken": 1, "variant": "normal",
               "status": "lost", "turn_seconds": None}
    assert _refusal({"type": "rooms", "re": 1, "rooms": [summary]}) == \
        ("invalid_field", "rooms[0].status", None)


def test_an_unknown_key_with_strange_characters_is_quoted_in_the_message():
    with pytest.raises(ProtocolError) as info:
        m.from_wire({**HELLO, "name": "Anna", "\x1b[31m": 1})
    assert "\x1b" not in str(info.value) and "\x1b" not in info.value.field


def test_printable():
    for fine in ("Anna", "Núria Puig", "山田", "José 🎉", "a b", "O'Brien-Smith"):
        assert printable(fine), fine
    for bad in ("tab\t", "new\nline", "esc\x1b", "del\x7f", "csi\x9b", "nul\x00",
                "rlo\u202e", "lri\u2066", "lrm\u200e", "sep\u2028", "alm\u061c"):
        assert not printable(bad), repr(bad)


def test_errors_from_exceptions():
    adjacency = RuleError("Girona is not adjacent to Tarragona", code="not_adjacent")
    assert m.Error.from_exception(4, adjacency) == m.Error(
        4, "illegal_action", "Girona is not adjacent to Tarragona", "not_adjacent")
    assert m.Error.from_exception(4, NotYourTurn("it is Pau's turn")) == m.Error(
        4, "not_your_turn", "it is Pau's turn", None)
    assert m.Error.from_exception(4, GameOver("the game is over")).code == "game_over"
    bad = ProtocolError("seats must be from 2 to 4", code="invalid_field", field="seats", re=4)
    assert m.Error.from_exception(bad.re, bad) == m.Error(
        4, "invalid_field", "seats must be from 2 to 4", None, field="seats")
    assert m.Error.from_exception(None, CastellError("no such room", code="room_not_found")) \
        == m.Error(None, "room_not_found", "no such room")
    crash = m.Error.from_exception(8, KeyError("secret internals"))
    assert (crash.re, crash.code) == (8, "internal_error")
    assert "secret" not in crash.message


def test_decoded_actions_are_the_engine_s_action_types():
    request = m.from_wire({"type": "action", "id": 1, "kind": "train", "choice": "region",
                           "effect": "move", "region": "cen"})
    assert request.action == Train("region", effect="move", region="cen")
    assert m.from_wire({**ACT, "kind": "move", "region": "ebr"}).action == Move("ebr")


# An action's fields, apart from any request -------------------------------------------------

ONE_OF_EACH_KIND = [
    Move("ebr"), Recruit((3, 5)), Train("region"), Train("all", effect="recruit", size=4),
    Special("perform", tile="lp01"), Build(((5, 5), (3,))), Dismantle(), EndTurn(),
    Undo(),
]


def test_one_of_each_kind_covers_every_kind():
    assert {a.KIND for a in ONE_OF_EACH_KIND} == set(ACTION_TYPES)


@pytest.mark.parametrize("action", ONE_OF_EACH_KIND, ids=lambda a: a.KIND)
def test_every_kind_of_action_round_trips_through_its_fields(action):
    assert m.action_from_fields(action_fields(action)) == action


@settings(max_examples=80)
@given(actions)
def test_an_action_from_its_fields_is_the_action_of_its_request(action):
    fields = action_fields(action)
    request = m.from_wire({"type": "action", "id": 3, **fields})
    assert m.action_from_fields(fields) == request.action == action


BROKEN_ACTIONS = [
    pytest.param({k: v for k, v in payload.items() if k not in ("type", "id")}, field,
                 id=f"{payload.get('kind')}-{field}")
    for payload, field in BROKEN if payload["type"] == "action"
]


@pytest.mark.parametrize(("fields", "field"), BROKEN_ACTIONS)
def test_bad_fields_are_refused_naming_the_field_as_the_wire_does(fields, field):
    with pytest.raises(ProtocolError) as refused:
        m.action_from_fields(fields)
    assert (refused.value.code, refused.value.field, refused.value.re) == \
        ("invalid_field", field, None)
    with pytest.raises(ProtocolError) as on_the_wire:
        m.from_wire({**ACT, **fields})
    assert str(refused.value) == str(on_the_wire.value)


@pytest.mark.parametrize(("fields", "field"), [
    ({"kind": "end_turn", "type": "action"}, "type"),
    ({"kind": "end_turn", "id": 0}, "id"),
    ({}, "kind"),
    ({"kind": 3}, "kind"),
])
def test_an_action_is_its_fields_alone(fields, field):
    # A stored or recorded action is not a request: a request's own keys are unknown fields.
    with pytest.raises(ProtocolError) as refused:
        m.action_from_fields(fields)
    assert (refused.value.code, refused.value.field) == ("invalid_field", field)


@pytest.mark.parametrize("fields", [None, [["kind", "move"]], "end_turn", 7])
def test_fields_that_are_not_a_map_are_refused(fields):
    with pytest.raises(ProtocolError) as refused:
        m.action_from_fields(fields)
    assert refused.value.code == "invalid_field"
