"""docs/protocol.md and the code agree: messages, fields, actions, events, view, errors, limits,
and every JSON example on the page is a valid message, event or view."""

from __future__ import annotations

import json
import re
import types
import typing
from pathlib import Path

import attrs
import pytest

from shared import codec, events, wire
from shared import messages as m
from shared.actions import ACTION_TYPES
from shared.errors import ERROR_CODES
from shared.view import PlayerView, RoomStatus, View, parse_view

DOC = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text("utf-8")


def section(text: str, title: str, level: int = 2) -> str:
    """The body of the heading ``title`` (up to the next heading of the same or a higher
    level)."""
    marks = "#" * level
    match = re.search(rf"^{marks} {re.escape(title)}\s*$", text, re.M)
    assert match, f"no heading {marks} {title}"
    end = re.search(rf"^#{{1,{level}}} ", text[match.end():], re.M)
    return text[match.end(): match.end() + end.start() if end else len(text)]


def subsections(text: str) -> dict[str, list[str]]:
    """``### `name` `` headings in ``text`` → their bodies (a name may appear twice)."""
    out: dict[str, list[str]] = {}
    parts = re.split(r"^### `([a-z_]+)`\s*$", text, flags=re.M)
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        out.setdefault(name, []).append(body)
    return out


def first_table(text: str) -> list[list[str]]:
    """The rows (cells) of the first markdown table in ``text``, header excluded."""
    rows, started = [], False
    for line in text.splitlines():
        if line.startswith("|"):
            started = True
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif started:
            break
    assert len(rows) >= 2, "no table"
    return rows[2:]


def names(cell: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`", cell)


def wire_fields(cls: type) -> set[str]:
    return {a.name.removesuffix("_") for a in attrs.fields(cls)}


REQUESTS = subsections(section(DOC, "Requests"))
REPLIES = subsections(section(DOC, "Replies and pushes"))


def test_the_page_documents_exactly_the_message_types_by_direction():
    assert set(REQUESTS) == set(m.REQUEST_TYPES)
    assert set(REPLIES) == set(m.SERVER_TYPES)
    assert all(len(bodies) == 1 for bodies in (*REQUESTS.values(), *REPLIES.values()))


@pytest.mark.parametrize(("kind", "registry", "docs"), [
    *((k, m.REQUEST_TYPES, REQUESTS) for k in m.REQUEST_TYPES),
    *((k, m.SERVER_TYPES, REPLIES) for k in m.SERVER_TYPES),
])
def test_each_message_s_table_lists_exactly_its_fields(kind, registry, docs):
    cls = registry[kind]
    documented = [names(row[0])[0] for row in first_table(docs[kind][0])]
    expected = {"id", "kind"} if cls is m.ActionRequest else wire_fields(cls)
    assert sorted(documented) == sorted(expected)


def test_the_room_summary_table_lists_its_keys():
    body = REPLIES["rooms"][0]
    summary = body[body.index("A room summary"):]
    assert {names(row[0])[0] for row in first_table(summary)} == wire_fields(m.RoomSummary)


def test_the_actions_table_lists_every_kind_with_its_fields():
    rows = first_table(section(DOC, "Actions"))
    documented = {names(row[0])[0]: set(names(row[1])) for row in rows}
    assert documented == {kind: wire_fields(cls) for kind, cls in ACTION_TYPES.items()}


def test_the_events_table_lists_every_event_kind_with_its_fields():
    classes = [c for c in vars(events).values() if isinstance(c, type) and hasattr(c, "KIND")]
    rows = first_table(section(DOC, "Events"))
    documented = {names(row[0])[0]: set(names(row[1])) for row in rows}
    assert documented == {c.KIND: wire_fields(c) for c in classes}


def test_the_view_tables_list_every_key():
    body = section(DOC, "The view")
    assert [names(row[0])[0] for row in first_table(body)] == [a.name for a in attrs.fields(View)]
    player = body[body.index("A player map"):]
    assert [names(row[0])[0] for row in first_table(player)] == \
        [a.name for a in attrs.fields(PlayerView)]


def test_the_error_codes_table_is_the_code_s():
    rows = first_table(section(DOC, "Error codes"))
    assert [names(row[0])[0] for row in rows] == list(ERROR_CODES)


def test_the_limits_table_states_the_code_s_limits():
    limits = {row[0]: row[1] for row in first_table(section(DOC, "Limits"))}
    expected = {
        "frame size": codec.MAX_FRAME,
        "string or binary value": codec.MAX_STR_BYTES,
        "array": codec.MAX_ARRAY,
        "map": codec.MAX_MAP,
        "nesting of arrays and maps": codec.MAX_DEPTH,
        "`id`": wire.ID_LIMIT - 1,
        "player name (`hello.name`)": wire.PLAYER_NAME_MAX,
        "room name": wire.ROOM_NAME_MAX,
        "chat text": wire.CHAT_MAX,
        "room id or private code": wire.ROOM_ID_MAX,
        "seat token": wire.TOKEN_MAX,
        "`turn_seconds`": wire.TURN_SECONDS_MAX,
        "`recruit` sizes": wire.RECRUIT_MAX,
        "`build` levels": wire.MAX_LEVELS,
        "castellers in one `build` level": wire.MAX_LEVEL_WIDTH,
        "`history` entries": wire.HISTORY_MAX,
        "account key (`hello.key`)": wire.KEY_MAX,
        "`my_games` entries": wire.GAMES_MAX,
    }
    for label, number in expected.items():
        assert label in limits, label
        assert re.search(rf"\b{number}\b", limits[label]), (label, limits[label])


def test_every_status_row_lists_the_room_statuses():
    rows = re.findall(r"^\| `status` \|.*$", DOC, re.M)
    # (my_games's `status` is a filter, not a room's status.)
    rows = [row for row in rows if "str or nil" not in row]
    # (nor is a tournament's.)
    rows = [row for row in rows if "cancelled" not in row]
    assert len(rows) == 3  # rooms[], the view and games[]
    statuses = [s.value for s in RoomStatus]
    for row in rows:
        # A game of my_games may also be one the host closed.
        extra = ["closed"] if "the host closed" in row else []
        assert re.findall(r'"([a-z]+)"', row) == statuses + extra
    assert sum("the host closed" in row for row in rows) == 1


def _examples() -> list:
    blocks = re.findall(r"```json\n(.*?)```", DOC, re.S)
    return [json.loads(block) for block in blocks]


def test_every_json_example_is_a_valid_message_event_or_view():
    kinds = {c.KIND: c for c in vars(events).values() if isinstance(c, type) and hasattr(c, "KIND")}
    seen_types, views = set(), 0
    for example in _examples():
        if "type" in example:
            message = m.from_wire(example)
            assert codec.decode(codec.encode(message)) == message
            seen_types.add((message.TYPE, type(message) in m.REQUEST_TYPES.values()))
        elif "kind" in example:
            assert set(example) - {"kind"} == wire_fields(kinds[example["kind"]])
        else:
            parse_view(example)
            views += 1
    assert views >= 2
    documented = {(t, True) for t in m.REQUEST_TYPES} | {(t, False) for t in m.SERVER_TYPES}
    assert seen_types == documented  # an example of every message, both `chat`s included


def test_the_game_entry_table_lists_its_keys():
    body = REPLIES["games"][0]
    entry = body[body.index("A game is a map"):]
    assert [names(row[0])[0] for row in first_table(entry)] == \
        [a.name for a in attrs.fields(m.GameEntry)]


def test_the_chat_bound_stated_is_the_store_s():
    from server.store.base import CHAT_KEPT

    assert f"**last {CHAT_KEPT} chat lines**" in section(DOC, "Replies and pushes")


def refusal_codes(cell: str) -> list[str]:
    """The codes of a refusals cell: its `names` outside the parentheses that say when."""
    return names(re.sub(r"\([^)]*\)", "", cell))


def refusal_rows() -> dict[str, list[str]]:
    rows = first_table(section(DOC, "Refusals and order, request by request"))
    return {names(row[0])[0]: row for row in rows}


def test_every_request_has_one_row_of_refusals_and_order():
    rows = first_table(section(DOC, "Refusals and order, request by request"))
    assert sorted(names(row[0])[0] for row in rows) == sorted(m.REQUEST_TYPES)


def test_every_refusal_listed_is_an_error_code():
    for request, row in refusal_rows().items():
        assert set(refusal_codes(row[1])) <= set(ERROR_CODES), request
        assert names(row[2]), f"{request}: what it sends when it succeeds"


def test_what_a_request_sends_first_is_its_reply_or_a_push_named_so():
    """The third column starts with the request's reply (a server message type), or says that
    a push comes first (`resync`)."""
    for request, row in refusal_rows().items():
        first = names(row[2])[0]
        assert first in m.SERVER_TYPES, (request, first)


# -- every integer's range ----------------------------------------------------------------------

#: How a range is stated: "0 to 2^31 − 1", "2 to 4", "−100000 to 100000".
_RANGE = re.compile(r"(?:−|-)?(?:2\^\d+(?: − 1)?|\d[\d,]*) to (?:−|-)?(?:2\^\d+(?: − 1)?|\d[\d,]*)")


def _is_int(hint: object) -> bool:
    """Whether a field's type holds integers (alone, optional, or in a list; bools not)."""
    if hint is int:
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _is_int(args[0])
    if origin in (types.UnionType, typing.Union, tuple, list):
        return any(_is_int(a) for a in args if a is not Ellipsis)
    return False


def _nested(hint: object) -> list[type]:
    """The attrs classes of messages a field's type holds (a room summary in ``rooms``...)."""
    if isinstance(hint, type) and attrs.has(hint) and hint.__module__ == m.__name__:
        return [hint]
    return [c for a in typing.get_args(hint) for c in _nested(a)]


def _integer_fields(cls: type) -> set[str]:
    """The wire names of ``cls``'s integer fields, its nested maps' included."""
    hints = typing.get_type_hints(cls, include_extras=True)
    out: set[str] = set()
    for field in attrs.fields(cls):
        if _is_int(hints[field.name]):
            out.add(field.name.removesuffix("_"))
        for inner in _nested(hints[field.name]):
            out |= _integer_fields(inner)
    return out


def _rows(body: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in body.splitlines() if line.startswith("| `")]


@pytest.mark.parametrize(("kind", "registry", "docs"), [
    *((k, m.REQUEST_TYPES, REQUESTS) for k in m.REQUEST_TYPES),
    *((k, m.SERVER_TYPES, REPLIES) for k in m.SERVER_TYPES),
])
def test_every_integer_field_states_its_range(kind, registry, docs):
    """Each integer a message carries (its own fields, its nested maps', and the record's
    ``game`` map) has a row in the message's section saying its range, "A to B"."""
    cls = registry[kind]
    fields = {"id"} if cls is m.ActionRequest else _integer_fields(cls)
    if cls is m.Record:
        fields |= {"seed", "turn_seconds", "seat", "version"}  # the record's own map
    rows = _rows(docs[kind][0])
    for name in fields:
        stated = [r for r in rows if names(r[0])[:1] == [name]]
        assert stated, f"{kind}: no row for {name}"
        assert any(_RANGE.search(" ".join(r[1:])) for r in stated), \
            f"{kind}: the range of {name} is not stated"


def test_the_version_and_seed_ranges_are_the_code_s():
    from shared.record import SAFE_INT
    from shared.setup import SEED_BITS

    assert wire.VERSION_LIMIT == 2**53 and SAFE_INT == 2**53 - 1 and SEED_BITS == 53
    assert "0 to 2^53 − 1" in REPLIES["state"][0]
    assert "0 to 2^53 − 1" in REPLIES["record"][0]
