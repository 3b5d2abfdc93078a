"""Fuzzing a live server: whatever arrives, it answers once, well, and no game suffers.

A real server runs in an event loop of its own thread, with a two-player game under way
beside it (``tests.support.hostile.Table``). Hypothesis throws frames at it over fresh websockets:
random bytes, text frames, random MessagePack values, deep nesting, huge integers, long
strings and lists (a ``build`` of 10,000 castellers), every field with wrong types, truncated
frames, and valid requests in every order. For each frame the server must send exactly one
reply, decodable by a client (``decode_server``), whose ``re`` is the frame's id when one
was readable (docs/protocol.md, "Envelope"); it must never fail internally; and the game
beside must keep being played, every action acknowledged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from client.net.net import GameClient
from server.app import CastellServer
from shared import codec, engine
from shared import messages as m
from shared.actions import ACTION_TYPES
from shared.errors import ERROR_CODES
from tests.support.hostile import (
    PUSHES,
    LoopThread,
    Table,
    frame,
    packed,
    raw,
    readable_id,
    wait_closed,
)
from tests.support.servers import serving
from tests.support.wire_strategies import actions, msgpack_values, requests

#: One worker runs this module's tests (`--dist loadgroup` in .ci/run), so that its module
#: fixture is made once, not once in every worker that takes one of them.
pytestmark = [pytest.mark.timeout(120), pytest.mark.xdist_group("test_fuzz_server")]

#: Stands for the id of the room where the game beside is played; replaced when sent.
TABLE = "\x00table-room"
SENTINEL = 2**31 - 1


@attrs.define
class Live:
    loop: LoopThread
    server: CastellServer
    url: str
    table: Table
    errors: list[logging.LogRecord]


class _Errors(logging.Handler):
    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record)


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    loop = LoopThread()
    served = serving(rate=100_000.0, burst=100_000.0)
    server, url = loop.run(served.__aenter__())
    table: Table = loop.run(Table.open(url))
    errors: list[logging.LogRecord] = []
    handler = _Errors(errors)
    logging.getLogger("castell").addHandler(handler)

    async def begin() -> None:
        table.start()

    loop.run(begin())
    try:
        yield Live(loop, server, url, table, errors)
    finally:
        logging.getLogger("castell").removeHandler(handler)
        loop.run(table.close())
        loop.run(served.__aexit__(None, None, None))
        loop.close()


# -- what is thrown ------------------------------------------------------------------------------


def _nest(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


#: Every field name any request has (``as_`` is ``as`` on the wire), and the action fields.
FIELDS = sorted(
    {a.name.removesuffix("_") for cls in m.REQUEST_TYPES.values() for a in attrs.fields(cls)}
    | {a.name for cls in ACTION_TYPES.values() for a in attrs.fields(cls)}
    | {"kind", "seat", "re", "version"}
)
TYPES = sorted(m.REQUEST_TYPES) + sorted(m.SERVER_TYPES)

controls = st.sampled_from(["\x1b[2J", "\x9b31m", "\x1b]0;owned\x07", "\x00", "\x7f", "\u202e",
                            "\x85", "\n", "\u2028"])
huge_ints = st.sampled_from([2**31, 2**31 - 1, -1, -(2**63), 2**63, 2**64 - 1, 2**32])
small_wild = st.one_of(
    msgpack_values,
    huge_ints,
    st.builds(lambda a, c, b: a + c + b, st.text(max_size=10), controls, st.text(max_size=10)),
    st.integers(1, 12).map(_nest),
    st.sampled_from(["gir", "bcn", "tar", "all", "region", "move", "perform", TABLE, "", "Anna"]),
    st.lists(st.integers(-3, 12), max_size=4),
    st.lists(st.lists(st.integers(-3, 12), max_size=4), max_size=4),
)
big_wild = st.one_of(
    st.text(min_size=100, max_size=5000),
    st.integers(0, 20_000).map(lambda n: [5] * n),  # long lists: a build of 10,000 castellers
    st.integers(1, 40).map(lambda n: [[5] * 30] * n),
    st.integers(1, 40).map(_nest),
)
wild = st.one_of(*[small_wild] * 6, big_wild)
valid_ids = st.integers(0, 2**31 - 1)
ids = st.one_of(huge_ints, small_wild)


def _fields_of(kind: str) -> list[str]:
    cls = m.REQUEST_TYPES.get(kind)
    if cls is m.ActionRequest:
        return ["kind", *sorted({a.name for c in ACTION_TYPES.values() for a in attrs.fields(c)})]
    if cls is not None:
        return [a.name.removesuffix("_") for a in attrs.fields(cls) if a.name != "id"]
    return FIELDS


def _message(kind: Any) -> st.SearchStrategy[dict[str, Any]]:
    """A map of ``type`` ``kind`` whose fields are mostly its own, of any value at all."""
    fields = _fields_of(kind) if isinstance(kind, str) else FIELDS
    optional = {f: wild for f in fields}
    if "kind" in optional:
        optional["kind"] = st.sampled_from(sorted(ACTION_TYPES)) | small_wild
    # mostly a valid id, so that the fields behind it are looked at; sometimes none or a bad one
    head = st.fixed_dictionaries({"type": st.just(kind), "id": valid_ids})
    head = head | head | head | st.fixed_dictionaries({"type": st.just(kind)},
                                                      optional={"id": ids})
    return st.builds(lambda h, rest: {**h, **rest}, head,
                     st.fixed_dictionaries({}, optional=optional))


message_like = st.one_of(
    st.sampled_from(sorted(m.REQUEST_TYPES)),
    st.sampled_from(sorted(m.REQUEST_TYPES)),
    st.sampled_from(sorted(m.SERVER_TYPES)),
    st.text(max_size=12),
    small_wild,
).flatmap(_message)
# ...and with a stray key of any name besides
message_like = message_like | st.builds(lambda d, k, v: {**d, k: v}, message_like,
                                        st.text(max_size=8), small_wild)

#: Plain values of every wire type, most of them wrong wherever they are put.
plain_values = st.sampled_from([
    None, True, False, 0, -1, 7, 2**31, 2**63, -(2**63), 2**64 - 1, 1.5, float("nan"),
    float("inf"), "", "x", "gir", "all", "special", "\x1b[2J", "\x9b1m", "\u202eevil", [],
    [1, 2], [[1]], [[5] * 30] * 14, [[1] * 31], {}, {"a": 1}, b"\x00\xff", "y" * 4096,
])


def _typed(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """A request of type ``kind`` with a valid id and each of its own fields of any type."""
    fields = {f: plain_values | small_wild for f in _fields_of(kind)}
    if "kind" in fields:
        fields["kind"] = st.sampled_from(sorted(ACTION_TYPES))
    return st.builds(lambda i, rest: {"type": kind, "id": i, **rest}, valid_ids,
                     st.fixed_dictionaries({}, optional=fields))


typed_wrong = st.sampled_from(sorted(m.REQUEST_TYPES)).flatmap(_typed)


def _truncate(msg: Any, cut: float) -> bytes:
    data = codec.encode(msg)
    return data[: int(len(data) * cut)]


hostile = st.one_of(
    st.binary(max_size=3000),
    st.text(max_size=300),  # text frames
    msgpack_values,
    *[message_like] * 2,
    *[typed_wrong] * 4,
    st.builds(_truncate, requests, st.floats(0, 1, exclude_max=True)),
    st.integers(1, 60_000).map(lambda n: b"\x91" * n + b"\xc0"),  # deep nesting, raw
    st.integers(1, 21_000).map(lambda n: b"\x81\xa2id" + b"\x81\xa1a" * n + b"\xc0"),
    requests,
)

opening = [m.Hello(id=1, name="Fuzzy"), m.CreateRoom(id=2, name="fuzz", seats=2),
           m.AddBot(id=3, level="random"), m.StartGame(id=4)]
valid = st.one_of(
    requests,
    *[st.builds(m.ActionRequest, st.integers(0, 99), actions)] * 3,
    st.builds(lambda i, a: m.JoinRoom(id=i, room=TABLE, as_=a), st.integers(0, 99),
              st.sampled_from(["player", "spectator"])),
    st.sampled_from(opening),
    st.builds(lambda i: m.LeaveRoom(id=i), st.integers(0, 99)),
)


def _fill_table(value: Any, room: str) -> Any:
    if value == TABLE:
        return room
    if isinstance(value, list):
        return [_fill_table(v, room) for v in value]
    if isinstance(value, dict):
        return {k: _fill_table(v, room) for k, v in value.items()}
    return value


def to_frame(item: Any, room: str) -> bytes | str:
    """A thrown item as the frame that goes on the wire."""
    if isinstance(item, bytes | str) and item != TABLE:
        return item
    if attrs.has(type(item)):
        item = m.to_wire(item)
    return packed(_fill_table(item, room))


# -- the exchange ------------------------------------------------------------------------------


async def exchange(url: str, room: str, items: list[Any]) -> None:
    """Send every item, then a sentinel request; read exactly one reply per frame.

    A frame over the size limit is sent last, and must close the connection with 1009.
    """
    frames = [to_frame(item, room) for item in items]
    too_big = [f for f in frames if len(f) > codec.MAX_FRAME]
    frames = [f for f in frames if len(f) <= codec.MAX_FRAME]
    ws = await raw(url)
    try:
        for data in frames:
            await ws.send(data)
        await ws.send(frame(m.ListRooms(id=SENTINEL)))
        replies: list[Any] = []
        async with asyncio.timeout(10):
            while len(replies) < len(frames) + 1:
                msg = codec.decode_server(await ws.recv())  # every frame is well formed
                if not isinstance(msg, PUSHES):
                    replies.append(msg)
            # nothing more is owed: the next reply is the next request's
            await ws.send(frame(m.ListRooms(id=SENTINEL - 1)))
            while isinstance(msg := codec.decode_server(await ws.recv()), PUSHES):
                pass
            if too_big:
                await ws.send(too_big[0])
                await wait_closed(ws)
                assert ws.close_code == 1009
    finally:
        await ws.close()
    assert msg.re == SENTINEL - 1, f"an extra reply: {msg}"
    assert replies[-1].re == SENTINEL
    for data, reply in zip(frames, replies, strict=False):
        assert reply.re == readable_id(data), (data[:200], reply)
        if isinstance(reply, m.Error):
            assert reply.code in ERROR_CODES and reply.code != "internal_error", reply


def check_unharmed(live: Live, played_before: int) -> None:
    """The server still serves, logged no failure, and the game beside went on."""
    assert not live.errors, [r.getMessage() for r in live.errors]

    table = live.table

    async def probe() -> None:
        async with await GameClient.connect(live.url) as c:
            assert (await c.hello("After")).protocol == 1
        # the game beside takes a few more steps (or has ended, or broke: said below)
        played = table.played
        async with asyncio.timeout(10):
            while table.played < played + 3 and table.view["status"] != "finished" \
                    and table._task is not None and not table._task.done():
                await asyncio.sleep(0.01)

    live.loop.run(probe())
    assert table._task is not None
    if table._task.done():
        table._task.result()  # raises what broke the game
    finished = table.view["status"] == "finished"
    assert table.played > played_before or finished
    # the room's state is exactly the replay of its actions
    room = live.server.lobby.rooms[table.room].room
    state = engine.new_game([s.name for s in room.seats], room.variant, room.seed)
    for seat, action in room.log:
        state, _ = engine.apply(state, seat, action)
    assert state == room.state


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(hello=st.booleans(), items=st.lists(hostile, min_size=1, max_size=6))
def _hostile_frames(live: Live, hello: bool, items: list[Any]) -> None:
    if hello:  # past the hello, every request type is looked at in full
        items = [m.Hello(id=0, name="Fuzzy"), *items]
    live.loop.run(exchange(live.url, live.table.room, items))


def test_hostile_frames_get_one_well_formed_reply_each(live):
    before = live.table.played
    _hostile_frames(live)
    check_unharmed(live, before)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(items=st.lists(valid, min_size=1, max_size=10)
       | st.lists(valid, max_size=8).map(lambda rest: [*opening, *rest]))
def _valid_requests_in_any_order(live: Live, items: list[Any]) -> None:
    live.loop.run(exchange(live.url, live.table.room, items))


def test_valid_requests_in_any_order_get_one_reply_each(live):
    before = live.table.played
    _valid_requests_in_any_order(live)
    check_unharmed(live, before)
