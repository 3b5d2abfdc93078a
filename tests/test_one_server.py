"""One server, not two or three in one: every server has a store (SQLite in memory when it
is given none), finds its rooms through one room directory, and is put together in one place
(server/app.py) with each part's collaborators given to its constructor."""

from __future__ import annotations

import re
from pathlib import Path

from client.local.keys import new_key
from client.net.net import GameClient
from server.app import CastellServer
from server.core.names import name_key
from server.runtime.directory import LocalDirectory
from server.store.sqlite import MEMORY, SQLiteStore
from shared import messages as m
from tests.support.servers import serving

SERVER = Path(__file__).resolve().parents[1] / "server"


def sources() -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in sorted(SERVER.rglob("*.py"))}


def test_no_part_of_the_server_branches_on_having_a_store_or_a_cluster():
    """The store and the room directory are always there: nothing asks whether they are."""
    found = [f"{path.relative_to(SERVER.parent)}:{n}: {line.strip()}"
             for path, text in sources().items()
             for n, line in enumerate(text.splitlines(), 1)
             for phrase in ("store is None", "store is not None", "cluster is None",
                            "cluster is not None")
             if phrase in line]
    assert found == []


def test_parts_get_their_collaborators_from_their_constructors():
    """No ``use_*`` method hands a part a collaborator later, and the composition root
    assigns no other object's attribute but the flags of the server's life (ready,
    draining, stopping)."""
    uses = [f"{path.name}: {match.group(0)}" for path, text in sources().items()
            for match in re.finditer(r"def use_\w+", text)]
    assert uses == []
    app = (SERVER / "app.py").read_text(encoding="utf-8")
    assigned = set(re.findall(r"self\.\w+\.(\w+) = ", app))
    assert assigned <= {"ready", "draining", "stopping"}


async def test_a_server_given_no_store_keeps_its_games_in_one_in_memory():
    """No store given: a SQLite database in memory, open for the server's life, holds what
    a stored server's would: an account, a room, and its record."""
    server = CastellServer()
    assert isinstance(server.store, SQLiteStore) and server.store.path == MEMORY
    assert isinstance(server.directory, LocalDirectory)
    async with serving() as (srv, url):
        anna = await GameClient.connect(url)
        await anna.hello("Anna", new_key())
        made = await anna.request(m.CreateRoom, name="kept", seats=2)
        stored = await srv.store.load(made.room)
        assert stored is not None and stored.room.name == "kept"
        assert (await srv.store.account_named(name_key("Anna"))) is not None
        await anna.close()
