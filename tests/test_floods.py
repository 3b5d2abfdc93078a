"""Floods that stay within each connection's own limits, against a real server on 127.0.0.1:
spectators chatting, pings, guessing private codes by reconnecting, and many connections of
one address (docs/security.md, "Flow" and "Rooms and seats").

Each test sends a fixed number of messages for a few seconds at most, checks what the
offenders are told, and that the people they could have harmed are served.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time

import pytest
from websockets.exceptions import ConnectionClosed

from client.net.net import GameClient
from server.app import CastellServer
from server.core.limits import Buckets, network_of
from shared import codec
from shared import messages as m
from shared.messages import SUBPROTOCOL
from tests.support.hostile import ask, raw, stalled
from tests.support.servers import serving

pytestmark = pytest.mark.timeout(60)


def _server_side(srv: CastellServer, name: str):
    return next(c for c in srv.connections if c.name == name)


async def _client(url: str, name: str) -> GameClient:
    c = await GameClient.connect(url)
    await c.hello(name)
    return c


# -- 7. spectators' chat ---------------------------------------------------------------------


async def test_spectators_chatting_within_their_rate_never_push_a_slow_player_out():
    # Sleepy holds a seat over a slow link (it reads nothing for now); ten spectators chat,
    # each well within its own rate: 400 lines of about 200 bytes, far more than Sleepy's
    # buffers and its write-buffer limit hold together. (A rate ten times the default's,
    # so that the lines are said in a fraction of a second: what Sleepy is sent is the
    # same at any rate.)
    async with serving(write_buffer_limit=16 * 1024, socket_send_buffer=16 * 1024,
                       rate=200.0, burst=40.0) as (srv, url):
        anna = await _client(url, "Anna")
        joined = await anna.request(m.CreateRoom, name="slow link", seats=2)
        ws = await stalled(url, srv.port, "Sleepy", joined.room, as_="player")
        sleepy = _server_side(srv, "Sleepy")
        fans = [await _client(url, f"Fan{i}") for i in range(10)]
        for fan in fans:
            await fan.request(m.JoinRoom, room=joined.room, as_="spectator")

        async def chatter(fan: GameClient) -> None:
            for i in range(40):
                await fan.request(m.Chat, text=(f"{i:02d} visca el castell! " * 10)[:200])
                await asyncio.sleep(1 / 150)  # pacing: below the rate of 200 a second

        async with asyncio.timeout(20):
            await asyncio.gather(*(chatter(f) for f in fans))
        # the seated player is still there: chat was left out for it, not forced on it
        assert not sleepy.closing, sleepy.close_reason
        assert sleepy.dropped > 0
        # ...and state pushes still reach it once it reads again
        ws.transport.resume_reading()
        await anna.request(m.StartGame)
        async with asyncio.timeout(10):
            while True:
                msg = codec.decode_server(await ws.recv())
                if isinstance(msg, m.StatePush) and msg.view["status"] == "playing":
                    break
        assert not sleepy.closing
        await ws.close()
        for c in [anna, *fans]:
            await c.close()


async def test_a_room_takes_so_many_spectators_and_no_more():
    async with serving(max_spectators=2) as (_srv, url):
        anna = await _client(url, "Anna")
        joined = await anna.request(m.CreateRoom, name="small hall", seats=2)
        watchers = [await raw(url) for _ in range(3)]
        replies = []
        for i, w in enumerate(watchers):
            await ask(w, m.Hello(id=1, name=f"W{i}"))
            replies.append(await ask(w, m.JoinRoom(id=2, room=joined.room, as_="spectator")))
        assert [type(r) for r in replies[:2]] == [m.Joined, m.Joined]
        assert replies[2].code == "room_full" and replies[2].re == 2
        assert "spectators" in replies[2].message
        # seats are not spectators: a player still gets in
        biel = await _client(url, "Biel")
        assert (await biel.request(m.JoinRoom, room=joined.room)).seat == 1
        # and once a spectator leaves, the next one does too
        assert isinstance(await ask(watchers[0], m.LeaveRoom(id=3)), m.Ok)
        again = await ask(watchers[2], m.JoinRoom(id=4, room=joined.room, as_="spectator"))
        assert isinstance(again, m.Joined)
        for w in watchers:
            await w.close()
        await anna.close()
        await biel.close()


async def test_a_room_carries_so_much_chat_and_refusing_it_strikes_nobody():
    async with serving(room_chat_rate=5.0, rate=20.0, burst=40.0, max_strikes=3) as (srv, url):
        anna = await _client(url, "Anna")
        joined = await anna.request(m.CreateRoom, name="chatty", seats=2)
        fans = [await raw(url) for _ in range(4)]
        for i, f in enumerate(fans):
            await ask(f, m.Hello(id=1, name=f"F{i}"))
            await ask(f, m.JoinRoom(id=2, room=joined.room, as_="spectator"))
        started = time.monotonic()
        replies = []
        for n in range(10):  # 40 lines at once: each fan sends 10, within its own burst
            for f in fans:
                replies.append(await ask(f, m.Chat(id=10 + n, text="hola")))
        elapsed = time.monotonic() - started
        ok = sum(isinstance(r, m.Ok) for r in replies)
        refused = [r for r in replies if not isinstance(r, m.Ok)]
        assert ok <= 10 + 5 * elapsed + 1  # the room's burst, and its rate meanwhile
        assert refused and {r.code for r in refused} == {"rate_limited"}
        assert "room" in refused[0].message
        # the room's limit is nobody's fault: nobody was struck or closed for it
        assert all(c.strikes == 0 and not c.closing for c in srv.connections)
        for f in fans:
            await f.close()
        await anna.close()


# -- 8. pings ----------------------------------------------------------------------------------


async def test_a_ping_flood_is_rate_limited_and_closed_and_honest_clients_are_served():
    async with serving(rate=20.0, burst=40.0, max_strikes=50) as (srv, url):
        flooders = [await raw(url) for _ in range(3)]
        for i, w in enumerate(flooders):  # greeted: no hello deadline will close them
            await ask(w, m.Hello(id=1, name=f"Pinger{i}"))
        honest = await _client(url, "Honest")

        async def flood(ws) -> None:
            with contextlib.suppress(ConnectionClosed):
                for i in range(20_000):
                    await ws.ping(i.to_bytes(4, "big"))
                    await asyncio.sleep(0)  # this loop serves the honest client too

        async def round_trips() -> list[float]:
            times = []
            for _ in range(20):
                t = time.monotonic()
                await honest.request(m.ListRooms)
                times.append(time.monotonic() - t)
                await asyncio.sleep(0.02)  # pacing: round trips spread over the flood
            return times

        async with asyncio.timeout(5):
            *_, times = await asyncio.gather(*(flood(w) for w in flooders), round_trips())
            for w in flooders:
                await w.wait_closed()
        # cut off at once: the socket dropped, no closing handshake (1006 on this side)
        assert [w.close_code for w in flooders] == [1006] * 3
        assert [c.close_reason for c in srv.connections if c.name and "Pinger" in c.name] \
            in ([], ["too many messages"] * 3)
        assert len(times) == 20 and max(times) < 2.0
        assert not honest.closed.is_set()
        assert _server_side(srv, "Honest").strikes == 0
        await honest.close()


PING = b"\x89\x80\x00\x00\x00\x00"  # a masked ping frame, no payload (mask 0: no change)


def flood_pings(port: int, frames: int, seconds: float) -> tuple[float, bytes]:
    """A real WebSocket handshake on 127.0.0.1:``port``, then ping frames written as fast
    as TCP takes them (at most ``frames``, for at most ``seconds``) until the server cuts
    the socket; returns how long it took to be cut (``seconds`` if it never was) and every
    byte the server sent after its handshake's answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as sock:
        sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                     f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {SUBPROTOCOL}"
                     "\r\n\r\n".encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(4096)
        head, _, received = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101")
        sock.setblocking(False)
        batch, sent = PING * 1000, 0
        started = time.monotonic()
        cut = seconds
        while sent < frames and time.monotonic() - started < seconds:
            try:
                sent += sock.send(batch) // len(PING)
                received += sock.recv(1 << 20)
            except BlockingIOError:
                time.sleep(0.0005)  # pacing: this thread lets the server's loop run too
            except OSError:  # reset: the server dropped the socket
                cut = time.monotonic() - started
                break
        sock.settimeout(1.0)
        with contextlib.suppress(OSError):
            while chunk := sock.recv(1 << 20):
                received += chunk
        return cut, received


def server_frames(data: bytes) -> list[int]:
    """The opcodes of the (unmasked) frames in what a server sent."""
    opcodes, i = [], 0
    while i + 2 <= len(data):
        length = data[i + 1] & 0x7F
        header = 2 + {126: 2, 127: 8}.get(length, 0)
        if length >= 126:
            length = int.from_bytes(data[i + 2:i + header], "big")
        opcodes.append(data[i] & 0x0F)
        i += header + length
    return opcodes


async def test_raw_ping_floods_are_cut_at_once_and_answered_only_within_the_rate():
    """Four sockets write ping frames as fast as TCP takes them while an honest player
    asks and is answered: each flooder is answered at most its burst of pongs, then cut
    off at once — its socket aborted, no close frame, no closing handshake that would go
    on reading its pings — and the honest round trip stays short meanwhile."""
    async with serving(rate=20.0, burst=40.0, max_strikes=50, close_timeout=5.0) as (srv, url):
        honest = await _client(url, "Honest")
        idle = []
        for _ in range(10):
            t = time.monotonic()
            await honest.request(m.ListRooms)
            idle.append(time.monotonic() - t)
        floods = [asyncio.create_task(asyncio.to_thread(flood_pings, srv.port, 300_000, 4.0))
                  for _ in range(4)]
        during = []
        while not all(f.done() for f in floods):
            t = time.monotonic()
            await honest.request(m.ListRooms)
            during.append(time.monotonic() - t)
            await asyncio.sleep(0.005)  # pacing: round trips spread over the flood
        results = [await f for f in floods]
        print(f"honest round trip idle {max(idle) * 1000:.1f} ms, during the flood "
              f"{max(during) * 1000:.1f} ms (median {sorted(during)[len(during) // 2] * 1000:.1f});"
              f" flooders cut after {max(cut for cut, _ in results) * 1000:.0f} ms, answered "
              f"{max(len(server_frames(r)) for _, r in results)} frames")
        for cut, received in results:
            opcodes = server_frames(received)
            assert cut < 2.0, cut  # cut within a bounded time (its handshake: 5 s)
            assert 0x8 not in opcodes  # no close frame: aborted
            assert set(opcodes) <= {0xA} and len(opcodes) <= 40  # at most its burst of pongs
        assert during and max(during) < 0.5, (max(idle), max(during))
        assert not honest.closed.is_set()
        await honest.close()


# -- 9. guessing private codes -----------------------------------------------------------------


async def _try_code(url: str, code: str, **kwargs) -> m.Error | m.Joined:
    ws = await raw(url, **kwargs)
    try:
        await ask(ws, m.Hello(id=1, name="Guess"))
        return await ask(ws, m.JoinRoom(id=2, room=code))
    finally:
        await ws.close()


async def test_guessing_codes_by_reconnecting_is_refused_per_address_and_logged(caplog):
    caplog.set_level(logging.WARNING, logger="castell.server")
    async with serving(code_attempts_per_address=5, code_attempts_per_network=50) as (_s, url):
        host = await _client(url, "Host")
        secret = (await host.request(m.CreateRoom, name="hidden", seats=2, private=True)).code
        assert secret is not None and len(secret) == 8  # 2^40 codes
        guesses = [f"ZZZZZ{i}" for i in range(5)]
        # each guess on a fresh connection: the count is by address, not by connection
        codes = [(await _try_code(url, g)).code for g in guesses]
        assert codes == ["room_not_found"] * 5
        # now refused, even the right code (in any case), until the window passes
        refused = await _try_code(url, secret.lower())
        assert refused.code == "rate_limited" and refused.re == 2
        warnings = [r.getMessage() for r in caplog.records if "guessed" in r.getMessage()]
        assert len(warnings) == 1 and "127.0.0.1" in warnings[0]
        assert not any(g in warnings[0] for g in guesses)
        await host.close()


async def test_guessing_codes_from_many_addresses_of_one_network_is_refused():
    async with serving(code_attempts_per_address=3, code_attempts_per_network=6,
                       trust_proxy=True) as (_s, url):
        def via(addr: str) -> dict[str, object]:
            return {"additional_headers": {"X-Forwarded-For": addr}}

        host = await _client(url, "Host")
        secret = (await host.request(m.CreateRoom, name="hidden", seats=2, private=True)).code
        for n in (1, 2):  # two addresses of 192.0.2.0/24, three guesses each
            for i in range(3):
                assert (await _try_code(url, f"QQQQ{n}{i}", **via(f"192.0.2.{n}"))).code \
                    == "room_not_found"
        # a third address of that network is refused; another network is not
        assert (await _try_code(url, secret, **via("192.0.2.77"))).code == "rate_limited"
        assert isinstance(await _try_code(url, secret, **via("198.51.100.7")), m.Joined)
        await host.close()


def test_networks_are_slash_24_for_ipv4_and_slash_64_for_ipv6():
    assert network_of("192.0.2.77") == network_of("192.0.2.1") == "192.0.2.0/24"
    assert network_of("::ffff:192.0.2.9") == "192.0.2.0/24"
    assert network_of("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64"
    assert network_of("2001:db8:1:3::1") != network_of("2001:db8:1:2::1")
    assert network_of("?") == "?"


# -- 10. one address, many connections -----------------------------------------------------


async def test_costly_requests_are_budgeted_per_address_over_all_its_connections():
    async with serving(address_rate=5.0, address_burst=10.0, trust_proxy=True) as (_s, url):
        def via(addr: str) -> dict[str, object]:
            return {"additional_headers": {"X-Forwarded-For": addr}}

        crowd = [await raw(url, **via("192.0.2.5")) for _ in range(10)]
        for i, c in enumerate(crowd):
            await ask(c, m.Hello(id=1, name=f"C{i}"))
        started = time.monotonic()
        replies = []
        for n in range(5):  # 50 list_rooms, 5 per connection: within each one's own rate
            for c in crowd:
                replies.append(await ask(c, m.ListRooms(id=10 + n)))
        elapsed = time.monotonic() - started
        ok = sum(isinstance(r, m.Rooms) for r in replies)
        assert ok <= 10 + 5 * elapsed + 1
        refused = [r for r in replies if not isinstance(r, m.Rooms)]
        assert refused and {r.code for r in refused} == {"rate_limited"}
        assert "address" in refused[0].message
        # cheap requests are not budgeted; another address is served at once
        assert isinstance(await ask(crowd[0], m.Hello(id=30, name="Again")), m.Welcome)
        other = await raw(url, **via("198.51.100.9"))
        await ask(other, m.Hello(id=1, name="Other"))
        assert isinstance(await ask(other, m.ListRooms(id=2)), m.Rooms)
        for c in [*crowd, other]:
            await c.close()


def test_buckets_per_key_are_separate_and_forgotten_once_full_again():
    buckets = Buckets(rate=2.0, burst=4.0)
    assert [buckets.take("a", 0.0) for _ in range(5)] == [True] * 4 + [False]
    assert buckets.take("b", 0.0)  # another key has its own bucket
    buckets.sweep(1.0)  # "a" is not full again yet: forgetting it would forgive it
    assert "a" in buckets.buckets
    assert buckets.take("a", 1.0) and buckets.take("a", 1.0) and not buckets.take("a", 1.0)
    buckets.sweep(3.0)
    assert buckets.buckets == {}
