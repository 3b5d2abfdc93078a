"""The codec: bytes in, one message or one ProtocolError out — whatever the bytes are."""

from __future__ import annotations

import attrs
import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import codec, events
from shared import messages as m
from shared.actions import Build, EndTurn, Move, Recruit, action_fields
from shared.errors import ProtocolError
from shared.state import Score
from shared.view import build_view
from tests.support.games import game, random_game
from tests.support.hostile import packed
from tests.support.rooms import room_info
from tests.support.wire_strategies import (
    actions,
    messages,
    msgpack_values,
    requests,
    server_messages,
)


def _decode_or_refuse(data, decoder=codec.decode):
    """Decode; the only failure allowed is a ProtocolError with a known code."""
    try:
        return decoder(data)
    except ProtocolError as exc:
        assert exc.code in {"bad_message", "unknown_type", "invalid_field"}
        assert exc.re is None or 0 <= exc.re < 2**31
        return exc


@settings(max_examples=60)
@given(messages)
def test_every_message_round_trips_through_bytes(message):
    assert codec.decode(codec.encode(message)) == message


@settings(max_examples=40)
@given(requests)
def test_requests_round_trip_through_decode_request(request):
    assert codec.decode_request(codec.encode(request)) == request


@settings(max_examples=40)
@given(server_messages)
def test_server_messages_round_trip_through_decode_server(message):
    assert codec.decode_server(codec.encode(message)) == message


def test_decode_request_refuses_server_types_with_unknown_type():
    frame = codec.encode(m.Welcome(3, "p1", "0.1.0"))
    with pytest.raises(ProtocolError) as info:
        codec.decode_request(frame)
    assert info.value.code == "unknown_type"
    frame = packed({"type": "state", "id": 5, "room": "r", "version": 1, "view": {},
                    "events": []})
    with pytest.raises(ProtocolError) as info:
        codec.decode_request(frame)
    assert (info.value.code, info.value.re) == ("unknown_type", 5)


@settings(max_examples=200)
@given(st.binary(max_size=200))
def test_random_bytes_only_ever_yield_protocol_errors(data):
    _decode_or_refuse(data)
    _decode_or_refuse(data, codec.decode_request)


@settings(max_examples=100)
@given(msgpack_values)
def test_random_msgpack_values_only_ever_yield_protocol_errors(value):
    _decode_or_refuse(packed(value))


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(requests, st.data())
def test_mutated_requests_only_ever_yield_messages_or_protocol_errors(request, data):
    wire = m.to_wire(request)
    key = data.draw(st.sampled_from(sorted(wire)) | st.text(max_size=6))
    how = data.draw(st.sampled_from(["replace", "drop"]))
    if how == "drop":
        wire.pop(key, None)
    else:
        wire[key] = data.draw(msgpack_values)
    out = _decode_or_refuse(packed(wire), codec.decode_request)
    if isinstance(out, ProtocolError) and out.code == "invalid_field":
        assert out.field  # an invalid field is always named


def test_every_truncated_frame_is_a_bad_message():
    frame = codec.encode(m.ActionRequest(12, Build(((9, 9, 9), (7, 7), (3,)))))
    for cut in range(len(frame)):
        with pytest.raises(ProtocolError) as info:
            codec.decode(frame[:cut])
        assert (info.value.code, info.value.re) == ("bad_message", None)


def test_trailing_bytes_are_a_bad_message():
    frame = codec.encode(m.ListRooms(1))
    with pytest.raises(ProtocolError, match="after its message"):
        codec.decode(frame + frame)


@pytest.mark.parametrize("depth", [11, 500, 5000, 30000])
def test_deep_nesting_is_a_bad_message(depth):
    for opener in (b"\x91", b"\x81\xa1k"):  # an array of one, a map of one
        frame = b"\x82\xa4type\xa5hello\xa4name" + opener * depth + b"\x01"
        with pytest.raises(ProtocolError) as info:
            codec.decode(frame)
        assert info.value.code == "bad_message"


def test_limits_are_bad_messages():
    cases = [
        b"x" * (codec.MAX_FRAME + 1),  # frame size
        packed({"type": "chat", "id": 1, "text": "x" * (codec.MAX_STR_BYTES + 1)}),
        packed({"type": "hello", "id": 1, "name": b"y" * (codec.MAX_STR_BYTES + 1)}),
        packed({"type": "hello", "id": 1, "name": list(range(codec.MAX_ARRAY + 1))}),
        packed({"type": "hello", "id": 1, **{f"k{i}": i for i in range(codec.MAX_MAP)}}),
        packed({"type": "hello", "id": 1, "name": msgpack.ExtType(5, b"abc")}),
        packed({1: "int key", "type": "hello"}),
        packed({"type": "hello", "id": 1, "name": {b"bin": "key"}}),
        "text frames are not MessagePack",
        None,
    ]
    for frame in cases:
        with pytest.raises(ProtocolError) as info:
            codec.decode(frame)
        assert (info.value.code, info.value.re) == ("bad_message", None), frame[:40]


def test_a_smaller_frame_limit_can_be_chosen():
    frame = codec.encode(m.Chat(1, "x" * 100))
    assert codec.decode(frame, max_size=len(frame)) == m.Chat(1, "x" * 100)
    with pytest.raises(ProtocolError):
        codec.decode(frame, max_size=len(frame) - 1)


@pytest.mark.parametrize("value", [2**64 - 1, -(2**63), 2**31, 1e308, float("nan")])
def test_huge_numbers_are_invalid_fields(value):
    with pytest.raises(ProtocolError) as info:
        codec.decode(packed({"type": "create_room", "id": 2, "name": "n", "seats": value}))
    assert (info.value.code, info.value.field, info.value.re) == ("invalid_field", "seats", 2)


def test_decode_accepts_bytearray_and_memoryview():
    frame = codec.encode(m.Hello(1, "Anna"))
    assert codec.decode(bytearray(frame)) == codec.decode(memoryview(frame)) == m.Hello(1, "Anna")


def test_encode_is_binary_msgpack_with_type_first():
    frame = codec.encode(m.Chat(3, "hola"))
    assert msgpack.unpackb(frame, raw=False) == {"type": "chat", "id": 3, "text": "hola"}
    assert next(iter(msgpack.unpackb(frame, raw=False))) == "type"


def test_events_become_wire_maps():
    result = events.FestivalResult(seat=1, score=6, prize="trophy", size_token=True)
    festival = events.FestivalResolved(round=3, region="bcn", town="Barcelona", size=5,
                                       results=(result,))
    assert codec.event_to_wire(festival) == {
        "kind": "festival", "round": 3, "region": "bcn", "town": "Barcelona", "size": 5,
        "results": [{"seat": 1, "score": 6, "prize": "trophy", "size_token": True}],
    }
    score = Score(seat=0, tower=7, diversity=3, prizes=5, sizes=2, performances=4)
    ended = events.GameEnded(scores=(score,), winners=(0,))
    assert codec.event_to_wire(ended) == {
        "kind": "game_over", "winners": [0],
        "scores": [{"seat": 0, "tower": 7, "diversity": 3, "prizes": 5, "sizes": 2,
                    "performances": 4, "total": 21}],
    }
    taken = events.ActionTaken(seat=1, action={"kind": "recruit", "sizes": [4, 2]})
    assert codec.event_to_wire(taken) == {"kind": "action", "seat": 1,
                                          "action": {"kind": "recruit", "sizes": [4, 2]}}
    assert codec.event_to_wire({"kind": "started"}) == {"kind": "started"}


def test_every_event_class_has_a_kind_and_encodes():
    classes = [getattr(events, n) for n in dir(events) if hasattr(getattr(events, n), "KIND")]
    assert len({cls.KIND for cls in classes}) == len(classes)
    sample = [
        events.TurnStarted(seat=2),
        events.RoundStarted(round=4, first=1),
        events.Refilled(drawn={"alt": [3, 1], "gir": []}),
        events.Trained(seat=0, tile="special"),
        events.Performed(seat=1, tile="lp07", region="tar", tokens=2),
        events.ActionTaken(seat=0, action={"kind": "end_turn"}),
        events.PlayerJoined(seat=None, name="Pep"),
        events.PlayerLeft(seat=3, name="Dani"),
        events.PlayerConnected(seat=1, name="Biel"),
        events.PlayerDisconnected(seat=1, name="Biel"),
        events.GameStarted(),
        events.TurnTimedOut(seat=2),
    ]
    frame = codec.encode_state("r1", 8, {"round": 4}, sample)
    push = codec.decode(frame)
    assert push == m.StatePush("r1", 8, {"round": 4}, tuple(map(codec.event_to_wire, sample)))
    assert [e["kind"] for e in push.events] == [e.KIND for e in sample]


def test_an_action_request_decodes_to_the_action_class():
    frame = packed({"type": "action", "id": 4, "kind": "recruit", "sizes": [6]})
    assert codec.decode_request(frame) == m.ActionRequest(4, Recruit((6,)))


def test_a_state_push_is_the_same_bytes_as_its_message_through_a_whole_game():
    # encode_state packs the (already plain) view as it is, without the converter's walk; the
    # bytes must stay those of encode(StatePush(...)), view by view.
    room = room_info(game(3, seed=5))
    pushes = [(build_view(attrs.evolve(room, status="waiting"), None),
               [events.PlayerJoined(seat=2, name="Carme")])]
    for step in random_game(3, seed=5):
        pushes.append((build_view(room, step.state), step.events))
    for version, (view, happened) in enumerate(pushes):
        wire = tuple(map(codec.event_to_wire, happened))
        assert codec.encode_state("r1", version, view, happened) == \
            codec.encode(m.StatePush("r1", version, view, wire))


def test_a_state_push_with_an_event_map_holding_objects_still_encodes():
    # A map event passes as it is; what it holds that is not plain data is the converter's.
    score = Score(seat=0, tower=5, diversity=4, prizes=3, sizes=2, performances=1)
    sample = [{"kind": "custom", "score": score}]
    frame = codec.encode_state("r1", 2, {"round": 4}, sample)
    assert frame == codec.encode(m.StatePush("r1", 2, {"round": 4}, tuple(sample)))
    assert codec.decode(frame).events[0]["score"]["total"] == 15


def _guard_every_value(value, max_depth):
    # The frame check as first written: every value visited, scalars included.
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if type(item) not in (dict, list):
            continue
        if depth > max_depth:
            raise ProtocolError(f"a frame may nest at most {max_depth} deep", code="bad_message")
        if type(item) is list:
            stack.extend((sub, depth + 1) for sub in item)
            continue
        for key, sub in item.items():
            if type(key) is not str:
                raise ProtocolError("map keys must be strings", code="bad_message")
            stack.append((sub, depth + 1))


def _verdict(check, value, max_depth):
    try:
        check(value, max_depth)
    except ProtocolError as exc:
        return exc.code, exc.message
    return None


@settings(max_examples=200)
@given(msgpack_values, st.integers(1, 4))
def test_the_frame_check_finds_the_same_first_breach_as_a_walk_over_every_value(value, depth):
    # The check skips scalars for speed; what it refuses, and for which reason first, is the
    # same as when every value was visited.
    assert _verdict(codec._guard, value, depth) == _verdict(_guard_every_value, value, depth)


# The stored form of an action ------------------------------------------------------------------


@settings(max_examples=80)
@given(actions)
def test_a_stored_action_is_the_msgpack_map_of_its_fields_and_comes_back(action):
    data = codec.pack_action(action)
    assert msgpack.unpackb(data, raw=False) == action_fields(action)
    assert codec.unpack_action(data) == action


def test_a_stored_action_holds_neither_type_nor_id():
    assert codec.pack_action(Move("ebr")) == packed({"kind": "move", "region": "ebr"})
    assert codec.pack_action(EndTurn()) == packed({"kind": "end_turn"})


@pytest.mark.parametrize(("data", "code", "field"), [
    (b"", "bad_message", None),
    (b"\xc1", "bad_message", None),
    (packed({"kind": "end_turn"}) + b"\x00", "bad_message", None),
    (packed(["end_turn"]), "invalid_field", None),
    (packed({"kind": "fly"}), "invalid_field", "kind"),
    (packed({"kind": "recruit", "sizes": [3, 11]}), "invalid_field", "sizes[1]"),
    # the request frame an action was once stored as is not an action
    (codec.encode(m.ActionRequest(0, EndTurn())), "invalid_field", "id"),
], ids=["empty", "not_msgpack", "trailing", "a_list", "unknown_kind", "out_of_range",
        "a_request_frame"])
def test_malformed_stored_bytes_are_a_protocol_error(data, code, field):
    with pytest.raises(ProtocolError) as refused:
        codec.unpack_action(data)
    assert (refused.value.code, refused.value.field) == (code, field)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=64) | msgpack_values.map(packed))
def test_any_stored_bytes_are_an_action_or_a_protocol_error(data):
    try:
        action = codec.unpack_action(data)
    except ProtocolError as exc:
        assert exc.code in {"bad_message", "invalid_field"}
    else:
        assert codec.unpack_action(codec.pack_action(action)) == action
