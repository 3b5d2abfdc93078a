"""No one's name or chat takes over anyone's terminal (docs/security.md, "Terminal safety").

Two walls, each tested on its own: the server refuses text with control characters, escape
sequences or bidirectional controls (``invalid_field``), so an honest server never relays
them; and the client neutralises whatever a server sends anyway — a malicious server, run
here for real, feeds it escape sequences in every string it can, and nothing of them reaches
the screen, through the renderers or through the real ``castell --plain``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import re
import sys
import unicodedata

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from websockets.asyncio.server import serve
from websockets.typing import Subprotocol

from client.local.seats import SeatStore
from client.net.net import GameClient, ServerError
from client.net.session import Session
from client.screens.render import chat_text, event_lines, render, render_plain
from shared import messages as m
from shared.errors import ProtocolError
from shared.sanitize import _SEQUENCE, _clean_char, safe
from shared.view import parse_view
from shared.wire import printable
from tests.support import sample_views
from tests.support.hostile import ask, packed, raw

pytestmark = pytest.mark.timeout(60)

#: Sequences that would act on a terminal: set the title (OSC), clear the screen and home
#: the cursor (CSI, 7-bit), colour (CSI, 8-bit 0x9B), a DCS string, a lone ESC, C0 controls
#: that move the cursor or ring the bell, DEL, NEL (C1), and a right-to-left override.
ATTACKS = [
    "\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "\x9b31m", "\x1bP+q544e\x1b\\", "\x1b", "\r",
    "\x08", "\x07", "\x00", "\t", "\n", "\x7f", "\x85", "\u202e", "\u2066", "\u2028",
]
EVIL = "Evil" + "".join(ATTACKS) + "Eve"

_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def inert(text: str, *, lines: bool = True) -> bool:
    """True when ``text`` holds nothing a terminal acts on: no C0 control (but line breaks
    between lines, if ``lines``), no DEL, no C1 control, no bidirectional control."""
    for ch in text:
        code = ord(ch)
        if ch == "\n" and lines:
            continue
        if code < 0x20 or 0x7F <= code <= 0x9F or ch in _BIDI or ch in "\u2028\u2029":
            return False
    return True


# -- the server refuses them ------------------------------------------------------------------


def test_printable_refuses_every_control_and_bidi_character():
    controls = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
    for code in controls:
        assert not printable(f"a{chr(code)}b"), hex(code)
    for ch in [*_BIDI, "\u2028", "\u2029"]:
        assert not printable(f"a{ch}b"), hex(ord(ch))
    assert printable("Núria i en Jordi — 🏰 Castell dels 9 de 8!")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_what_printable_accepts_is_inert(text):
    if printable(text):
        assert inert(text, lines=False)


@pytest.mark.parametrize("attack", ATTACKS)
async def test_the_server_refuses_names_room_names_and_chat_with_escapes(server, url, attack):
    ws = await raw(url)
    bad = f"Eve{attack}x"
    reply = await ask(ws, m.Hello(id=1, name=bad))
    assert (reply.code, reply.field, reply.re) == ("invalid_field", "name", 1)
    assert isinstance(await ask(ws, m.Hello(id=2, name="Eve")), m.Welcome)
    reply = await ask(ws, m.CreateRoom(id=3, name=bad, seats=2))
    assert (reply.code, reply.field) == ("invalid_field", "name")
    assert isinstance(await ask(ws, m.CreateRoom(id=4, name="Eve's", seats=2)), m.Joined)
    reply = await ask(ws, m.Chat(id=5, text=f"hello {attack}"))
    assert (reply.code, reply.field) == ("invalid_field", "text")
    assert isinstance(await ask(ws, m.Chat(id=6, text="hello, Núria 👋")), m.Ok)


async def test_an_honest_server_never_relays_an_escape(connect):
    """Whatever a player tries, the names and chat others receive are printable."""
    eve = await connect()
    for attack in ATTACKS:
        with pytest.raises(ServerError):
            await eve.hello(f"Eve{attack}")
    await eve.hello("Eve")
    joined = await eve.request(m.CreateRoom, name="open", seats=2)
    anna = await connect("Anna")
    await anna.request(m.JoinRoom, room=joined.room)
    for attack in ATTACKS:
        with pytest.raises(ServerError):
            await eve.request(m.Chat, text=f"hi{attack}")
    await eve.request(m.Chat, text="hi")
    chat = await _next_chat(anna)
    assert chat.text == "hi" and chat.name == "Eve"
    state = anna.state
    assert state is not None
    assert all(inert(p["name"], lines=False) for p in state.view["players"])


async def _next_chat(client: GameClient) -> m.ChatPush:
    async with asyncio.timeout(5):
        while not isinstance(push := await client.pushes.get(), m.ChatPush):
            pass
    return push


# -- the client neutralises them -----------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec="utf-8")) | st.lists(st.sampled_from([*ATTACKS, "ab", "["]))
       .map("".join))
def test_safe_leaves_nothing_a_terminal_acts_on(text):
    assert inert(safe(text), lines=False)


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(codec="utf-8")) | st.lists(st.sampled_from([*ATTACKS, "ab", "["]))
       .map("".join))
def test_safe_s_quick_way_for_printable_text_changes_nothing_the_full_one_would(text):
    assert safe(text) == "".join(_clean_char(ch) for ch in _SEQUENCE.sub("", text))


def test_safe_drops_whole_sequences_and_keeps_the_words():
    assert safe("\x1b[31mEvil\x1b[0m") == "Evil"
    assert safe("\x9b1mbold") == "bold"
    assert safe("\x1b]0;pwned\x07title") == "title"
    assert safe("right\u202eto left") == "rightto left"
    assert safe("[bold]not markup[/]") == "[bold]not markup[/]"


def evil_view() -> dict:
    """A real-looking view whose every free-text field carries the attacks. The wire refuses
    such names: a client drops this view as a frame that breaks the protocol."""
    view = sample_views.two_seat()
    view["name"] = EVIL
    for p in view["players"]:
        p["name"] = EVIL + "Mallory"
    for f in view["festivals"]:
        f["town"] = EVIL
    return view


def sly_view() -> dict:
    """A view that passes the wire's checks and still carries the attacks where the wire does
    not look (a festival's town)."""
    view = sample_views.two_seat()
    for f in view["festivals"]:
        f["town"] = EVIL
    return view


EVIL_EVENTS = [
    {"kind": "joined", "seat": 1, "name": EVIL},
    {"kind": "disconnected", "seat": 0, "name": EVIL},
    {"kind": "festival", "round": 4, "region": "gir", "town": EVIL, "size": 5, "results": []},
    {"kind": EVIL, "seat": 0},
]


async def _malicious(ws) -> None:
    """A server that puts escape sequences everywhere it can."""
    async for data in ws:
        req = msgpack.unpackb(data)
        kind, rid = req.get("type"), req.get("id")
        if kind == "hello":
            await ws.send(packed({"type": "welcome", "re": rid, "player": EVIL, "server": EVIL,
                                  "protocol": 1}))
        elif kind == "list_rooms":  # a room list with a hostile name breaks the protocol
            await ws.send(packed({"type": "rooms", "re": rid, "rooms": [
                {"room": "r1", "name": EVIL, "seats": 2, "taken": 1, "variant": "normal",
                 "status": "waiting", "turn_seconds": None}]}))
        elif kind == "join_room":
            await ws.send(packed({"type": "joined", "re": rid, "room": "r1", "seat": 0,
                                 "token": "t0ken", "code": None}))
            await ws.send(packed({"type": "chat", "room": "r1", "seat": 1, "name": EVIL,
                                 "text": EVIL}))
            await ws.send(packed({"type": "state", "room": "r1", "version": 7,
                                 "view": evil_view(), "events": EVIL_EVENTS}))
            await ws.send(packed({"type": "state", "room": "r1", "version": 8,
                                 "view": sly_view(), "events": EVIL_EVENTS}))
        else:
            await ws.send(packed({"type": "error", "re": rid, "code": "illegal_action",
                                 "message": EVIL, "rule": EVIL}))


@contextlib.asynccontextmanager
async def malicious_server():
    async with serve(_malicious, "127.0.0.1", 0, subprotocols=[Subprotocol(m.SUBPROTOCOL)]) as srv:
        yield f"ws://127.0.0.1:{srv.sockets[0].getsockname()[1]}"


async def test_the_client_survives_a_malicious_server_and_shows_nothing_it_sent_raw():
    async with malicious_server() as url:
        client = await GameClient.connect(url)
        await client.hello("Eve")
        # a reply that breaks the protocol fails its request, and the client lives on
        with pytest.raises(ProtocolError):
            await asyncio.wait_for(client.request(m.ListRooms), 5)
        await client.request(m.JoinRoom, room="r1")
        refused = await client.wait_state()
        push = await client.wait_state()
        # the chat push with escapes was refused by the codec, never queued
        assert not any(isinstance(p, m.ChatPush) for p in client.drain())
        with pytest.raises(ServerError) as err:
            await client.request(m.Chat, text="hi")
        assert inert(err.value.message, lines=False) and "Evil" in err.value.message
        await client.close()

    # names with escapes break the protocol: that view never becomes a View to draw
    with pytest.raises(ProtocolError):
        parse_view(refused.view)
    # the renderers make safe even names the wire would refuse (a second wall)
    view = sample_views.renamed(parse_view(push.view), {0: EVIL + "Anna", 1: EVIL + "Bru"})
    events = list(push.events)
    # the full-screen renderer, on a real console, colours off so any ESC is an attack's
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None, force_terminal=True,
                      legacy_windows=False)
    console.print(render(view, 0, events, now=sample_views.NOW, width=120))
    console.print(chat_text(view, {"seat": 1, "name": EVIL, "text": EVIL}))
    shown = out.getvalue()
    assert "Evil" in shown and inert(shown)
    # ...and with colours on, every ESC is one of rich's own SGR colour sequences
    coloured = io.StringIO()
    Console(file=coloured, width=120, color_system="truecolor", force_terminal=True).print(
        render(view, 0, events, now=sample_views.NOW, width=120))
    stripped = re.sub(r"\x1b\[[0-9;]*m", "", coloured.getvalue())
    assert inert(stripped)
    # the plain renderer and the event lines
    lines = [*render_plain(view, 0, events, now=sample_views.NOW), *event_lines(view, events)]
    assert lines and all(inert(line, lines=False) for line in lines)
    assert any("Evil" in line for line in lines)


async def test_a_session_drops_a_view_that_breaks_the_protocol(tmp_path, caplog):
    session = Session("ws://unused", "Eve", seats=SeatStore(tmp_path / "seats.json"))
    async with malicious_server() as url:
        session.url = session.home = url
        await session.open()
        pump = asyncio.create_task(session.run())
        try:
            with caplog.at_level(logging.INFO, logger="castell.client"):
                await session.join("r1")
        finally:
            await session.stop()
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump
    # version 7 named its players with escapes: dropped; version 8 is the room's view
    assert session.state is not None and session.state.version == 8
    assert [p.name for p in session.state.view.players] == ["Anna", "Bru"]
    dropped = [r.getMessage() for r in caplog.records if "dropped a frame" in r.getMessage()]
    assert any("view: name must be" in message for message in dropped), dropped
    assert all(inert(message, lines=False) for message in dropped)


async def test_castell_plain_against_a_malicious_server_prints_nothing_raw(tmp_path):
    from tests.support.terminal import ROOT, client_env

    async with malicious_server() as url:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "client", url, "--plain", "--name", "Eve",
            cwd=ROOT, env=client_env(tmp_path), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(
            proc.communicate(b"list\njoin r1\nsay hi\nmove gir\nquit\n"), 30)
    shown = (out + err).decode("utf-8", errors="replace")
    assert "Evil" in shown, shown
    assert "Mallory" not in shown  # the view that broke the protocol was dropped
    assert "Friday night" in shown  # the next one was shown
    bad = sorted({unicodedata.name(ch, hex(ord(ch))) for ch in shown
                  if not inert(ch)})
    assert not bad, bad
