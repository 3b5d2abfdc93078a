"""The host's tools (docs/operations.md): /metrics scraped and parsed by prometheus-client's
own parser while a game is played, /ready, JSON logs with no secret in them, and every
admin command against a running server, bans across a restart and across cluster nodes, and
a drain that hands a game to another node where it finishes."""

from __future__ import annotations

import asyncio
import json
import logging
import random

import pytest
from prometheus_client.parser import text_string_to_metric_families

from client.local.keys import new_key
from client.net.net import GameClient, ServerError, join_anywhere
from server.ops.admin import ask
from server.ops.metrics import CONTENT_TYPE_LATEST
from server.store import open_store
from shared import messages as m
from tests.support.console import admin_run
from tests.support.servers import ServerProcess, run_server_cli, serving
from tests.support.services import REDIS_URL, fresh_prefix, store_schema
from tests.support.wire import play_legal

pytestmark = pytest.mark.timeout(90)


async def http_get(url: str, path: str, headers: str = "") -> tuple[int, str]:
    """A plain HTTP GET of ``path`` on the server at ``url`` (ws://HOST:PORT)."""
    host, port = url.removeprefix("ws://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n"
                 .encode())
    data = await reader.read()
    writer.close()
    head, _, body = data.decode().partition("\r\n\r\n")
    return int(head.split()[1]), body


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, parsed by prometheus-client's parser: (name, labels) →
    value."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def total(parsed: dict, name: str) -> float:
    return sum(v for (n, _), v in parsed.items() if n == name)


async def scrape(url: str) -> dict:
    status, body = await http_get(url, "/metrics")
    assert status == 200
    return samples(body)


async def bot_game(url: str, name: str = "Anna", *, key: str | None = None,
                   private: bool = False) -> tuple[GameClient, m.Joined]:
    client = await GameClient.connect(url)
    await client.hello(name, key)
    made = await client.request(m.CreateRoom, name="Metrics", seats=2, private=private)
    await client.request(m.AddBot, level="random")
    await client.request(m.StartGame)
    await client.wait_state(lambda p: p.view["status"] == "playing")
    return client, made


async def test_metrics_are_scraped_and_move_as_a_game_is_played(tmp_path):
    async with open_store(str(tmp_path / "c.sqlite3")) as store, serving(store) as (_, url):
        assert await http_get(url, "/ready") == (200, "ready\n")
        before = await scrape(url)
        assert all(name.startswith("castell_") for name, _ in before)
        # a server in another program's process leaves that process's collector alone
        assert not any(name.startswith("castell_collector") for name, _ in before)
        anna, _made = await bot_game(url)
        with pytest.raises(ServerError):  # a refusal, counted by its code
            await anna.request(m.StartGame)
        during = await scrape(url)
        assert during[("castell_connections", (("state", "seated"),))] == 1
        assert during[("castell_rooms", (("status", "playing"),))] == 1
        await play_legal([anna, None], random.Random(3), end_bias=0.4, timeout=30)
        assert anna.state.view["status"] == "finished"
        after = await scrape(url)
        assert total(after, "castell_games_started_total") == \
            total(before, "castell_games_started_total") + 1
        assert total(after, "castell_games_finished_total") == \
            total(before, "castell_games_finished_total") + 1
        assert after[("castell_refusals_total", (("code", "already_started"),))] == 1
        assert after[("castell_actions_total", (("kind", "end_turn"),))] >= 2
        assert total(after, "castell_pushes_total") > total(before, "castell_pushes_total")
        assert total(after, "castell_bytes_sent_total") > 1000
        assert after[("castell_store_commit_seconds_count", ())] > 10
        assert after[("castell_request_seconds_count", ())] > 5
        assert after[("castell_bot_decision_seconds_count", (("level", "random"),))] > 0
        assert after[("castell_rooms", (("status", "finished"),))] == 1
        await anna.close()


async def raw_head(url: str, path: str) -> list[tuple[str, str]]:
    """The status line's code and every header line of a plain HTTP GET of ``path``, as
    sent (names lowercased), in order."""
    host, port = url.removeprefix("ws://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                 .encode())
    data = await reader.read()
    writer.close()
    status, *lines = data.decode().partition("\r\n\r\n")[0].split("\r\n")
    headers = [(name.strip().lower(), value.strip())
               for name, _, value in (line.partition(":") for line in lines)]
    return [("status", status.split()[1]), *headers]


async def test_health_and_metrics_answer_one_content_type_and_log_nothing(caplog):
    """A load balancer's health check every few seconds, a scrape every fifteen: each
    answer has one Content-Type, and none of them writes a line to the server's log (at
    INFO or above)."""
    caplog.set_level(logging.INFO)
    async with serving() as (server, url):
        caplog.clear()
        for path, kind in (("/metrics", CONTENT_TYPE_LATEST), ("/health", "text/plain"),
                           ("/ready", "text/plain"), ("/metrics", CONTENT_TYPE_LATEST)):
            head = await raw_head(url, path)
            assert head[0] == ("status", "200")
            types = [value for name, value in head if name == "content-type"]
            assert len(types) == 1 and types[0].startswith(kind), (path, types)
        async with asyncio.timeout(5):  # the server is done with every probe's connection
            while server._server.handler_tasks:
                await asyncio.sleep(0.01)
        lines = [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records
                 if r.levelno >= logging.INFO]
        assert lines == []


async def test_metrics_can_be_turned_off_or_served_elsewhere(tmp_path):
    async with serving(no_metrics=True) as (_, url):
        status, _ = await http_get(url, "/metrics")
        assert status == 404  # not a page of this server (its web pages say so)
    async with serving(no_metrics=True, web=False) as (_, url):
        status, _ = await http_get(url, "/metrics")
        assert status == 400  # no web pages: a WebSocket endpoint, and nothing else
    async with serving(metrics_listen="127.0.0.1:0") as (server, url):
        assert (await http_get(url, "/metrics"))[0] == 404
        port = server._metrics_http.server_address[1]
        parsed = await scrape(f"ws://127.0.0.1:{port}")
        assert ("castell_ready", ()) in parsed


def test_json_logs_are_one_object_per_line_with_no_secret(short_dir):
    db = str(short_dir / "c.sqlite3")
    key = new_key()
    with ServerProcess("--db", db, "--bot-delay", "0", "--log-format", "json",
                       "--log-level", "debug") as server:

        async def play() -> list[str]:
            anna, made = await bot_game(server.url, key=key, private=True)
            await anna.request(m.Chat, text="good game")
            await play_legal([anna, None], random.Random(5), end_bias=0.4, timeout=30)
            await anna.close()
            watcher = await GameClient.connect(server.url)
            await watcher.hello("Biel")
            with pytest.raises(ServerError):
                await watcher.request(m.JoinRoom, room=made.room, token="not-a-token")
            await watcher.close()
            # castell-server owns its process: its collector policy is in place, and counted
            parsed = await scrape(server.url)
            assert parsed[("castell_collector_frozen_objects", ())] > 10_000
            assert ("castell_collector_thaws_total", ()) in parsed
            assert ("castell_collector_last_thaw_seconds", ()) in parsed
            return [made.token, made.code, made.room]

        token, code, room = asyncio.run(play())
        assert server.terminate() == 0
        lines = server.stderr().splitlines()
    assert len(lines) > 10
    about_room = 0
    for line in lines:
        entry = json.loads(line)
        assert set(entry) <= {"time", "level", "logger", "message", "room", "conn", "error"}
        assert {"time", "level", "logger", "message"} <= set(entry)
        for secret in (token, code, key):
            assert secret not in line
        if room in entry["message"]:
            assert entry["room"] == room
            about_room += 1
    assert about_room >= 2
    assert any("conn" in json.loads(line) for line in lines)


def admin(sock: str, *args: str) -> str:
    """``castell-server admin`` in this process (tests/support/console.py); its output."""
    done = admin_run(sock, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def admin_fails(sock: str, *args: str) -> str:
    done = admin_run(sock, *args)
    assert done.returncode == 1
    return done.stderr


def console(sock: str, command: str, **args: object) -> object:
    """A command sent straight to the console's socket, as the CLI sends it: for a command
    the test has already run once through ``castell-server admin``."""
    reply = ask(sock, command, **args)
    assert reply["ok"], reply
    return reply["result"]


def test_every_admin_command_against_a_running_server(short_dir):
    db = str(short_dir / "c.sqlite3")
    sock = db + ".admin"  # beside the database, unless told
    args = ("--db", db, "--bot-delay", "0")

    async def session(url: str) -> None:
        anna, made = await bot_game(url)
        biel = await GameClient.connect(url)
        await biel.hello("Biel")
        waiting = await biel.request(m.CreateRoom, name="Waiting", seats=3)
        # rooms and show; the command as a process of its own once (the others run its main
        # in this process: the same code, without an interpreter started for each)
        done = await asyncio.to_thread(run_server_cli, "admin", "--socket", sock, "--json",
                                       "rooms")
        assert done.returncode == 0, done.stderr
        listed = json.loads(done.stdout)
        by_id = {r["room"]: r for r in listed}
        assert by_id[made.room]["status"] == "playing"
        assert by_id[made.room]["players"][0] == "Anna"
        assert by_id[waiting.room]["status"] == "waiting"
        shown = json.loads(admin(sock, "--json", "show", made.room))
        assert shown["seats"][0]["name"] == "Anna" and shown["seats"][0]["connected"]
        assert admin_fails(sock, "show", "rnothere0")
        # mute and unmute
        admin(sock, "mute", "anna")
        with pytest.raises(ServerError) as muted:
            await anna.request(m.Chat, text="hello")
        assert muted.value.code == "muted"
        admin(sock, "unmute", "Anna")
        await anna.request(m.Chat, text="hello again")
        # announce: to a player in a room (a notice of the room) and to one in the lobby
        # (a notice of the server, without a room)
        carme = await GameClient.connect(url)
        await carme.hello("Carme")
        anna.drain()
        told = admin(sock, "announce", "the server restarts at noon")
        assert told.startswith("told ") and int(told.split()[1]) >= 3
        for client, room in ((anna, made.room), (carme, None)):
            async with asyncio.timeout(5):
                while True:
                    push = await client.next_push()
                    if isinstance(push, m.NoticePush):
                        assert push.text == "the server restarts at noon"
                        assert push.room == room
                        break
        await carme.close()
        # kick: the player is put back in the lobby, told why (tests/test_moderation.py)
        biel.drain()
        admin(sock, "kick", waiting.room, "0")
        async with asyncio.timeout(5):
            while not isinstance(push := await biel.next_push(), m.RemovedPush):
                pass
        assert (push.why, push.text) == ("kicked", "removed by the host")
        assert not biel.closed.is_set()
        # close: the players are told why, and are back in the lobby; the game is stored
        # as abandoned
        anna.drain()
        admin(sock, "close", made.room, "--reason", "spam")
        async with asyncio.timeout(5):
            while not isinstance(await anna.next_push(), m.RemovedPush):
                pass
        await anna.request(m.ListRooms)  # still connected, in the lobby
        assert made.room not in {r["room"] for r in console(sock, "rooms")}
        # ban by name (a guest's typed name; an account's name) and by address
        assert "banned" in admin(sock, "ban", "Carme", "--for", "1h")
        carme = await GameClient.connect(url)
        with pytest.raises(ServerError) as banned:
            await carme.hello("CARME")
        assert banned.value.code == "banned"
        await carme.close()
        # An account's name is barred whatever name its player types.
        key = new_key()
        dolors = await GameClient.connect(url)
        await dolors.hello("Dolors", key)
        await dolors.close()
        console(sock, "ban", target="dolors", seconds=None, reason="banned by the host")
        dolors = await GameClient.connect(url)
        with pytest.raises(ServerError) as banned:
            await dolors.hello("Someone", key)
        assert banned.value.code == "banned"
        await dolors.close()
        # An address is refused at the handshake, before the WebSocket upgrade.
        upgrade = ("Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   "Sec-WebSocket-Protocol: castell.v1\r\n")
        console(sock, "ban", target="127.0.0.0/8", seconds=7200, reason="banned by the host")
        status, body = await http_get(url, "/", upgrade)
        assert status == 403 and "barred" in body
        assert "address" in admin(sock, "bans")
        console(sock, "unban", target="127.0.0.0/8")
        await (await GameClient.connect(url)).close()  # let in again

    with ServerProcess(*args) as server:
        asyncio.run(session(server.url))
        assert server.terminate() == 0
        log = server.stderr()
    for command in ("rooms", "show", "mute", "unmute", "announce", "kick", "close", "ban"):
        assert f"admin {command}" in log, command
    async def stored() -> dict:
        async with open_store(db, read_only=True) as store:
            finished = await store.list_finished(limit=5)
            record = await store.load(finished[0].room)
        return record.result
    assert asyncio.run(stored()) == {"abandoned": "spam"}

    # The ban holds across a restart; unban lifts it; drain stops the server.
    with ServerProcess(*args) as server:

        async def again(url: str) -> None:
            carme = await GameClient.connect(url)
            with pytest.raises(ServerError) as banned:
                await carme.hello("carme")
            assert banned.value.code == "banned"
            admin(sock, "unban", "Carme")
            await carme.hello("Carme")
            assert not ask(sock, "unban", target="Carme")["ok"]
            await carme.close()
            playing, _ = await bot_game(url, "Carme")  # a game under way holds the drain
            assert await http_get(url, "/ready") == (200, "ready\n")
            assert "draining: 1 unfinished" in admin(sock, "drain")
            assert (await http_get(url, "/ready"))[0] == 503
            late = await GameClient.connect(url)
            await late.hello("Late")
            with pytest.raises(ServerError) as draining:
                await late.request(m.CreateRoom, name="Later", seats=2)
            assert draining.value.code == "draining"
            await late.close()
            await playing.request(m.LeaveRoom)  # nobody plays here any more: drained
            # (closed, not left open: a server that stops waits out its close timeout, 10 s,
            # for the closing handshake of a connection nobody reads any more)
            await playing.close()

        asyncio.run(again(server.url))
        assert server.proc.wait(20) == 0
        assert "admin drain" in server.stderr()


async def test_a_ban_holds_on_every_node_and_a_drain_hands_a_game_over(short_dir):
    async with store_schema() as db, fresh_prefix() as prefix:
        def node(name: str) -> ServerProcess:
            return ServerProcess("--db", db, "--redis", REDIS_URL, "--redis-prefix", prefix,
                                 "--lease-ms", "1500", "--bot-delay", "0",
                                 "--moderation-refresh", "0.1",  # other nodes' bans at once
                                 "--admin-socket", str(short_dir / name))
        a, b = await asyncio.gather(asyncio.to_thread(node, "a"), asyncio.to_thread(node, "b"))
        with a, b:
            # A ban set on node A bars the name on node B too.
            assert await asyncio.to_thread(ask, str(short_dir / "a"), "ban", target="Pere",
                                           seconds=None, reason="spam")
            async with asyncio.timeout(10):
                while True:
                    pere = await GameClient.connect(b.url)
                    try:
                        await pere.hello("Pere")
                    except ServerError as exc:
                        assert exc.code == "banned"
                        break
                    finally:
                        await pere.close()
                    await asyncio.sleep(0.05)
            # A drain of node A hands its game to node B, where it is played to the end.
            anna, made = await bot_game(a.url)
            await play_legal([anna, None], random.Random(2), turns=2, timeout=20)
            reply = await asyncio.to_thread(ask, str(short_dir / "a"), "drain")
            assert reply["ok"] and "handed over" in reply["result"]
            await asyncio.wait_for(anna.closed.wait(), 10)
            assert anna.ws.close_code == 4002
            assert await asyncio.to_thread(a.proc.wait, 20) == 0
            back = await join_anywhere([a.url, b.url], "Anna", made.room, token=made.token,
                                       timeout=15)
            assert back.url == b.url
            client = back.client
            await client.wait_state(lambda p: p.view["status"] == "playing")
            await play_legal([client, None], random.Random(4), end_bias=0.4, timeout=30)
            assert client.state.view["status"] == "finished"
            await client.close()


def test_the_console_s_options_go_before_or_after_the_command():
    from server.ops.admin_cli import build_parser

    parser = build_parser()
    for argv in (["--db", "x.sqlite3", "--json", "rooms"], ["rooms", "--db", "x.sqlite3", "--json"],
                 ["ban", "Troll", "--for", "1h", "--db", "x.sqlite3", "--json"]):
        args = parser.parse_args(argv)
        assert args.db == "x.sqlite3" and args.json, argv
    assert parser.parse_args(["rooms"]).db is None
