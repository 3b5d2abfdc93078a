"""The web pages as a browser meets them, for the tests and the screenshots: a plain HTTP
client over a real socket (:func:`fetch`), the stdlib's HTML parser reading a page's links,
tags and text (:class:`Parsed`), a crawl that follows every link from ``/`` (:func:`crawl`),
and games to look at: a seat played by the ``normal`` bot's choices over the protocol beside
the server's own bots (:func:`play_seat`), and rated games stored as the store stores them
(:func:`seed_ratings`)."""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Iterable
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import attrs

from client.local.keys import new_key
from client.net.net import GameClient
from server.core.names import name_key
from server.store.base import AccountRecord, Placing, RoomRecord, Store, hash_token
from shared import bots
from shared import messages as m
from shared.view import state_from_view


@attrs.frozen
class Fetched:
    """One answer: its status, headers (names in lower case) and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()


async def fetch(url: str, path: str, headers: dict[str, str] | None = None) -> Fetched:
    """A GET of ``path`` from the server at ``url`` (``ws://HOST:PORT``), as a browser sends
    it (no WebSocket upgrade), read to the end (the server closes after each page)."""
    host, port = urlsplit(url).netloc.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "Accept: text/html",
             *(f"{k}: {v}" for k, v in (headers or {}).items()), "Connection: close", "", ""]
    writer.write("\r\n".join(lines).encode())
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    found = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        found[name.strip().lower()] = value.strip()
    return Fetched(int(status_line.split()[1]), found, body)


#: The elements of HTML that have no end tag.
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "source", "track", "wbr"})


class Parsed(HTMLParser):
    """A page read by the standard library's HTML parser: every start tag with its
    attributes, the links (``href``, ``src``), the forms' actions, the text, and every
    element left open or closed out of order (``problems``)."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.links: list[str] = []
        self.actions: list[str] = []
        self.chunks: list[str] = []
        self.problems: list[str] = []
        self._open: list[str] = []
        self.feed(text)
        self.close()
        self.problems += [f"<{tag}> never closed" for tag in self._open]

    def _start(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.links.append(value)
            elif name == "action" and value is not None:
                self.actions.append(value)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs)
        if tag not in VOID:
            self._open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if not self._open or self._open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self._open[-1:] or 'nothing'}")
            if tag in self._open:
                while self._open.pop() != tag:
                    pass
            return
        self._open.pop()

    def handle_data(self, data: str) -> None:
        self.chunks.append(data)

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.chunks).split())

    def scripts(self) -> list[str]:
        """What could run a script: ``<script>`` tags, ``on…`` attributes, ``javascript:``
        addresses."""
        found = [tag for tag, _ in self.tags if tag == "script"]
        found += [f"{tag} {name}" for tag, attrs in self.tags for name, _ in attrs
                  if name.lower().startswith("on")]
        found += [link for link in [*self.links, *self.actions]
                  if link.strip().lower().startswith("javascript")]
        return found


async def crawl(url: str, start: str = "/", limit: int = 300) -> dict[str, Fetched]:
    """Every page of this server reachable by links from ``start`` (at most ``limit``),
    by path (its query included), each fetched once. A replay's steps are followed from
    its game's page, not from one step to the next (a game has hundreds)."""
    seen: dict[str, Fetched] = {}
    todo = [start]
    while todo and len(seen) < limit:
        path = todo.pop(0)
        if path in seen:
            continue
        page = seen[path] = await fetch(url, path)
        if not page.headers.get("content-type", "").startswith("text/html"):
            continue
        for link in Parsed(page.text).links:
            target = urljoin(path, link)
            parts = urlsplit(target)
            if parts.scheme or parts.netloc or link.startswith("data:"):
                continue  # not a page of this server
            local = parts.path + (f"?{parts.query}" if parts.query else "")
            if "step=" in path and "step=" in local:
                continue
            if local not in seen and local not in todo:
                todo.append(local)
    return seen


async def play_seat(client: GameClient, seat: int, rng: random.Random, *,
                    until_round: int | None = None, timeout: float = 60.0) -> dict[str, Any]:
    """Play ``seat`` with the ``normal`` bot's choices, each read off the client's own
    view, until the game is over or (``until_round``) the seat's turn comes, untouched, in
    that round; the view it stopped at."""
    async with asyncio.timeout(timeout):
        while True:
            push = client.view  # (the room's latest push: ``state`` may be another room's)
            assert push is not None
            view = push.view
            if view["status"] == "finished":
                return view
            if view["turn"] == seat:
                if until_round is not None and view["round"] >= until_round \
                        and not view["done"]:
                    return view
                action = bots.choose(state_from_view(view), seat, "normal", rng)
                version = await client.act(action)
                if client.view.version < version:
                    await client.wait_state(lambda p, v=version: p.version >= v)
                continue
            await client.wait_state(lambda p, v=push.version: p.version > v)


async def seed_ratings(store: Store, games: dict[str, list[int]],
                       rivals: Iterable[str] = ("Rival1", "Rival2", "Rival3"),
                       ) -> dict[str, str]:
    """Accounts whose rated games are stored through the store's own ``finish``:
    ``games[name]`` the places of each of its two-seat games, against the ``rivals`` in
    turn (three, so that the ratings are established). Each account's key, by name."""
    rivals = list(rivals)
    ids = {}
    keys = {name: new_key() for name in [*games, *rivals]}
    for name, key in keys.items():
        account = await store.sign_in(AccountRecord("a" + secrets.token_hex(8), name,
                                                    name_key(name), hash_token(key)))
        assert isinstance(account, AccountRecord)
        ids[name] = account.account
    n = 0
    for name, places in games.items():
        for place in places:
            n += 1
            room = f"rated{n:04d}"
            await store.create_room(RoomRecord(room, f"rated {n}", 2, "normal", None, True,
                                               None, n, rated=True, created_at=1.7e9 + n))
            await store.finish(room, {"winners": []}, 1.7e9 + n, placings=(
                Placing(0, ids[name], place),
                Placing(1, ids[rivals[n % len(rivals)]], 2 if place == 1 else 1)))
    return keys


async def bot_room(client: GameClient, name: str, bots_: list[str], *,
                   turn_seconds: int | None = None, private: bool = False) -> m.Joined:
    """A room of ``client`` (seat 0) and bots of those levels, its game started."""
    joined = await client.request(m.CreateRoom, name=name, seats=1 + len(bots_),
                                  turn_seconds=turn_seconds, private=private)
    for level in bots_:
        await client.request(m.AddBot, level=level)
    await client.request(m.StartGame)
    await client.wait_state(lambda p: p.view["status"] == "playing")
    return joined
