"""The connection-state table (server.edge.states) and the one table of handlers, by value; and
on a real server, a request type that no state lists."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest

from server.edge.dispatch import COSTLY, Dispatcher
from server.edge.handlers_accounts import AccountHandlers
from server.edge.handlers_lobby import LobbyHandlers
from server.edge.handlers_matches import MatchHandlers
from server.edge.handlers_ratings import RatingHandlers
from server.edge.handlers_room import RoomHandlers
from server.edge.requests import Requests
from server.edge.states import (
    ALLOWED,
    LISTED,
    SILENT,
    TRANSITIONS,
    ConnState,
    InvalidTransition,
    Move,
    refusal,
    transition,
)
from shared import messages as m
from shared.errors import ERROR_CODES, CastellError, ProtocolError
from tests.support.hostile import ask, frame, next_reply, packed, raw

DOC = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text("utf-8")
#: The codes any request may be refused with, whatever it asks (docs: "Refusals and order").
ANY_REQUEST = {"bad_message", "unknown_type", "invalid_field", "hello_first", "rate_limited",
               "internal_error", "moved"}
ANSWERING = [s for s in ConnState if s is not ConnState.CLOSING]


def documented_refusals() -> dict[str, set[str]]:
    """Each request's own refusal codes: the table "Refusals and order, request by request"."""
    start = DOC.index("## Refusals and order, request by request")
    out: dict[str, set[str]] = {}
    for line in DOC[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 3:
            [request] = re.findall(r"`([a-z_]+)`", cells[0])
            out[request] = set(re.findall(r"`([a-z_]+)`", re.sub(r"\([^)]*\)", "", cells[1])))
    return out


#: What a client sees for each request a state refuses: the codes and sentences of the
#: protocol, as they were when the check was a deny-list.
NOT_IN_ROOM = ("not_in_room", "you are not in a room")
NOT_A_PLAYER = ("not_a_player", "spectators cannot do that: only players can")
QUICK = ("already_in_room", "leave your room before asking for a quick match")
IN_ROOM = {
    m.Hello: ("already_in_room", "you cannot change your name while in a room"),
    m.CreateRoom: ("already_in_room", "leave your room before creating another"),
    m.QuickMatch: QUICK,
    m.CancelMatch: QUICK,
    m.ChallengeRequest: ("already_in_room", "leave your room before challenging"),
    m.AcceptChallenge: ("already_in_room", "leave your room before accepting a challenge"),
}
EXPECTED: dict[ConnState, dict[type, tuple[str, str]]] = {
    ConnState.GREETING: {kind: ("hello_first", "say hello first")
                         for kind in m.REQUEST_TYPES.values()
                         if kind not in (m.Hello, m.Identify)},
    ConnState.LOBBY: {kind: NOT_IN_ROOM
                      for kind in (m.LeaveRoom, m.AddBot, m.StartGame, m.Chat, m.ActionRequest,
                                   m.ResignRequest, m.HistoryRequest, m.Resync, m.Rematch)},
    ConnState.SEATED: IN_ROOM,
    ConnState.WATCHING: {
        **IN_ROOM,
        m.JoinRoom: ("already_in_room", "you are already in a room: leave it first"),
        **{kind: NOT_A_PLAYER for kind in (m.AddBot, m.StartGame, m.ActionRequest,
                                           m.ResignRequest, m.Rematch)},
    },
}


def test_every_request_type_is_taken_somewhere_and_refused_with_a_documented_code_elsewhere():
    documented = documented_refusals()
    for name, kind in m.REQUEST_TYPES.items():
        assert any(kind in ALLOWED[state] for state in ConnState), name
        for state in ANSWERING:
            said = refusal(state, kind)
            if kind in ALLOWED[state]:
                assert said is None, (name, state)
                continue
            assert said is not None, (name, state)
            assert said.code in documented[name] | ANY_REQUEST, (name, state, said)
            assert said.code in ERROR_CODES
        assert refusal(ConnState.CLOSING, kind) is SILENT, name  # answered nothing


def test_each_refusal_is_the_code_and_sentence_a_client_saw():
    for state in ANSWERING:
        said = {kind: refusal(state, kind) for kind in m.REQUEST_TYPES.values()}
        assert {kind: (r.code, r.message) for kind, r in said.items() if r is not None} \
            == EXPECTED[state], state


@attrs.frozen
class Teleport:
    """A request type nobody lists in the state table."""

    TYPE: ClassVar[str] = "teleport"
    id: int


def test_a_request_type_no_state_lists_is_refused_in_every_state():
    assert Teleport not in LISTED
    for state in ANSWERING:
        said = refusal(state, Teleport)
        assert said is not None and said.code == "unknown_type", state
        error = said.error()
        assert isinstance(error, ProtocolError) and error.field == "type"
    assert refusal(ConnState.CLOSING, Teleport) is SILENT


def test_the_state_table_and_the_handler_table_list_the_same_requests(server):
    handlers = server.requests.handlers
    assert set(handlers) == LISTED == set(m.REQUEST_TYPES.values())
    assert server.requests.dispatcher.handlers is handlers  # one table
    assert set(COSTLY) <= LISTED


def test_no_class_of_the_protocol_edge_is_over_30_methods():
    for cls in (Requests, Dispatcher, LobbyHandlers, RoomHandlers, AccountHandlers,
                MatchHandlers, RatingHandlers):
        methods = [n for n, v in vars(cls).items() if inspect.isfunction(v)]
        assert len(methods) <= 30, (cls.__name__, len(methods))


def test_transitions():
    assert transition(ConnState.GREETING, Move.HELLO) is ConnState.LOBBY
    assert transition(ConnState.LOBBY, Move.HELLO) is ConnState.LOBBY  # a new name
    assert transition(ConnState.LOBBY, Move.SIT) is ConnState.SEATED
    assert transition(ConnState.LOBBY, Move.WATCH) is ConnState.WATCHING
    for state in (ConnState.SEATED, ConnState.WATCHING):
        assert transition(state, Move.LEAVE) is ConnState.LOBBY
    # Leaving no room changes nothing (the handler's cleanup, a room let go of twice).
    assert transition(ConnState.GREETING, Move.LEAVE) is ConnState.GREETING
    assert transition(ConnState.LOBBY, Move.LEAVE) is ConnState.LOBBY
    for state in ConnState:
        assert transition(state, Move.CLOSE) is ConnState.CLOSING
    # Closing is for good: a seat taken while the connection closed does not reopen it.
    for move in Move:
        assert transition(ConnState.CLOSING, move) is ConnState.CLOSING
    # What a state refuses it cannot move by either: a bug of the server, said so.
    for state, move in [(ConnState.GREETING, Move.SIT), (ConnState.GREETING, Move.WATCH),
                        (ConnState.SEATED, Move.HELLO), (ConnState.WATCHING, Move.HELLO)]:
        assert move not in TRANSITIONS[state]
        with pytest.raises(InvalidTransition):
            transition(state, move)


async def test_a_new_request_type_nobody_lists_is_refused_on_a_real_server(server, url,
                                                                           monkeypatch):
    """A message type the schema knows and a handler is registered for, but no state lists,
    is refused in the lobby and in a room, and its handler never runs."""
    monkeypatch.setitem(m.REQUEST_TYPES, Teleport.TYPE, Teleport)
    ran: list[Any] = []

    async def teleport(conn: Any, msg: Teleport) -> None:
        ran.append(msg)
        conn.send_bytes(frame(m.Ok(re=msg.id)))

    monkeypatch.setitem(server.requests.handlers, Teleport, teleport)
    ws = await raw(url)
    try:
        for msg in (m.Hello(id=1, name="Anna"), m.CreateRoom(id=3, name="R", seats=2)):
            assert not isinstance(await ask(ws, msg), m.Error)
            await ws.send(packed({"type": "teleport", "id": msg.id + 1}))
            reply = await next_reply(ws)
            assert isinstance(reply, m.Error), reply
            assert (reply.re, reply.code) == (msg.id + 1, "unknown_type")
        assert ran == []
    finally:
        await ws.close()


def test_a_refusal_is_an_error_a_client_reads():
    for state in ANSWERING:
        for kind in m.REQUEST_TYPES.values():
            said = refusal(state, kind)
            if said is not None:
                error = said.error()
                assert isinstance(error, CastellError)
                assert m.Error.from_exception(5, error).code == said.code
