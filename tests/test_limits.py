"""Every limit of the server, tripped on purpose against a real server (docs/security.md).

Each test sets the limit low through ServerConfig, trips it from real sockets on 127.0.0.1,
checks what the offender is told, and that the server goes on serving everyone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

import attrs
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from client.net.net import GameClient
from server.cli import build_parser, config_from_args
from server.config import ServerConfig
from shared import messages as m
from tests.support.hostile import ask, next_reply, packed, raw, wait_closed
from tests.support.servers import serving

pytestmark = pytest.mark.timeout(30)




async def _still_serves(url: str) -> None:
    async with await GameClient.connect(url) as c:
        assert (await c.hello("Still")).protocol == 1


# -- one frame -------------------------------------------------------------------------------


async def test_frame_size_is_set_by_the_config_and_closes_with_1009():
    async with serving(max_frame=2000) as (_srv, url):
        ws = await raw(url)
        # just under the limit: an ordinary refusal (an invalid name), the connection lives
        small = await ask(ws, m.Hello(id=1, name="x" * 1500))
        assert small.code == "invalid_field" and small.re == 1
        await ws.send(packed({"type": "chat", "id": 2, "text": "y" * 2100}))
        await wait_closed(ws)
        assert ws.close_code == 1009
        await _still_serves(url)


async def test_nesting_deeper_than_the_limit_is_bad_message():
    async with serving(max_depth=4) as (_srv, url):
        ws = await raw(url)
        nested: object = "x"
        for _ in range(3):  # the frame's map + 3 lists + a string = 4 levels of containers
            nested = [nested]
        reply = await _send_raw(ws, packed({"type": "hello", "id": 3, "name": nested}))
        assert reply.code == "invalid_field" and reply.re == 3  # deep enough, wrong type
        reply = await _send_raw(ws, packed({"type": "hello", "id": 4, "name": [nested]}))
        assert reply.code == "bad_message" and reply.re is None
        assert (await ask(ws, m.Hello(id=5, name="Still here"))).re == 5


async def test_a_frame_of_sixty_thousand_nested_arrays_is_refused_without_harm(server, url):
    ws = await raw(url)
    reply = await _send_raw(ws, b"\x91" * 60_000 + b"\xc0")
    assert reply.code == "bad_message"
    reply = await _send_raw(ws, b"\x81\xa4type" + b"\x91" * 60_000 + b"\xc0")
    assert reply.code == "bad_message"
    assert (await ask(ws, m.Hello(id=1, name="Deep"))).re == 1


async def test_string_and_list_lengths_are_set_by_the_config():
    async with serving(max_string=50, max_list=20) as (_srv, url):
        ws = await raw(url)
        assert (await ask(ws, m.Hello(id=1, name="Ok"))).re == 1
        long_chat = packed({"type": "chat", "id": 2, "text": "z" * 51})
        assert (await _send_raw(ws, long_chat)).code == "bad_message"
        long_list = packed({"type": "action", "id": 3, "kind": "build", "levels": [[1] * 21]})
        assert (await _send_raw(ws, long_list)).code == "bad_message"
        fits = packed({"type": "action", "id": 4, "kind": "build", "levels": [[1] * 20]})
        reply = await _send_raw(ws, fits)
        assert reply.code == "not_in_room" and reply.re == 4  # decoded, then refused


async def test_a_build_of_ten_thousand_castellers_is_refused_by_default(server, url):
    ws = await raw(url)
    await ask(ws, m.Hello(id=1, name="Greedy"))
    huge = packed({"type": "action", "id": 2, "kind": "build", "levels": [[5] * 10_000]})
    assert (await _send_raw(ws, huge)).code == "bad_message"
    wide = packed({"type": "action", "id": 3, "kind": "build", "levels": [[5] * 1000]})
    reply = await _send_raw(ws, wide)
    assert reply.code == "invalid_field" and reply.re == 3 and reply.field == "levels[0]"
    tall = packed({"type": "action", "id": 4, "kind": "build", "levels": [[1]] * 500})
    reply = await _send_raw(ws, tall)
    assert reply.code == "invalid_field" and reply.field == "levels"


async def _send_raw(ws, data: bytes | str):
    await ws.send(data)
    return await next_reply(ws)


# -- flow --------------------------------------------------------------------------------------


async def test_token_bucket_refuses_then_closes_after_too_many_strikes():
    async with serving(rate=1.0, burst=3.0, max_strikes=2) as (_srv, url):
        ws = await raw(url)
        for i in range(6):
            await ws.send(frame_hello(i))
        replies = []
        with contextlib.suppress(ConnectionClosed):
            async with asyncio.timeout(5):
                while True:
                    replies.append(await next_reply(ws))
        assert [r.re for r in replies[:3]] == [0, 1, 2]
        assert all(isinstance(r, m.Welcome) for r in replies[:3])
        limited = replies[3:]
        assert [r.code for r in limited] == ["rate_limited", "rate_limited"]
        assert [r.re for r in limited] == [3, 4]
        assert ws.close_code == 1008
        await _still_serves(url)


async def test_garbage_costs_tokens_too():
    async with serving(rate=0.5, burst=2.0, max_strikes=100) as (_srv, url):
        ws = await raw(url)
        for _ in range(3):
            await ws.send(b"\xc1 not msgpack")
        codes = [(await next_reply(ws)).code for _ in range(3)]
        assert codes == ["bad_message", "bad_message", "rate_limited"]


def frame_hello(i: int) -> bytes:
    return packed({"type": "hello", "id": i, "name": f"n{i}"})


# -- connections -------------------------------------------------------------------------------


async def _try_open(url: str, **kwargs: object):
    try:
        return await raw(url, **kwargs)
    except InvalidStatus as exc:
        return exc.response.status_code


async def test_total_connections_are_capped_exactly_under_a_burst():
    async with serving(max_connections=3, max_per_address=100) as (srv, url):
        # all at once: exactly three get in, the rest hear 503
        results = await asyncio.gather(*(_try_open(url) for _ in range(10)))
        opened = [r for r in results if not isinstance(r, int)]
        assert len(opened) == 3
        assert sorted(r for r in results if isinstance(r, int)) == [503] * 7
        # a closed connection frees its place
        await opened[0].close()
        for _ in range(50):
            if len(srv.admission.admitted) < 3:
                break
            await asyncio.sleep(0.02)
        again = await _try_open(url)
        assert not isinstance(again, int)
        for ws in (*opened[1:], again):
            await ws.close()


async def test_connections_per_address_get_429():
    async with serving(max_per_address=2) as (srv, url):
        first = [await raw(url) for _ in range(2)]
        assert await _try_open(url) == 429
        # without --trust-proxy a forwarded address changes nothing
        assert await _try_open(url, additional_headers={"X-Forwarded-For": "192.0.2.7"}) == 429
        await first[0].close()
        async with asyncio.timeout(5):  # the server saw it go
            while srv.admission.per_address["127.0.0.1"] >= 2:
                await asyncio.sleep(0.01)
        third = await _try_open(url)
        assert not isinstance(third, int)
        assert srv.admission.per_address["127.0.0.1"] == 2


async def test_trust_proxy_counts_the_forwarded_address():
    async with serving(max_per_address=2, trust_proxy=True) as (srv, url):
        def via(addr: str) -> dict[str, object]:
            # the proxy appends the address it saw; what came before is the client's claim
            return {"additional_headers": {"X-Forwarded-For": f"203.0.113.9, {addr}"}}

        a = [await _try_open(url, **via("192.0.2.1")) for _ in range(3)]
        b = [await _try_open(url, **via("192.0.2.2")) for _ in range(2)]
        assert a[2] == 429 and not any(isinstance(x, int) for x in [*a[:2], *b])
        assert srv.admission.per_address == {"192.0.2.1": 2, "192.0.2.2": 2}


async def test_rooms_per_connection_and_per_address():
    async with serving(rooms_per_connection=2, rooms_per_address=3) as (_srv, url):
        ws = await raw(url)
        await ask(ws, m.Hello(id=1, name="Host"))
        for i in (2, 4):
            assert isinstance(await ask(ws, m.CreateRoom(id=i, name="t", seats=2)), m.Joined)
            assert isinstance(await ask(ws, m.LeaveRoom(id=i + 1)), m.Ok)
        third = await ask(ws, m.CreateRoom(id=6, name="t", seats=2))
        assert third.code == "rate_limited" and third.re == 6
        # rooms held open from one address: three, then no more
        holders = [await raw(url) for _ in range(4)]
        replies = []
        for i, h in enumerate(holders):
            await ask(h, m.Hello(id=1, name=f"H{i}"))
            replies.append(await ask(h, m.CreateRoom(id=2, name=f"room {i}", seats=2)))
        assert [type(r) for r in replies[:3]] == [m.Joined] * 3
        assert replies[3].code == "rate_limited"


async def test_list_rooms_is_capped_waiting_rooms_first():
    async with serving(max_listed=3) as (_srv, url):
        hosts = []
        for i in range(5):
            c = await GameClient.connect(url)
            await c.hello(f"H{i}")
            await c.request(m.CreateRoom, name=f"room {i}", seats=2)
            hosts.append(c)
        await hosts[0].request(m.AddBot)
        await hosts[0].request(m.StartGame)
        rooms = (await hosts[1].request(m.ListRooms)).rooms
        assert len(rooms) == 3 and all(r.status == "waiting" for r in rooms)
        for c in hosts:
            await c.close()


# -- timeouts ------------------------------------------------------------------------------------


async def test_handshake_timeout_drops_silent_and_slow_sockets():
    async with serving(open_timeout=0.3) as (srv, url):
        loop = asyncio.get_running_loop()
        silent = socket.create_connection(("127.0.0.1", srv.port))
        slow = socket.create_connection(("127.0.0.1", srv.port))
        slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # ...and never the end
        for sock in (silent, slow):
            sock.setblocking(False)
            async with asyncio.timeout(3):
                assert await loop.sock_recv(sock, 1024) == b""  # the server hung up
            sock.close()
        await _still_serves(url)


async def test_hello_timeout_closes_with_1008():
    async with serving(hello_timeout=0.3) as (_srv, url):
        quiet = await raw(url)
        polite = await raw(url)
        await ask(polite, m.Hello(id=1, name="Polite"))
        # frames other than hello do not buy time
        await quiet.send(b"\xc1")
        await wait_closed(quiet, 3)
        assert quiet.close_code == 1008 and "hello" in quiet.close_reason
        assert (await ask(polite, m.ListRooms(id=2))).re == 2


async def test_idle_timeout_spares_connections_whose_room_is_alive():
    async with serving(idle_timeout=0.5) as (_srv, url):
        talker = await GameClient.connect(url)
        await talker.hello("Talker")
        joined = await talker.request(m.CreateRoom, name="chatty", seats=2)
        listener = await GameClient.connect(url)
        await listener.hello("Listener")
        await listener.request(m.JoinRoom, room=joined.room)
        loner = await GameClient.connect(url)
        await loner.hello("Loner")
        # the room chats until the loner, who hears none of it, is closed as idle: the
        # listener sends nothing but hears it all
        async with asyncio.timeout(10):
            while not loner.closed.is_set():
                await talker.request(m.Chat, text="una línia més")
                await asyncio.sleep(0.02)  # pacing: the room's rate of chat
        assert loner.ws.close_code == 1000
        assert not listener.closed.is_set()
        await asyncio.wait_for(listener.closed.wait(), 3)
        assert listener.ws.close_code == 1000
        await talker.close()


# -- the command line -----------------------------------------------------------------------------

#: ServerConfig fields that are not limits (or are set for tests only) and have no flag of
#: their own.
NO_FLAG = {"ping_interval", "compression", "turn_time_scale", "room_linger", "bot_delay",
           "host", "port"}


def test_every_limit_has_a_flag_that_sets_it():
    parser = build_parser()
    flags = {opt for action in parser._actions for opt in action.option_strings}
    for field in attrs.fields(ServerConfig):
        if field.name in NO_FLAG:
            continue
        flag = "--" + field.name.replace("_", "-")
        assert flag in flags, f"{field.name} has no flag"
        default = field.default
        if field.name == "web":  # (on by default: --web off turns it off)
            argv, want = [flag, "off"], False
        elif isinstance(default, bool):
            argv, want = [flag], True
        elif field.name in ("certfile", "keyfile", "metrics_listen", "admin_socket",
                            "web_name", "web_join"):
            argv, want = [flag, "some.pem"], "some.pem"
        elif field.name == "organisers":  # (a list of account names)
            argv, want = [flag, "Anna,Biel"], ("Anna", "Biel")
        else:
            want = (default or 7) * 3 if isinstance(default, int) else 2.5
            argv = [flag, str(want)]
        if field.name == "keyfile":
            argv += ["--certfile", "c.pem"]
        config = config_from_args(parser.parse_args(argv))
        assert getattr(config, field.name) == want, field.name
    # defaults from the command line are the config's defaults
    assert config_from_args(parser.parse_args([])) == ServerConfig()
