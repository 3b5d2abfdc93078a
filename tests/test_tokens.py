"""Seat tokens stay secret and cannot be guessed (docs/security.md, "Seat tokens").

A token goes to its holder in ``joined`` and nowhere else: not in any other player's frames,
not in a view or an event, not in the database (only its hash), and not in any log line even
at DEBUG — websockets logs frame contents at DEBUG, which is why both sides hand it a logger
that never does. Guessing is slowed per connection and per address.
"""

from __future__ import annotations

import contextlib
import logging
import random
import sqlite3

import pytest

from client.net.net import GameClient, ServerError
from server.runtime.timers import VirtualClock
from server.store import open_store
from shared import codec
from shared import messages as m
from tests.support.servers import serving
from tests.support.wire import play_legal

pytestmark = pytest.mark.timeout(60)




def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(len(text) - size + 1)]


def _frames_seen(client: GameClient) -> bytes:
    """Everything a client was pushed, re-encoded: what crossed the wire to it."""
    return b"".join(codec.encode(p) for p in client.drain())


async def test_tokens_never_reach_a_log_a_view_an_event_another_player_or_the_database(
        tmp_path, caplog):
    caplog.set_level(logging.DEBUG)  # everything, websockets' frame logging included
    db = tmp_path / "games.sqlite3"
    async with serving(open_store(str(db))) as (_srv, url):
        anna, bernat, watcher = [await GameClient.connect(url) for _ in range(3)]
        await anna.hello("Anna")
        await bernat.hello("Bernat")
        await watcher.hello("Watcher")
        a = await anna.request(m.CreateRoom, name="secret seats", seats=2)
        b = await bernat.request(m.JoinRoom, room=a.room)
        await watcher.request(m.JoinRoom, room=a.room, as_="spectator")
        tokens = [a.token, b.token]
        assert all(tokens) and tokens[0] != tokens[1]
        await anna.request(m.StartGame)
        await anna.wait_state(lambda p: p.view["status"] == "playing")
        await play_legal([anna, bernat], random.Random(4), actions=4)
        await anna.request(m.Chat, text="good luck")
        # Bernat drops and comes back with his token; a stranger tries a wrong one
        await bernat.close()
        back = await GameClient.connect(url)
        await back.hello("Bernat")
        with pytest.raises(ServerError):
            await back.request(m.JoinRoom, room=a.room, token=tokens[0][::-1])
        again = await back.request(m.JoinRoom, room=a.room, token=tokens[1])
        assert again.seat == 1 and again.token is None  # a resume does not resend it
        await anna.wait_state(lambda p: p.view["players"][1]["connected"])
        for c in (anna, back, watcher):  # a round trip: whatever was pushed before is here
            await c.request(m.HistoryRequest, limit=1)
        seen = {"Anna": _frames_seen(anna), "Watcher": _frames_seen(watcher),
                "Bernat back": _frames_seen(back)}
        for c in (anna, back, watcher):
            await c.close()

    secrets = [t.encode() for t in tokens]
    # nobody was pushed a token, their own included (it comes only in their `joined`)
    for who, frames in seen.items():
        assert frames, who
        for token in secrets:
            assert token not in frames, who
    # no log line, at any level, from any logger, holds one (nor its hex)
    logged = "\n".join(f"{r.name} {r.getMessage()}" for r in caplog.records)
    assert any(r.name.startswith("castell") for r in caplog.records)  # logs were captured
    squeezed = logged.replace(" ", "")
    for token in tokens:
        for piece in _pieces(token, 8):  # not even a part of one, as text or as hex
            assert piece not in logged
            assert piece.encode().hex() not in squeezed
    # the database keeps hashes only
    raw_db = db.read_bytes()
    with contextlib.suppress(FileNotFoundError):
        raw_db += (tmp_path / "games.sqlite3-wal").read_bytes()
    for token in secrets:
        assert token not in raw_db
    with sqlite3.connect(db) as conn:
        dump = "\n".join(conn.iterdump())
    assert all(t not in dump for t in tokens)


async def test_wrong_tokens_are_limited_per_connection_and_per_address():
    async with serving(open_store(":memory:"), resume_attempts=2,
                       resume_attempts_per_address=3, resume_window=60.0) as (srv, url):
        # the limits count on a clock of the test's: the window passes when it says
        clock = srv.requests.clock = VirtualClock()
        keeper = await GameClient.connect(url)
        await keeper.hello("Keeper")
        joined = await keeper.request(m.CreateRoom, name="guarded", seats=2)

        async def attempt(client: GameClient, token: str) -> str:
            try:
                await client.request(m.JoinRoom, room=joined.room, token=token)
            except ServerError as exc:
                return exc.code
            await client.request(m.LeaveRoom)
            return "ok"

        guesser = await GameClient.connect(url)
        await guesser.hello("Guesser")
        codes = [await attempt(guesser, f"guess-{i}") for i in range(3)]
        assert codes == ["bad_token", "bad_token", "rate_limited"]  # per connection
        other = await GameClient.connect(url)
        await other.hello("Other")
        # the address has one failure left (3 per address): then even the right token waits
        assert await attempt(other, "guess-x") == "bad_token"
        assert await attempt(other, joined.token) == "rate_limited"
        # probing for rooms with a token counts the same
        with pytest.raises(ServerError) as err:
            await other.request(m.JoinRoom, room="r-nowhere", token="t")
        assert err.value.code == "rate_limited"
        clock.advance(59.0)  # not yet
        assert await attempt(other, joined.token) == "rate_limited"
        clock.advance(1.0)  # the window passes
        assert await attempt(other, joined.token) == "ok"
        for c in (keeper, guesser, other):
            await c.close()
