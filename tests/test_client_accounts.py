"""The client's side of accounts against a real server: the key kept per server, ``castell
account export`` and ``import`` on a fresh home, ``castell games``, an account met under every
address of its server (castell's command line, run in this process), signing in on the other
home (the full-screen client in this process, its state where ``castell`` keeps it), and
``your_turn`` heard in the lobby, its bell rung in the real ``castell`` in a pty."""

from __future__ import annotations

import asyncio
import json
import re
import stat
import subprocess
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest

from client.net.net import GameClient
from client.screens.app import TerminalScreen
from shared import messages as m
from shared.actions import EndTurn
from tests.support.proxy import cutting_proxy
from tests.support.screens import board, enter, full_screen, shown, status_line, until
from tests.support.servers import serving_in_thread
from tests.support.terminal import Terminal, castell_here
from tests.support.wire import caught_up

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def castell(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
            ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``castell ARGS`` run to completion in this process with ``state`` as its home (in a
    thread, from a coroutine: it runs an event loop of its own): its code and what it said,
    as a process's."""
    def run(state: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        code = castell_here(monkeypatch, state, *args, stdin=stdin)
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out, err)
    return run


async def test_an_exported_account_imported_on_a_fresh_home_signs_in_as_the_same_account(
        server, url, tmp_path, castell):
    first, second = tmp_path / "laptop", tmp_path / "desktop"
    async with _castell_screen(url, "Anna", first) as anna:
        ctrl = anna.controller
        await ctrl.start()
        assert "you are Anna" in shown(anna)
        await enter(anna, "create Diumenge seats=2 timer=2d")
        await enter(anna, "bot")
        await until(lambda: "Every seat is taken" in shown(anna))
        await enter(anna, "start")
        await until(lambda: "Diumenge · round 1/10" in board(anna))
    keys = first / "castell" / "keys.json"
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600  # the key is a password
    key = kept_key(first)  # one key, for the one server

    exported = await asyncio.to_thread(castell, first, "account", "export", url)
    assert exported.returncode == 0, exported.stderr
    line = exported.stdout.strip()
    assert line.startswith("castell-account ws://127.0.0.1:")
    # Nothing to export from a home that never met the server.
    assert (await asyncio.to_thread(castell, second, "account", "export", url)).returncode == 1
    imported = await asyncio.to_thread(castell, second, "account", "import", stdin=line + "\n")
    assert imported.returncode == 0, imported.stderr
    assert kept_key(second) == key

    # From the shell: the games of the account.
    listed = await asyncio.to_thread(castell, second, "games", url)
    assert listed.returncode == 0, listed.stderr
    assert "(you are Anna)" in listed.stdout
    assert "Diumenge — Anna, " in listed.stdout and "2 d turns" in listed.stdout

    # On the other machine, whatever name is typed, it is Anna, and her game is hers.
    async with _castell_screen(url, "Somebody", second) as again:
        await again.controller.start()
        lobby = shown(again)
        assert "you are Anna" in lobby and "Your games" in lobby, lobby
        assert re.search(r"1\. Diumenge — Anna", lobby), lobby
        await enter(again, "resume 1")
        assert "back in 'Diumenge', seat 0" in status_line(again)
        assert "Diumenge · round 1/10" in board(again)
    # A guest cannot play under the account's name any more.
    guest = await asyncio.to_thread(castell, tmp_path / "guest", url, "--name", "ANNA",
                                    "--guest", "--plain", stdin="quit\n")
    assert guest.returncode == 1 and "name of an account" in guest.stderr


def _castell_screen(url: str, name: str, home: Path
                    ) -> AbstractAsyncContextManager[TerminalScreen]:
    """The full-screen client as ``castell URL --name NAME`` runs it with ``home`` as its
    state folder (XDG_STATE_HOME): its seats, settings and key in ``home/castell``."""
    return full_screen(url, name, home / "castell", keys=home / "castell")


def test_your_turn_rings_the_bell_and_shows_in_the_lobby(tmp_path):
    with serving_in_thread() as url:
        biel = Terminal([url, "--name", "Biel"], tmp_path / "biel")
        rung: list[int] = []
        try:
            biel.wait_for(r"you are Biel")

            async def anna_plays() -> None:
                anna = await GameClient.connect(url)
                await anna.hello("Anna", "k" * 48)
                made = await anna.request(m.CreateRoom, name="Correspondència", seats=2,
                                          turn_seconds=2 * 24 * 3600)
                biel.type(f"join {made.room}\r")
                await anna.wait_state(lambda p: len(p.view["players"]) == 2, timeout=20)
                await anna.request(m.StartGame)
                push = await anna.wait_state(lambda p: p.view["status"] == "playing")
                await asyncio.to_thread(biel.wait_for, r"Correspondència · round 1/10")
                if push.view["turn"] == 1:  # Biel's turn first: he ends it
                    biel.type("end\r")
                    await asyncio.to_thread(biel.wait_for, r"end anyway\?")
                    biel.type("y\r")
                    await anna.wait_state(lambda p: p.view["turn"] == 0, timeout=20)
                biel.type("leave\r")  # to the lobby: the seat stays his
                await asyncio.to_thread(biel.wait_for, r"Open rooms on")
                biel.settle()
                rung.append(biel.screen.bells)  # (his turn in the game rang it too)
                while anna.state.view["turn"] == 0:
                    await caught_up(anna, await anna.act(EndTurn()))
                await anna.close()

            asyncio.run(anna_plays())
            biel.wait_for(r"your turn in 'Correspondència'")
            biel.settle()
            assert biel.screen.bells == rung[0] + 1
            # The bell can be turned off, and stays off.
            biel.type("bell off\r")
            biel.wait_for(r"no bell")
            settings = json.loads((tmp_path / "biel" / "castell" / "settings.json").read_text())
            assert settings["bell"] is False
            biel.type("games\r")
            biel.wait_for(r"YOUR TURN")
            biel.quit()
        finally:
            biel.close()


def kept_key(state: Path) -> str:
    """The one account key kept in the state folder ``state``."""
    data = json.loads((state / "castell" / "keys.json").read_text())
    if "version" not in data:  # (the form of an older client: address -> key)
        data = {"keys": data}
    keys = [entry["key"] for entry in data.get("servers", {}).values()]
    keys += list(data.get("keys", {}).values())
    assert len(keys) == 1, data
    return str(keys[0])


async def test_an_account_is_the_server_s_under_every_address_that_reaches_it(
        server, url, tmp_path, castell):
    """Anna plays at one address; then, on the same machine, she reaches the same server at
    another (here a forwarded port): she is still Anna there, and `castell games` lists her
    games there."""
    state = tmp_path / "anna"
    made = await asyncio.to_thread(castell, state, url, "--name", "Anna", "--plain",
                                   stdin="quit\n")
    assert made.returncode == 0 and "you are Anna" in made.stdout, made.stderr
    async with await GameClient.connect(url) as anna:
        await anna.hello("Anna", kept_key(state))
        await anna.request(m.CreateRoom, name="Diumenge", seats=2,
                           turn_seconds=2 * 24 * 3600)
        await anna.request(m.AddBot)
        await anna.request(m.StartGame)
    async with cutting_proxy("127.0.0.1", int(url.rsplit(":", 1)[1])) as forward:
        other = f"ws://127.0.0.1:{forward.port}"
        again = await asyncio.to_thread(castell, state, other, "--name", "Anna",
                                        "--plain", stdin="quit\n")
        assert again.returncode == 0, again.stderr
        assert "you are Anna" in again.stdout
        listed = await asyncio.to_thread(castell, state, "games",
                                         f"localhost:{forward.port}")
        assert listed.returncode == 0, listed.stderr
        assert "(you are Anna)" in listed.stdout and "Diumenge — Anna, " in listed.stdout
    # One key still, for one server, known at both addresses.
    data = json.loads((state / "castell" / "keys.json").read_text())
    assert len(data["servers"]) == 1 and not data["keys"]


def test_an_import_never_silently_replaces_a_kept_key(tmp_path, castell):
    home = tmp_path / "home"
    url = "ws://127.0.0.1:23457"
    first, second = "a" * 48, "b" * 48
    assert castell(home, "account", "import", f"castell-account {url} {first}").returncode == 0
    refused = castell(home, "account", "import", f"castell-account 127.0.0.1:23457 {second}")
    assert refused.returncode == 1 and "--replace" in refused.stderr
    assert castell(home, "account", "export", url).stdout.split()[-1] == first
    # Asked to, it replaces the key, and keeps the old one aside, saying where.
    replaced = castell(home, "account", "import", "--replace",
                       f"castell-account {url} {second}")
    assert replaced.returncode == 0, replaced.stderr
    aside = home / "castell" / "replaced-keys.txt"
    assert str(aside) in replaced.stdout
    assert f"castell-account {url} {first}" in aside.read_text().splitlines()
    assert stat.S_IMODE(aside.stat().st_mode) == 0o600
    assert castell(home, "account", "export", url).stdout.split()[-1] == second
