"""The web pages as a browser meets them (docs/operations.md, "Web pages"): a real server on
127.0.0.1 fetched over plain HTTP, every page parsed by the standard library's HTML parser,
games played over the protocol beside it.

From the front page every page is reached by its links and answers 200, well formed and
without a script anywhere; a name a player typed is text, never markup; no private room or
game appears anywhere, nor answers by its id (exactly as an id nobody has); no token, key,
code, address or path is in any page; pages are cached per room version and refused past
the per-address rate; what is not a page is a 404, never a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from client.local.keys import new_key
from client.net.net import GameClient
from server.ops.export import record_file
from server.store import open_store
from server.web.games import FRESH
from shared import messages as m
from shared.record import GameRecordFile
from tests.support.hostile import LoopThread
from tests.support.servers import serving
from tests.support.web import Parsed, bot_room, crawl, fetch, play_seat, seed_ratings

pytestmark = pytest.mark.timeout(120)

SCRIPT_ROOM = "<script>alert(1)</script>"
SCRIPT_NAME = "<script>x</script>"
QUOTE_NAME = '" onmouseover="x'
JOIN = "wss://castell.example.org"


@attrs.define
class Stage:
    """What a staged server holds: each room's id, the secrets players hold, the clients."""

    done: str = ""
    live: str = ""
    waiting: str = ""
    private_waiting: str = ""
    private_done: str = ""
    private_code: str = ""
    tournament: str = ""
    secrets: list[str] = attrs.Factory(list)
    clients: list[GameClient] = attrs.Factory(list)

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


async def client(url: str, name: str, stage: Stage) -> GameClient:
    key = new_key()
    c = await GameClient.connect(url)
    await c.hello(name, key)
    stage.secrets.append(key)
    stage.clients.append(c)
    return c


async def staged(url: str, stage: Stage) -> None:
    """Into ``stage``: a finished public game of two players (their names a script and a
    quote), a game in play against a bot, a public and a private room waiting, a finished
    private game, and an open tournament (the clients it opened are the stage's to close,
    even where it failed on the way)."""
    anna = await client(url, "Anna", stage)
    quote = await client(url, QUOTE_NAME, stage)
    made = await anna.request(m.CreateRoom, name=SCRIPT_ROOM, seats=2)
    joined = await quote.request(m.JoinRoom, room=made.room)
    stage.secrets += [made.token, joined.token]
    await anna.request(m.StartGame)
    await anna.wait_state(lambda p: p.view["status"] == "playing")
    await asyncio.gather(play_seat(anna, 0, random.Random(1)),
                         play_seat(quote, 1, random.Random(2)))
    stage.done = made.room
    await anna.request(m.LeaveRoom)
    await quote.request(m.LeaveRoom)
    live = await bot_room(anna, "Dimecres", ["random"], turn_seconds=600)
    stage.secrets.append(live.token)
    await play_seat(anna, live.seat, random.Random(3), until_round=2)
    stage.live = live.room
    script = await client(url, SCRIPT_NAME, stage)
    await script.request(m.JoinRoom, room=live.room, as_="spectator")
    carme = await client(url, "Carme", stage)
    waiting = await carme.request(m.CreateRoom, name="Sala d'espera", seats=3)
    stage.waiting, stage.secrets = waiting.room, [*stage.secrets, waiting.token]
    tournament = await carme.request(m.TournamentCreate, name="Festa Major", rounds=2,
                                     seats=2)
    await anna.request(m.TournamentJoin, tournament=tournament.tournament)
    stage.tournament = tournament.tournament
    dani = await client(url, "Dani", stage)
    hidden = await bot_room(dani, "Amagada", ["random"], private=True)
    stage.secrets.append(hidden.token)
    await play_seat(dani, hidden.seat, random.Random(4))
    stage.private_done = hidden.room
    await dani.request(m.LeaveRoom)
    secret = await dani.request(m.CreateRoom, name="Secret room", seats=2, private=True)
    stage.private_waiting, stage.private_code = secret.room, secret.code
    stage.secrets += [secret.token, secret.code]


@attrs.frozen
class Staged:
    """A server holding :func:`staged`'s games, on a SQLite file in ``folder``, its pages
    joined as ``JOIN``; made once for the tests that only read it."""

    url: str
    stage: Stage
    folder: Path


@pytest.fixture(scope="module")
def staged_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Staged]:
    """:func:`staged` once, on a server in a thread's event loop of its own (the clients that
    played stay connected there), for the tests marked to run on one worker together."""
    folder = tmp_path_factory.mktemp("web")
    loop = LoopThread()
    served = serving(open_store(str(folder / "castell.sqlite3")), web_join=JOIN)
    try:
        _, url = loop.run(served.__aenter__())
        stage = Stage()
        try:
            loop.run(staged(url, stage), timeout=60)
            yield Staged(url, stage, folder)
        finally:
            loop.run(stage.close())
            loop.run(served.__aexit__(None, None, None))
    finally:
        loop.close()


#: The tests that read :func:`staged_server`'s pages: on one worker, so it is made once.
reads_stage = pytest.mark.xdist_group("test_web_staged")

def kind(path: str) -> str:
    """What a path is a page of: ``/games/ID?step=N`` → ``games?step``."""
    parts = path.split("?")[0].strip("/").split("/")
    name = parts[0] if parts[0] else "/"
    if len(parts) == 3:
        name += "/" + parts[2]
    return name + ("?step" if "step=" in path else "")


@reads_stage
async def test_every_page_reachable_from_the_front_page_is_whole_and_holds_no_script(
        staged_server: Staged):
    url, stage = staged_server.url, staged_server.stage
    pages = await crawl(url)
    assert {kind(p) for p in pages} >= {
        "/", "rooms", "games", "games?step", "games/record", "players", "leaderboard",
        "tournaments", "style.css"}
    assert f"/rooms/{stage.live}" in pages and f"/rooms/{stage.waiting}" in pages
    assert f"/games/{stage.done}" in pages
    assert f"/tournaments/{stage.tournament}" in pages
    for path, page in pages.items():
        assert page.status == 200, (path, page.status)
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy
        assert page.headers["x-content-type-options"] == "nosniff"
        if not page.headers["content-type"].startswith("text/html"):
            continue
        parsed = Parsed(page.text)
        assert parsed.scripts() == [], path
        assert parsed.problems == [], (path, parsed.problems)
        assert [t for t, _ in parsed.tags][:1] == ["html"], path
        assert any(t == "title" for t, _ in parsed.tags), path
        assert "<script" not in page.text.lower(), path


@reads_stage
async def test_a_name_a_player_typed_is_shown_as_text_never_as_markup(staged_server: Staged):
    url, stage = staged_server.url, staged_server.stage
    for path in ("/", f"/rooms/{stage.live}", f"/games/{stage.done}",
                 f"/games/{stage.done}?step=3", "/players/Anna"):
        page = await fetch(url, path)
        parsed = Parsed(page.text)
        assert parsed.scripts() == [], path
        assert "<script>" not in page.text and "<script" not in page.text, path
        assert not any(name == "onmouseover" for _, attrs in parsed.tags
                       for name, _ in attrs), path
    game = Parsed((await fetch(url, f"/games/{stage.done}")).text)
    assert SCRIPT_ROOM in game.text and QUOTE_NAME in game.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (
        await fetch(url, f"/games/{stage.done}")).text
    live = Parsed((await fetch(url, f"/rooms/{stage.live}")).text)
    assert "1 watching" in live.text  # the spectator named <script>x</script>, counted
    home = Parsed((await fetch(url, "/")).text)
    assert SCRIPT_NAME in home.text  # online, as text
    player = await fetch(url, "/players/%3Cscript%3Ex%3C%2Fscript%3E")
    assert player.status == 200 and SCRIPT_NAME in Parsed(player.text).text
    quoted = await fetch(url, "/players/%22%20onmouseover%3D%22x")
    assert quoted.status == 200 and QUOTE_NAME in Parsed(quoted.text).text


@reads_stage
async def test_private_rooms_and_games_appear_nowhere_and_answer_as_nothing_does(
        staged_server: Staged):
    url, stage = staged_server.url, staged_server.stage
    pages = await crawl(url)
    for path, page in pages.items():
        for hidden in (stage.private_waiting, stage.private_done, "Secret room",
                       "Amagada"):
            assert hidden not in page.text, (path, hidden)
    nothing = await fetch(url, "/rooms/rnothing0")
    assert nothing.status == 404
    for path in (f"/rooms/{stage.private_waiting}", f"/rooms/{stage.private_done}",
                 f"/games/{stage.private_done}", f"/games/{stage.private_done}/record",
                 f"/games/{stage.private_done}?step=1",
                 f"/rooms/{stage.private_code}"):
        page = await fetch(url, path)
        assert (page.status, page.body) == (404, nothing.body), path
    # Dani's page lists no game: the one Dani finished was private
    dani = Parsed((await fetch(url, "/players/Dani")).text)
    assert "No public game finished yet" in dani.text


@reads_stage
async def test_no_token_key_code_address_or_path_is_in_any_page(staged_server: Staged):
    url, stage, tmp_path = staged_server.url, staged_server.stage, staged_server.folder
    pages = await crawl(url)
    assert len(stage.secrets) >= 8
    for path, page in pages.items():
        for secret in stage.secrets:
            assert secret not in page.text, (path, "a secret")
        assert "127.0.0.1" not in page.text and str(tmp_path) not in page.text, path


async def test_the_join_command_names_the_address_the_browser_used_unless_told():
    async with serving() as (_, url):
        port = url.rsplit(":", 1)[1]
        page = Parsed((await fetch(url, "/")).text)
        assert f"castell ws://127.0.0.1:{port}" in page.text
        forged = await fetch(url, "/", {"Host": "<b>evil</b>"})
        assert "<b>" not in forged.text and "evil" not in forged.text
    async with serving(web_join=JOIN, web_name="Castell de Vilafranca") as (_, url):
        page = Parsed((await fetch(url, "/")).text)
        assert f"castell {JOIN}" in page.text and "Castell de Vilafranca" in page.text


async def test_a_live_game_s_page_is_made_once_per_version_and_follows_the_game():
    async with serving() as (server, url):
        anna = await GameClient.connect(url)
        await anna.hello("Anna", new_key())
        live = await bot_room(anna, "Dimarts", ["random"])
        # Anna's turn (the bot may play first): the room waits for her, its version stays
        await play_seat(anna, live.seat, random.Random(5), until_round=1)
        cache = server.web.pages.cache
        now = [1000.0]
        cache.clock = lambda: now[0]  # the pages' time, moved on by the test
        first = await fetch(url, f"/rooms/{live.room}")
        misses = cache.misses
        for _ in range(5):
            assert (await fetch(url, f"/rooms/{live.room}")).body == first.body
        assert cache.misses == misses  # the same version: made once
        await play_seat(anna, live.seat, random.Random(5), until_round=2)
        # the game moved on: shown as it stood at most FRESH seconds ago, not made again
        assert (await fetch(url, f"/rooms/{live.room}")).body == first.body
        assert cache.misses == misses
        now[0] += FRESH
        later = await fetch(url, f"/rooms/{live.room}")
        assert cache.misses > misses and later.body != first.body
        text = Parsed(later.text).text
        assert "round 2/10" in text and "Anna" in text and "ended the turn" in text
        assert later.headers["cache-control"] == "no-cache"
        assert 'http-equiv="refresh"' in later.text
        await anna.close()


async def test_a_game_not_in_memory_is_shown_from_the_store_and_not_loaded_for_it():
    async with serving() as (server, url):
        anna = await GameClient.connect(url)
        await anna.hello("Anna", new_key())
        live = await bot_room(anna, "Dijous", ["random"])
        await play_seat(anna, live.seat, random.Random(6), until_round=3)
        shown = Parsed((await fetch(url, f"/rooms/{live.room}")).text).text
        await anna.close()
        runner = server.lobby.rooms[live.room]
        await runner.wait_idle()
        server.lobby.remove(runner)  # unloaded, as the sweeper unloads a game nobody is in
        page = await fetch(url, f"/rooms/{live.room}")
        assert page.status == 200
        stored = Parsed(page.text).text
        assert "round 3/10" in stored and "round 3/10" in shown
        assert live.room not in server.lobby.rooms


@reads_stage
async def test_a_finished_game_steps_through_its_replay_and_gives_its_record(
        staged_server: Staged):
    url, stage = staged_server.url, staged_server.stage
    record = await fetch(url, f"/games/{stage.done}/record")
    assert record.status == 200 and record.headers["content-type"] == "application/json"
    assert record.headers["content-disposition"] == \
        f'attachment; filename="castell-{stage.done}.json"'
    game = GameRecordFile.from_json(record.text)
    last = len(game.actions)
    whole = Parsed((await fetch(url, f"/games/{stage.done}")).text).text
    assert f"step {last} of {last}" in whole and "Final score" in whole
    total = max(int(s["total"]) for s in (game.result or {})["scores"])
    assert f" {total} " in f" {whole} "
    setup = Parsed((await fetch(url, f"/games/{stage.done}?step=0")).text)
    assert f"step 0 of {last}" in setup.text and "round 1/10" in setup.text
    assert "?step=1#replay" in setup.links
    page = await fetch(url, f"/games/{stage.done}?step=5")
    assert '<svg class="chart"' in page.text and 'class="now"' in page.text
    for bad in (f"?step={last + 1}", "?step=-1", "?step=x", "?step=1e3"):
        assert (await fetch(url, f"/games/{stage.done}{bad}")).status == 404, bad
    # a game still being played has no game page yet
    assert (await fetch(url, f"/games/{stage.live}")).status == 404


async def test_a_finished_game_shows_its_review_once_one_is_kept():
    async with serving(review_samples=1, review_candidates=1) as (server, url):
        anna = await GameClient.connect(url)
        await anna.hello("Anna", new_key())
        done = await bot_room(anna, "Revisada", ["random"])
        await play_seat(anna, done.seat, random.Random(8))
        before = Parsed((await fetch(url, f"/games/{done.room}")).text).text
        assert "No review of this game yet" in before
        stored = await server.store.load(done.room)
        assert stored is not None
        await server.reviews.review(record_file(stored), share="test",
                                    progress=lambda _d, _t: None)
        # (a page not made before the review: ``/games/ID`` itself is kept a minute)
        after = Parsed((await fetch(url, f"/games/{done.room}?step=0")).text).text
        assert "No review of this game yet" not in after
        assert "accuracy" in after and "hard bot" in after
        await anna.close()


async def test_a_player_s_page_shows_rating_history_rank_and_public_games(tmp_path: Path):
    db = tmp_path / "castell.sqlite3"
    async with open_store(str(db)) as store:
        keys = await seed_ratings(store, {"Anna": [1, 1, 2, 1, 1, 1], "Biel": [2, 2, 1, 2, 2]})
    async with serving(open_store(str(db))) as (_, url):
        anna = await GameClient.connect(url)
        await anna.hello("Anna", keys["Anna"])
        done = await bot_room(anna, "Divendres", ["random"])
        await play_seat(anna, done.seat, random.Random(9))
        page = await fetch(url, "/players/anna")  # names compare as names do
        parsed = Parsed(page.text)
        assert page.status == 200 and "ranked 1" in parsed.text
        assert "6 rated games, 5 won" in parsed.text
        assert '<svg class="chart"' in page.text
        assert f"/games/{done.room}" in parsed.links
        assert "playing" in parsed.text or "in the lobby" in parsed.text
        board = Parsed((await fetch(url, "/leaderboard")).text)
        assert "/players/Anna" in board.links and "/players/Biel" in board.links
        assert (await fetch(url, "/players/Nobody")).status == 404
        found = await fetch(url, "/players?name=Biel")
        assert found.status == 303 and found.headers["location"] == "/players/Biel"
        await anna.close()


@reads_stage
async def test_a_tournament_s_page_shows_its_players_and_tables(staged_server: Staged):
    url, stage = staged_server.url, staged_server.stage
    page = Parsed((await fetch(url, f"/tournaments/{stage.tournament}")).text)
    assert "Festa Major" in page.text and "open" in page.text
    assert "/players/Anna" in page.links
    listed = Parsed((await fetch(url, "/tournaments")).text)
    assert f"/tournaments/{stage.tournament}" in listed.links
    assert (await fetch(url, "/tournaments/tnothing")).status == 404


@pytest.mark.parametrize("path", [
    "/nope", "/rooms", "/rooms/", "/rooms/a/b", "/rooms/%ZZ", "/rooms/%3Cscript%3E",
    "/rooms/" + "r" * 41, "/games/rnothing0", "/games/rnothing0/record",
    "/players/" + "x" * 70, "/tournaments/t%2F..", "/favicon.ico", "/?" + "&".join(
        f"a{i}=1" for i in range(20)), "/rooms/..%2F..%2Fetc",
])
async def test_what_is_not_a_page_is_a_404_page_never_a_traceback(path, caplog):
    async with serving() as (_, url):
        with caplog.at_level(logging.WARNING):
            page = await fetch(url, path)
        assert page.status == 404, path
        assert "Traceback" not in page.text and "Not found" in Parsed(page.text).text
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_page_that_fails_is_logged_with_its_cause_and_answered_500(tmp_path, caplog):
    db = tmp_path / "castell.sqlite3"
    async with serving(open_store(str(db))) as (_, url):
        anna = await GameClient.connect(url)
        await anna.hello("Anna", new_key())
        done = await bot_room(anna, "Trencada", ["random"])
        await play_seat(anna, done.seat, random.Random(10))
        await anna.close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE actions SET action = X'c1' WHERE room = ? AND seq = 2", (done.room,))
    conn.commit()
    conn.close()
    async with serving(open_store(str(db))) as (_, url):
        with caplog.at_level(logging.ERROR, logger="castell.web"):
            page = await fetch(url, f"/games/{done.room}")
        assert page.status == 500
        assert "Traceback" not in page.text and "could not be made" in page.text
        failed = [r for r in caplog.records if r.name == "castell.web"]
        assert failed and failed[0].exc_info is not None
        assert "cannot be read" in str(failed[0].exc_info[1])  # the cause, in the log


async def test_pages_past_the_per_address_rate_are_refused_429_and_play_goes_on():
    async with serving(web_rate=0.01, web_burst=3) as (_, url):
        answers = [await fetch(url, "/") for _ in range(5)]
        assert [a.status for a in answers] == [200, 200, 200, 429, 429]
        assert int(answers[3].headers["retry-after"]) >= 1
        anna = await GameClient.connect(url)  # the game's own connections are not pages
        await anna.hello("Anna")
        await anna.request(m.CreateRoom, name="Encara", seats=2)
        await anna.close()


async def test_with_web_off_a_browser_gets_the_websocket_endpoint_s_answer():
    async with serving(web=False) as (_, url):
        page = await fetch(url, "/")
        assert page.status == 400 and "WebSocket" in page.text
        assert (await fetch(url, "/health")).status == 200


async def test_a_page_request_writes_nothing_to_the_log_at_info(caplog):
    async with serving() as (_, url):
        with caplog.at_level(logging.INFO):
            caplog.clear()
            await fetch(url, "/")
            await fetch(url, "/nope")
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO] == []


async def test_a_page_is_only_read_head_has_no_body_and_a_post_is_refused():
    async with serving() as (_, url):
        host, port = url.removeprefix("ws://").rsplit(":", 1)

        async def raw(request: bytes) -> bytes:
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(request)
            data = await reader.read()
            writer.close()
            return data

        got = await fetch(url, "/")
        asked = f"HEAD / HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
        head, _, body = (await raw(asked)).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and body == b""
        assert f"Content-Length: {len(got.body)}".encode() in head
        posted = await raw(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        assert posted.startswith(b"HTTP/1.1 405") and b"Allow: GET, HEAD" in posted
