"""Conformance: a real server, checked against docs/protocol.md from the wire up.

Written as the author of another client would write it, from the protocol page alone: raw
MessagePack over a plain ``websockets`` connection to a real server on 127.0.0.1, with the
page's names and numbers spelled out here rather than imported from the project (only the
server itself, and the helper that runs it, come from the code under test).

Every frame any test receives goes through the same checks (:class:`Peer`): it is a binary
frame holding one map with a string ``type``; a reply carries ``re`` and a push does not;
each server message has exactly its documented keys; every ``state`` holds a whole view of
the documented shape for its status and events of the documented shapes, with versions
growing; no ``error`` is ever ``internal_error``. When a test ends, every request it sent
must have had exactly one reply, and no seat token may have travelled in any frame but the
``joined`` that handed it to its holder.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from server.cli import build_parser, config_from_args
from server.store import open_store
from tests.support.servers import serving

pytestmark = pytest.mark.timeout(30)

# -- the page's names and numbers ----------------------------------------------------------------

SUBPROTOCOL = "castell.v1"
FRAME_LIMIT = 65536
ID_MAX = 2**31 - 1
WAIT = 3.0  # seconds any one expected frame may take

REGIONS = {"alt", "gir", "cen", "lle", "bcn", "tar", "ebr"}
SKILLS = {"balance", "base", "mix", "strength", "width"}
WHEEL_TILES = SKILLS | {"special"}
TILES = {f"lp{i:02d}" for i in range(1, 33)}
PRIZES = {"trophy", "medal", "ribbon"}
STEPS = {"move", "recruit", "train", "special"}
STATUSES = {"waiting", "playing", "finished"}
ERROR_CODES = {
    "bad_message", "unknown_type", "invalid_field", "hello_first", "already_in_room",
    "not_in_room", "room_not_found", "room_full", "not_creator", "seats_not_full",
    "already_started", "game_not_started", "not_a_player", "not_your_turn", "illegal_action",
    "game_over", "bad_token", "rate_limited", "internal_error", "moved", "name_taken",
}

#: Server messages: the keys each always has, and those it may add (docs: "Replies and pushes").
SERVER_KEYS: dict[str, tuple[set[str], set[str]]] = {
    "welcome": ({"type", "re", "player", "server", "protocol"}, {"account", "name", "server_id"}),
    "rooms": ({"type", "re", "rooms"}, set()),  # `nodes` only from a cluster node
    "joined": ({"type", "re", "room", "seat", "token", "code"}, set()),
    "ok": ({"type", "re"}, {"version"}),
    "error": ({"type", "re", "code", "message", "rule"}, {"field", "url"}),
    "state": ({"type", "room", "version", "view", "events"}, set()),
    "chat": ({"type", "room", "seat", "name", "text"}, set()),
}
REPLIES = {"welcome", "rooms", "joined", "ok", "error"}

#: The codes any request may be refused with, whatever it asks (docs: "Refusals and order").
ANY_REQUEST = {"bad_message", "unknown_type", "invalid_field", "hello_first", "rate_limited",
               "internal_error", "moved"}


def documented_refusals() -> dict[str, set[str]]:
    """Each request's own refusal codes, read from the page's table "Refusals and order,
    request by request" (its first two columns)."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text("utf-8")
    start = page.index("## Refusals and order, request by request")
    out: dict[str, set[str]] = {}
    for line in page[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 3:
            [request] = re.findall(r"`([a-z_]+)`", cells[0])
            codes = re.sub(r"\([^)]*\)", "", cells[1])  # (what is said in brackets: when)
            out[request] = set(re.findall(r"`([a-z_]+)`", codes))
    return out


REFUSALS = documented_refusals()
SUMMARY_KEYS = {"room", "name", "seats", "taken", "variant", "status", "turn_seconds"}

#: Event kinds and their fields (docs: "Events").
EVENT_FIELDS: dict[str, set[str]] = {
    "action": {"seat", "action"},
    "turn": {"seat"},
    "round": {"round", "first"},
    "refill": {"drawn"},
    "trained": {"seat", "tile"},
    "performed": {"seat", "tile", "region", "tokens"},
    "festival": {"round", "region", "town", "size", "results"},
    "game_over": {"scores", "winners"},
    "joined": {"seat", "name"},
    "left": {"seat", "name"},
    "connected": {"seat", "name"},
    "disconnected": {"seat", "name"},
    "started": set(),
    "timeout": {"seat"},
}

VIEW_KEYS = {
    "room", "name", "variant", "seats", "turn_seconds", "status", "round", "turn", "first",
    "done", "deadline", "bag", "wheel", "regions", "festivals", "performances", "prizes",
    "players", "scores", "winners", "spectators",
}
PLAYER_KEYS = {"seat", "name", "bot", "connected", "region", "team", "tower", "skills",
               "tokens", "best", "taken"}
SCORE_KEYS = {"seat", "tower", "diversity", "prizes", "sizes", "performances", "total"}
FULL_PRIZES = {"trophy": 12, "medal": 14, "ribbon": 14}


def is_int(value: Any) -> bool:
    return type(value) is int  # a boolean is not an integer (docs: "Envelope")


def is_opt_int(value: Any) -> bool:
    return value is None or is_int(value)


def is_str(value: Any) -> bool:
    return type(value) is str


def is_sizes(value: Any) -> bool:
    return type(value) is list and all(is_int(s) and 1 <= s <= 10 for s in value)


def largest_first(sizes: list[int]) -> bool:
    return sizes == sorted(sizes, reverse=True)


# -- the shape of a view -------------------------------------------------------------------------


def check_player(p: dict[str, Any], seats: int) -> None:
    assert set(p) == PLAYER_KEYS, set(p) ^ PLAYER_KEYS
    assert is_int(p["seat"]) and 0 <= p["seat"] < seats
    assert is_str(p["name"]) and 1 <= len(p["name"]) <= 24
    assert type(p["bot"]) is bool and type(p["connected"]) is bool
    assert p["region"] is None or p["region"] in REGIONS
    assert is_sizes(p["team"]) and largest_first(p["team"])
    assert type(p["tower"]) is list and all(is_sizes(level) and level for level in p["tower"])
    # the team holds every casteller the player owns, those in the tower included
    in_tower = Counter(s for level in p["tower"] for s in level)
    assert not in_tower - Counter(p["team"])
    assert set(p["skills"]) == SKILLS
    assert all(is_int(r) and 0 <= r <= 3 for r in p["skills"].values())
    assert is_int(p["tokens"]) and p["tokens"] >= 0
    assert is_int(p["best"]) and p["best"] >= 0
    taken = p["taken"]
    assert set(taken) == {"tiles", "prizes", "sizes", "tokens"}
    assert all(set(t) == {"tile", "region"} and t["tile"] in TILES and t["region"] in REGIONS
               for t in taken["tiles"])
    assert all(set(t) == {"prize", "region"} and t["prize"] in PRIZES
               and t["region"] in REGIONS for t in taken["prizes"])
    assert all(set(t) == {"size", "region"} and is_int(t["size"]) and 1 <= t["size"] <= 10
               and t["region"] in REGIONS for t in taken["sizes"])
    assert is_int(taken["tokens"]) and taken["tokens"] >= 0


def check_view(v: dict[str, Any]) -> None:
    """The view as docs/protocol.md "The view" describes it, for whatever its status."""
    # so never a seed, bag order or token; `private` only for a private room (an addition)
    assert set(v) - {"private"} == VIEW_KEYS, set(v) ^ VIEW_KEYS
    assert v.get("private", True) is True
    assert is_str(v["room"]) and is_str(v["name"])
    assert v["variant"] in ("normal", "advanced")
    seats = v["seats"]
    assert is_int(seats) and 2 <= seats <= 4
    assert v["turn_seconds"] is None or (is_int(v["turn_seconds"])
                                         and 10 <= v["turn_seconds"] <= 7 * 24 * 3600)
    assert v["status"] in STATUSES
    assert type(v["done"]) is list and set(v["done"]) <= STEPS
    assert len(set(v["done"])) == len(v["done"])  # each at most once (§4)
    assert v["deadline"] is None or type(v["deadline"]) in (int, float)
    assert is_int(v["bag"]) and 0 <= v["bag"] <= 150  # a count, never the order
    assert set(v["prizes"]) == PRIZES and all(is_int(n) for n in v["prizes"].values())
    assert type(v["players"]) is list
    assert type(v["spectators"]) is list and all(is_str(n) for n in v["spectators"])
    for p in v["players"]:
        check_player(p, seats)
    assert [p["seat"] for p in v["players"]] == sorted({p["seat"] for p in v["players"]})

    if v["status"] == "waiting":
        assert v["round"] == 0 and v["turn"] is None and v["first"] is None
        assert v["done"] == [] and v["deadline"] is None and v["bag"] == 150
        assert v["wheel"] == {} and v["regions"] == {} and v["performances"] == {}
        assert v["festivals"] == [] and v["prizes"] == FULL_PRIZES
        assert v["scores"] is None and v["winners"] is None
        for p in v["players"]:
            assert p["region"] is None and p["team"] == [] and p["tower"] == []
            assert set(p["skills"].values()) == {0} and p["tokens"] == 7 and p["best"] == 0
            assert p["taken"] == {"tiles": [], "prizes": [], "sizes": [], "tokens": 0}
        return

    assert is_int(v["round"]) and 1 <= v["round"] <= 10
    assert [p["seat"] for p in v["players"]] == list(range(seats))
    assert is_int(v["first"]) and 0 <= v["first"] < seats
    extra = "all" if v["variant"] == "normal" else "none"
    assert set(v["wheel"]) == REGIONS | {extra}
    assert set(v["wheel"].values()) <= WHEEL_TILES
    assert set(v["regions"]) == REGIONS
    for region, r in v["regions"].items():
        assert set(r) == {"castellers", "pawns"}
        assert is_sizes(r["castellers"]) and largest_first(r["castellers"])
        assert all(is_int(s) and 0 <= s < seats for s in r["pawns"])
        assert sorted(r["pawns"]) == sorted(p["seat"] for p in v["players"]
                                            if p["region"] == region)
    rounds = []
    for f in v["festivals"]:
        assert set(f) == {"round", "region", "town", "type", "size", "done"}
        assert is_int(f["round"]) and 3 <= f["round"] <= 10 and f["region"] in REGIONS
        assert is_str(f["town"]) and f["type"] == ("I" if f["round"] <= 6 else "II")
        assert is_int(f["size"]) and 1 <= f["size"] <= 10 and type(f["done"]) is bool
        assert f["done"] == (f["round"] < v["round"] or v["status"] == "finished")
        rounds.append(f["round"])
    assert rounds == sorted(rounds) and set(rounds) == set(range(3, 11))  # calendar order
    assert set(v["performances"]) == REGIONS
    for row in v["performances"].values():
        assert set(row) == {"tiles", "tokens"} and set(row["tiles"]) <= TILES
        assert is_int(row["tokens"]) and row["tokens"] >= 0

    if v["status"] == "playing":
        assert is_int(v["turn"]) and 0 <= v["turn"] < seats
        assert (v["deadline"] is None) == (v["turn_seconds"] is None)
        assert v["scores"] is None and v["winners"] is None
        return
    # finished
    assert v["turn"] is None and v["deadline"] is None and v["round"] == 10
    check_scores(v["scores"], v["winners"], seats)


def check_scores(scores: Any, winners: Any, seats: int) -> None:
    assert type(scores) is list and [s["seat"] for s in scores] == list(range(seats))
    for s in scores:
        assert set(s) == SCORE_KEYS and all(is_int(n) for n in s.values())
        assert s["total"] == sum(s[k] for k in ("tower", "diversity", "prizes", "sizes",
                                                "performances"))
    assert type(winners) is list and winners and all(is_int(w) for w in winners)
    best = max(s["total"] for s in scores)
    assert all(scores[w]["total"] == best for w in winners)  # §9: the highest total wins


def check_event(e: dict[str, Any]) -> None:
    assert is_str(e.get("kind")), e
    if e["kind"] not in EVENT_FIELDS:  # more may be added: tolerated (checklist, 8)
        return
    assert set(e) - {"kind"} == EVENT_FIELDS[e["kind"]], e
    kind = e["kind"]
    if "seat" in e:
        assert is_int(e["seat"]) and 0 <= e["seat"] <= 3, e
    if kind in ("joined", "left", "connected", "disconnected"):
        assert is_str(e["name"])
    elif kind == "action":
        assert is_str(e["action"]["kind"])
    elif kind == "round":
        assert is_int(e["round"]) and 1 <= e["round"] <= 10 and is_int(e["first"])
    elif kind == "refill":
        assert set(e["drawn"]) <= REGIONS
        assert all(is_sizes(s) and largest_first(s) for s in e["drawn"].values())
    elif kind == "trained":
        assert e["tile"] in WHEEL_TILES
    elif kind == "performed":
        assert e["tile"] in TILES and e["region"] in REGIONS
        assert is_int(e["tokens"]) and e["tokens"] >= 0
    elif kind == "game_over":
        check_scores(e["scores"], e["winners"], len(e["scores"]))
    elif kind == "festival":
        assert e["region"] in REGIONS and is_str(e["town"]) and is_int(e["size"])
        for r in e["results"]:
            assert set(r) == {"seat", "score", "prize", "size_token"}
            assert is_int(r["seat"]) and is_int(r["score"])
            assert r["prize"] is None or r["prize"] in PRIZES
            assert type(r["size_token"]) is bool
        assert sum(r["size_token"] for r in e["results"]) <= 1


# -- a raw client --------------------------------------------------------------------------------


class Peer:
    """One connection speaking raw MessagePack, checking every frame it receives."""

    def __init__(self, ws: ClientConnection, lab: Lab) -> None:
        self.ws = ws
        self.lab = lab
        self.frames: list[tuple[bytes, dict[str, Any]]] = []  # every frame received
        self.pending: list[dict[str, Any]] = []  # received, not yet taken by a test
        self.ids = itertools.count(1)
        self.sent: list[int] = []  # ids of requests expecting a reply with that `re`
        self.kinds: dict[int, str] = {}  # the type of each request sent, by its id
        self.replies: Counter[int | None] = Counter()
        self.versions: dict[str, int] = {}  # the last state version seen, per room
        self.joining: set[str] = set()  # rooms whose `joined` came, their first push not yet
        self.closed = False

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(msgpack.packb(message, use_bin_type=True))

    async def request(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Send a request with a fresh id; its one reply."""
        msg_id = next(self.ids)
        self.sent.append(msg_id)
        self.kinds[msg_id] = type_
        await self.send({"type": type_, "id": msg_id, **fields})
        return await self.take(lambda m: m.get("re") == msg_id and m["type"] in REPLIES)

    async def call(self, type_: str, **fields: Any) -> dict[str, Any]:
        """A request that must succeed."""
        reply = await self.request(type_, **fields)
        assert reply["type"] != "error", reply
        return reply

    async def refused(self, type_: str, code: str, **fields: Any) -> dict[str, Any]:
        """A request that must get an `error` with ``code``."""
        reply = await self.request(type_, **fields)
        assert reply["type"] == "error" and reply["code"] == code, reply
        return reply

    async def take(self, pred: Callable[[dict[str, Any]], bool],
                   timeout: float = WAIT) -> dict[str, Any]:
        """The first frame (received already, or next) matching ``pred``; others wait."""
        for i, msg in enumerate(self.pending):
            if pred(msg):
                return self.pending.pop(i)
        async with asyncio.timeout(timeout):
            while True:
                msg = await self._recv()
                if pred(msg):
                    return msg
                self.pending.append(msg)

    async def state(self, pred: Callable[[dict[str, Any]], bool] = lambda s: True,
                    timeout: float = WAIT) -> dict[str, Any]:
        """The next `state` push matching ``pred`` (earlier ones are dropped)."""
        while True:
            push = await self.take(lambda m: m["type"] == "state", timeout)
            if pred(push):
                return push

    async def with_event(self, kind: str) -> dict[str, Any]:
        """The next `state` push whose events hold one of ``kind``."""
        return await self.state(lambda s: any(e["kind"] == kind for e in s["events"]))

    async def after(self, reply: dict[str, Any]) -> dict[str, Any]:
        """The first `state` push received after ``reply`` (docs: sent right after `joined`)."""
        index = next(i for i, (_, m) in enumerate(self.frames) if m is reply)
        async with asyncio.timeout(WAIT):
            while True:
                for _, msg in self.frames[index + 1:]:
                    if msg["type"] == "state":
                        if any(m is msg for m in self.pending):
                            self.pending = [m for m in self.pending if m is not msg]
                        return msg
                self.pending.append(await self._recv())

    async def until(self, pred: Callable[[dict[str, Any]], bool],
                    timeout: float = WAIT) -> dict[str, Any]:
        """The latest `state` push, once it satisfies ``pred``."""
        async with asyncio.timeout(timeout):
            while True:
                states = self.states()
                if states and pred(states[-1]):
                    return states[-1]
                self.pending.append(await self._recv())

    def states(self) -> list[dict[str, Any]]:
        """Every `state` push received so far, in order."""
        return [m for _, m in self.frames if m["type"] == "state"]

    async def quiet(self, seconds: float = 0.1) -> list[dict[str, Any]]:
        """Whatever arrives within the next ``seconds``."""
        new: list[dict[str, Any]] = []
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                while True:
                    new.append(await self._recv())
        return new

    async def closed_with(self, timeout: float = WAIT) -> tuple[int | None, str]:
        """Read until the server closes the connection: its close code and reason."""
        with contextlib.suppress(ConnectionClosed):
            async with asyncio.timeout(timeout):
                while True:
                    self.pending.append(await self._recv())
        self.closed = True
        assert self.ws.close_code is not None
        return self.ws.close_code, self.ws.close_reason or ""

    async def _recv(self) -> dict[str, Any]:
        data = await self.ws.recv()
        assert isinstance(data, bytes), "the server sends binary frames only"
        msg = msgpack.unpackb(data, raw=False)
        self.frames.append((data, msg))
        self._check(msg)
        return msg

    def _check(self, msg: Any) -> None:
        assert type(msg) is dict and is_str(msg.get("type")), msg
        kind = msg["type"]
        assert kind in SERVER_KEYS, msg
        required, optional = SERVER_KEYS[kind]
        assert required <= set(msg) <= required | optional, msg
        if kind in REPLIES:
            assert msg["re"] is None or (is_int(msg["re"]) and 0 <= msg["re"] <= ID_MAX)
            self.replies[msg["re"]] += 1
        if kind == "error":
            assert msg["code"] in ERROR_CODES and msg["code"] != "internal_error", msg
            asked = self.kinds.get(msg["re"])
            if asked in REFUSALS:  # a refusal the page lists for that request
                assert msg["code"] in REFUSALS[asked] | ANY_REQUEST, (asked, msg)
            assert is_str(msg["message"]) and msg["message"]
            assert msg["rule"] is None or (is_str(msg["rule"]) and msg["code"] == "illegal_action")
            if msg["code"] == "illegal_action":
                assert is_str(msg["rule"]) and msg["rule"], msg
            if msg["code"] == "invalid_field":
                assert is_str(msg.get("field")), msg  # an addition: always for invalid_field
        elif kind == "ok":
            assert "version" not in msg or is_int(msg["version"])
        elif kind == "welcome":
            assert is_str(msg["player"]) and is_str(msg["server"]) and msg["protocol"] == 1
        elif kind == "rooms":
            for summary in msg["rooms"]:
                assert set(summary) == SUMMARY_KEYS, summary
                assert is_int(summary["seats"]) and 0 <= summary["taken"] <= summary["seats"]
                assert summary["status"] in STATUSES
        elif kind == "joined":
            assert is_str(msg["room"]) and is_opt_int(msg["seat"])
            assert msg["token"] is None or is_str(msg["token"])
            assert msg["code"] is None or is_str(msg["code"])
            if msg["token"] is not None:
                self.lab.tokens.add(msg["token"])
            self.joining.add(msg["room"])
        elif kind == "state":
            assert is_int(msg["version"]) and type(msg["events"]) is list
            last = self.versions.get(msg["room"])
            # versions grow by at least one with every push; the push right after a
            # `joined` may repeat the last one seen, if nothing changed meanwhile, and so may
            # a push without events (a spectator came or went: only `spectators` changed)
            if msg["room"] in self.joining or not msg["events"]:
                self.joining.discard(msg["room"])
                assert last is None or msg["version"] >= last, (last, msg["version"])
            else:
                assert last is None or msg["version"] > last, (last, msg["version"])
            self.versions[msg["room"]] = msg["version"]
            assert msg["view"]["room"] == msg["room"]
            check_view(msg["view"])
            for event in msg["events"]:
                check_event(event)
        elif kind == "chat":
            assert is_opt_int(msg["seat"]) and is_str(msg["name"]) and is_str(msg["text"])

    async def settle(self) -> None:
        """Every request sent had exactly one reply (docs: "Envelope")."""
        if self.closed or self.ws.close_code is not None:
            return
        sentinel = next(self.ids)
        await self.send({"type": "list_rooms", "id": sentinel})
        # replies come in the order of the requests, so every earlier one is in by then
        await self.take(lambda m: m.get("re") == sentinel)
        for msg_id in self.sent:
            assert self.replies[msg_id] == 1, (msg_id, self.replies[msg_id])


class Lab:
    """A real server on 127.0.0.1 and the raw peers of one test."""

    def __init__(self, store: Any = None, **config: Any) -> None:
        self.store = store
        self.config = config
        self.peers: list[Peer] = []
        self.tokens: set[str] = set()
        self.url = ""
        self.server: Any = None
        self._serving: Any = None

    async def __aenter__(self) -> Lab:
        self._serving = serving(self.store, **self.config)
        self.server, self.url = await self._serving.__aenter__()
        return self

    async def __aexit__(self, kind: Any, exc: Any, tb: Any) -> None:
        try:
            if kind is None:
                for peer in self.peers:
                    await peer.settle()
                self.check_tokens_stay_with_their_holders()
        finally:
            for peer in self.peers:
                with contextlib.suppress(Exception):
                    await peer.ws.close()
            await self._serving.__aexit__(kind, exc, tb)

    def check_tokens_stay_with_their_holders(self) -> None:
        for peer in self.peers:
            for data, msg in peer.frames:
                own = msg.get("token") if msg["type"] == "joined" else None
                for token in self.tokens - {own}:
                    assert token.encode() not in data, msg["type"]

    async def open(self, name: str | None = None, *,
                   subprotocols: tuple[str, ...] = (SUBPROTOCOL,),
                   compression: str | None = None) -> Peer:
        ws = await ws_connect(self.url, subprotocols=list(subprotocols),  # type: ignore[arg-type]
                              compression=compression, ping_interval=None, max_size=None)
        assert ws.subprotocol == SUBPROTOCOL
        peer = Peer(ws, self)
        self.peers.append(peer)
        if name is not None:
            await peer.call("hello", name=name)
        return peer


@pytest.fixture
async def lab() -> AsyncIterator[Lab]:
    async with Lab() as lab:
        yield lab


async def a_room(lab: Lab, seats: int = 2, *, names: tuple[str, ...] = ("Anna", "Biel",
                 "Carme", "Dani"), **settings: Any) -> tuple[str, list[Peer], list[str]]:
    """A room of ``seats`` seats with a person in each (peer i in seat i), and the tokens."""
    peers = [await lab.open(names[i]) for i in range(seats)]
    made = await peers[0].call("create_room", name="Friday night", seats=seats, **settings)
    tokens = [made["token"]]
    for peer in peers[1:]:
        tokens.append((await peer.call("join_room", room=made["room"]))["token"])
    return made["room"], peers, tokens


# -- transport -----------------------------------------------------------------------------------


@pytest.mark.parametrize("offered", [(), ("castell.v2",), ("chat", "castell")])
async def test_a_handshake_without_the_subprotocol_is_refused_with_400_and_one_line(
        lab, offered):
    with pytest.raises(InvalidStatus) as refused:
        await ws_connect(lab.url, subprotocols=list(offered) or None)  # type: ignore[arg-type]
    response = refused.value.response
    assert response.status_code == 400
    reason = response.body.decode().strip()
    assert reason and "\n" not in reason and SUBPROTOCOL in reason


async def test_the_subprotocol_is_chosen_among_several_offered(lab):
    peer = await lab.open(subprotocols=("castell.v0", SUBPROTOCOL))
    assert (await peer.call("hello", name="Anna"))["protocol"] == 1


async def test_a_frame_at_the_limit_is_read_and_one_past_it_closes_with_1009(lab):
    peer = await lab.open("Anna")
    # a map of exactly 65536 bytes, within every other limit: an unknown key is blamed
    message: dict[str, Any] = {"type": "list_rooms", "id": 7}
    for i in range(16):
        message[f"pad{i:02d}"] = "x" * 4000
    fill = 0
    while (missing := FRAME_LIMIT - len(msgpack.packb({**message, "pad16": "x" * fill}))):
        fill += missing
    message["pad16"] = "x" * fill
    frame = msgpack.packb(message)
    assert len(frame) == FRAME_LIMIT
    peer.sent.append(7)
    await peer.ws.send(frame)
    reply = await peer.take(lambda m: m.get("re") == 7)
    assert reply["code"] == "invalid_field" and reply["field"].startswith("pad")
    await peer.ws.send(frame + b"\xc0")  # one byte more
    code, _ = await peer.closed_with()
    assert code == 1009


@pytest.mark.parametrize(("frame", "why"), [
    ("{\"type\": \"hello\", \"id\": 1, \"name\": \"Anna\"}", "a text frame"),
    (msgpack.packb([1, 2, 3]), "an array"),
    (msgpack.packb(42), "an integer"),
    (msgpack.packb(None), "nil"),
    (b"\xc1", "not MessagePack at all"),
    (b"", "an empty frame"),
    (msgpack.packb({"type": "hello", "id": 1, "name": "Anna"}) + b"\x01", "trailing bytes"),
    (msgpack.packb({"id": 4, "name": "Anna"}), "a map without type"),
    (msgpack.packb({"type": 5, "id": 4}), "a type that is no string"),
    (msgpack.packb({"type": None, "id": 4}), "a nil type"),
    (msgpack.packb({"type": b"hello", "id": 4, "name": "Anna"}, use_bin_type=True),
     "a binary type"),
    (msgpack.packb({1: "x", "type": "hello", "id": 4, "name": "Anna"}), "an integer key"),
    (b"\x83\xa4type\xa5hello\xa2id\x04\xa4name\xa2\xff\xfe", "a string not UTF-8"),
    (b"\x83\xa4type\xa5hello\xa2id\x04\xa4name\xa3\xed\xa0\x80", "a lone surrogate"),
])
async def test_a_frame_that_is_no_map_with_a_string_type_is_bad_message_and_the_connection_lives(
        lab, frame, why):
    peer = await lab.open()
    await peer.ws.send(frame)
    reply = await peer.take(lambda m: m["type"] == "error")
    assert reply["code"] == "bad_message" and reply["re"] is None, why
    assert reply["rule"] is None
    # `field` (an addition) blames `type` in a map whose type is missing or no string
    assert reply.get("field") == ("type" if "type" in why else None), why
    assert (await peer.call("hello", name="Anna"))["type"] == "welcome"  # still open


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(("within", "beyond"), [
    ({"name": "x" * 4096}, {"name": "x" * 4097}),  # a string: 4096 bytes
    ({"name": "é" * 2048}, {"name": "é" * 2049}),  # ... bytes, not characters
    ({"name": b"x" * 4096}, {"name": b"x" * 4097}),  # a binary value
    ({"name": [0] * 1024}, {"name": [0] * 1025}),  # an array: 1024 items
    ({"name": {f"k{i}": 0 for i in range(64)}},
     {"name": {f"k{i}": 0 for i in range(65)}}),  # a map: 64 pairs
    ({f"k{i}": 0 for i in range(62)}, {f"k{i}": 0 for i in range(63)}),  # the frame's own
    ({"name": _nested(9)}, {"name": _nested(10)}),  # nesting: 10 levels, the frame's is 1
    ({"name": {"a": "x"}}, {"name": {1: "x"}}),  # map keys: strings only
    ({"name": 1}, {"name": msgpack.ExtType(1, b"x")}),  # no extension types
])
async def test_frame_limits_within_are_read_beyond_are_bad_message(lab, within, beyond):
    peer = await lab.open()
    reply = await peer.refused("hello", "invalid_field", **within)  # read: a field is blamed
    assert reply["field"]
    await peer.send({"type": "hello", "id": 2**20, **beyond})
    reply = await peer.take(lambda m: m["type"] == "error" and m["re"] is None)
    assert reply["code"] == "bad_message"
    assert (await peer.call("hello", name="Anna"))["type"] == "welcome"


def test_by_default_the_server_serves_127_0_0_1_on_8765_with_64_kib_frames():
    config = config_from_args(build_parser().parse_args([]))
    assert (config.host, config.port, config.max_frame) == ("127.0.0.1", 8765, FRAME_LIMIT)
    lan = config_from_args(build_parser().parse_args(["--host", "0.0.0.0"]))
    assert lan.host == "0.0.0.0"


async def test_pings_are_answered(lab):
    peer = await lab.open("Anna")
    pong = await peer.ws.ping()
    async with asyncio.timeout(WAIT):
        await pong


# -- envelope ------------------------------------------------------------------------------------


@pytest.mark.parametrize("msg_id", [0, 1, ID_MAX])
async def test_every_id_in_range_is_answered_with_its_re(lab, msg_id):
    peer = await lab.open()
    await peer.send({"type": "hello", "id": msg_id, "name": "Anna"})
    reply = await peer.take(lambda m: m["type"] in REPLIES)
    assert reply["type"] == "welcome" and reply["re"] == msg_id
    await peer.send({"type": "join_room", "id": msg_id, "room": "nowhere"})
    error = await peer.take(lambda m: m["type"] in REPLIES)
    assert error["code"] == "room_not_found" and error["re"] == msg_id  # errors too


@pytest.mark.parametrize("msg_id", [-1, ID_MAX + 1, 2**64 - 1, True, 1.0, "1", None, [1]])
async def test_an_id_that_cannot_be_read_is_answered_with_re_nil(lab, msg_id):
    peer = await lab.open()
    await peer.send({"type": "hello", "id": msg_id, "name": "Anna"})
    reply = await peer.take(lambda m: m["type"] in REPLIES)
    assert reply["type"] == "error" and reply["re"] is None
    assert reply["code"] == "invalid_field" and reply["field"] == "id"


async def test_a_request_without_an_id_is_invalid_field_with_re_nil(lab):
    peer = await lab.open()
    await peer.send({"type": "hello", "name": "Anna"})
    reply = await peer.take(lambda m: m["type"] in REPLIES)
    assert reply["code"] == "invalid_field" and reply["re"] is None and reply["field"] == "id"


@pytest.mark.parametrize(("type_", "fields", "field"), [
    ("hello", {"name": "Anna", "colour": "red"}, "colour"),
    ("list_rooms", {"page": 2}, "page"),
    ("create_room", {"name": "R", "seats": 2, "re": 1}, "re"),
    ("join_room", {"room": "r", "as_": "player"}, "as_"),
    ("chat", {"text": "hi", "room": "r"}, "room"),
])
async def test_unknown_keys_are_invalid_field_naming_the_key(lab, type_, fields, field):
    peer = await lab.open("Anna" if type_ != "hello" else None)
    reply = await peer.refused(type_, "invalid_field", **fields)
    assert reply["field"] == field and reply["rule"] is None


async def test_unknown_types_are_unknown_type_with_their_re(lab):
    peer = await lab.open("Anna")
    for type_ in ("shout", "welcome", "state", "ok", ""):
        reply = await peer.refused(type_, "unknown_type")
        assert reply["field"] == "type"


async def test_hello_must_come_first(lab):
    peer = await lab.open()
    for type_, fields in [("list_rooms", {}), ("create_room", {"name": "R", "seats": 2}),
                          ("join_room", {"room": "r"}), ("leave_room", {}), ("add_bot", {}),
                          ("start_game", {}), ("chat", {"text": "hi"}),
                          ("action", {"kind": "end_turn"})]:
        reply = await peer.refused(type_, "hello_first", **fields)
        assert reply["rule"] is None and "field" not in reply
    # a malformed request is refused for its form first, wherever it comes
    assert (await peer.refused("chat", "invalid_field"))["field"] == "text"
    await peer.refused("shout", "unknown_type")
    welcome = await peer.call("hello", name="Anna")
    assert set(welcome) == {"type", "re", "player", "server", "protocol", "account", "name",
                            "server_id"}
    assert welcome["account"] is False and welcome["name"] == "Anna"  # a guest
    assert (await peer.call("list_rooms"))["type"] == "rooms"


@pytest.mark.parametrize("name", ["A", "x" * 24, "🏰" * 24, "Núria 🏰", "d'Urgell-Puig",
                                  "Сергій", "王 小明"])
async def test_hello_takes_any_printable_name_of_1_to_24(lab, name):
    peer = await lab.open()
    await peer.call("hello", name=name)
    made = await peer.call("create_room", name="R", seats=2)
    push = await peer.state()
    assert push["room"] == made["room"] and push["view"]["players"][0]["name"] == name


@pytest.mark.parametrize("name", ["", "x" * 25, "🏰" * 25, "tab\there", "del\x7f", "new\nline",
                                  "esc\x1b[2J", "csi\x9bm", "bidi\u202etxt", "line\u2028sep",
                                  7, None])
async def test_hello_refuses_other_names(lab, name):
    peer = await lab.open()
    reply = await peer.refused("hello", "invalid_field", name=name)
    assert reply["field"] == "name"


async def test_a_later_hello_renames_the_connection_but_not_inside_a_room(lab):
    peer = await lab.open("Anna")
    await peer.call("hello", name="Anna Maria")
    made = await peer.call("create_room", name="R", seats=2)
    assert (await peer.after(made))["view"]["players"][0]["name"] == "Anna Maria"
    await peer.refused("hello", "already_in_room", name="Anna")


async def test_each_player_gets_a_distinct_player_id(lab):
    a, b = await lab.open(), await lab.open()
    wa = await a.call("hello", name="Anna")
    wb = await b.call("hello", name="Anna")
    assert wa["player"] != wb["player"] and wa["server"] == wb["server"]


# -- rooms: create, list, join -------------------------------------------------------------------


async def test_create_room_defaults_and_its_joined_then_the_waiting_view(lab):
    anna = await lab.open("Anna")
    made = await anna.call("create_room", name="Friday night", seats=3)
    assert made["seat"] == 0 and made["code"] is None and is_str(made["token"])
    assert len(made["token"]) >= 22  # at least 128 random bits, in whatever alphabet
    push = await anna.state()
    assert push["events"] == [] and push["room"] == made["room"]
    view = push["view"]
    assert (view["name"], view["seats"], view["variant"], view["turn_seconds"],
            view["status"]) == ("Friday night", 3, "normal", None, "waiting")
    assert [(p["seat"], p["name"], p["bot"], p["connected"]) for p in view["players"]] == [
        (0, "Anna", False, True)]
    # not private by default: listed, with every summary key
    biel = await lab.open("Biel")
    rooms = (await biel.call("list_rooms"))["rooms"]
    assert rooms == [{"room": made["room"], "name": "Friday night", "seats": 3, "taken": 1,
                      "variant": "normal", "status": "waiting", "turn_seconds": None}]


async def test_create_room_takes_every_setting(lab):
    anna = await lab.open("Anna")
    made = await anna.call("create_room", name="R" * 40, seats=4, variant="advanced",
                           turn_seconds=3600, private=False)
    view = (await anna.state())["view"]
    assert (view["room"], view["seats"], view["variant"], view["turn_seconds"]) == (
        made["room"], 4, "advanced", 3600)
    biel = await lab.open("Biel")
    made = await biel.call("create_room", name="R", seats=2, turn_seconds=10)
    assert (await biel.after(made))["view"]["turn_seconds"] == 10


@pytest.mark.parametrize(("fields", "field"), [
    ({"seats": 2}, "name"),
    ({"name": "R"}, "seats"),
    ({"name": "", "seats": 2}, "name"),
    ({"name": "R" * 41, "seats": 2}, "name"),
    ({"name": "R\x07", "seats": 2}, "name"),
    ({"name": "R", "seats": 1}, "seats"),
    ({"name": "R", "seats": 5}, "seats"),
    ({"name": "R", "seats": True}, "seats"),
    ({"name": "R", "seats": 2.0}, "seats"),
    ({"name": "R", "seats": 2, "variant": "expert"}, "variant"),
    ({"name": "R", "seats": 2, "turn_seconds": 9}, "turn_seconds"),
    ({"name": "R", "seats": 2, "turn_seconds": 7 * 24 * 3600 + 1}, "turn_seconds"),
    ({"name": "R", "seats": 2, "turn_seconds": "60"}, "turn_seconds"),
    ({"name": "R", "seats": 2, "private": 1}, "private"),
    ({"name": "R", "seats": 2, "private": None}, "private"),
])
async def test_create_room_refuses_fields_out_of_their_limits(lab, fields, field):
    anna = await lab.open("Anna")
    reply = await anna.refused("create_room", "invalid_field", **fields)
    assert reply["field"] == field


async def test_explicit_defaults_equal_missing_ones(lab):
    anna = await lab.open("Anna")
    await anna.call("create_room", name="R", seats=2, variant="normal", turn_seconds=None,
                    private=False)
    biel = await lab.open("Biel")
    room = (await biel.call("list_rooms"))["rooms"][0]
    joined = await biel.call("join_room", room=room["room"], **{"as": "player"}, token=None)
    assert joined["seat"] == 1 and is_str(joined["token"])


async def test_the_room_list_shows_waiting_rooms_first_newest_first_and_hides_private_ones(lab):
    anna, biel, carme, dani = [await lab.open(n) for n in ("Anna", "Biel", "Carme", "Dani")]
    old = (await anna.call("create_room", name="old", seats=2))["room"]
    await anna.call("add_bot", level="random")
    await anna.call("start_game")
    older = (await biel.call("create_room", name="older", seats=2))["room"]
    newer = (await carme.call("create_room", name="newer", seats=3))["room"]
    secret = await dani.call("create_room", name="secret", seats=2, private=True)
    assert is_str(secret["code"])
    rooms = (await (await lab.open("Eli")).call("list_rooms"))["rooms"]
    assert [r["room"] for r in rooms] == [newer, older, old]
    assert [r["status"] for r in rooms] == ["waiting", "waiting", "playing"]
    assert rooms[2]["taken"] == 2
    assert secret["room"] not in {r["room"] for r in rooms}


async def test_a_private_room_is_joined_by_its_code_and_only_its_creator_gets_the_code(lab):
    anna = await lab.open("Anna")
    made = await anna.call("create_room", name="secret", seats=3, private=True)
    code = made["code"]
    assert is_str(code) and code != made["room"]
    biel = await lab.open("Biel")
    await biel.refused("join_room", "room_not_found", room=made["room"])  # its id: not enough
    joined = await biel.call("join_room", room=code)
    assert joined["room"] == made["room"] and joined["seat"] == 1 and joined["code"] is None
    watcher = await lab.open("Watcher")
    seen = await watcher.call("join_room", room=code, **{"as": "spectator"})
    assert seen["code"] is None and seen["seat"] is None and seen["token"] is None
    # after the start, the creator coming back with the token hears the code again
    await anna.call("add_bot", level="random")
    await anna.call("start_game")
    await anna.ws.close()
    anna.closed = True
    back = await lab.open("Anna")
    again = await back.call("join_room", room=made["room"], token=made["token"])
    assert again["code"] == code and again["seat"] == 0


async def test_join_room_gives_the_joiner_the_view_and_the_others_a_joined_event(lab):
    anna = await lab.open("Anna")
    made = await anna.call("create_room", name="R", seats=3)
    first = await anna.state()
    biel = await lab.open("Biel")
    joined = await biel.call("join_room", room=made["room"])
    assert set(joined) == {"type", "re", "room", "seat", "token", "code"}
    assert (joined["room"], joined["seat"], joined["code"]) == (made["room"], 1, None)
    assert joined["token"] != made["token"]
    pushed = await anna.state()
    mine = await biel.after(joined)
    assert pushed["events"] == [{"kind": "joined", "seat": 1, "name": "Biel"}]
    assert pushed["version"] > first["version"]
    # the joiner: right after `joined`, the current view and no events
    assert mine["events"] == [] and mine["version"] == pushed["version"]
    assert mine["view"] == pushed["view"]
    assert [p["name"] for p in mine["view"]["players"]] == ["Anna", "Biel"]


async def test_a_spectator_gets_the_view_and_sits_nowhere(lab):
    room, (anna, _biel), _ = await a_room(lab, 2)
    before = await anna.until(lambda s: len(s["view"]["players"]) == 2)
    watcher = await lab.open("Watcher")
    seen = await watcher.call("join_room", room=room, **{"as": "spectator"})
    assert (seen["seat"], seen["token"], seen["code"]) == (None, None, None)
    push = await watcher.after(seen)
    assert push["events"] == []
    view = push["view"]
    assert [p["name"] for p in view["players"]] == ["Anna", "Biel"]
    assert view["spectators"] == ["Watcher"]
    # a spectator coming or going changes nothing of the room: the players get the view
    # again, at the same version, with no events, so that they see who watches
    assert push["version"] == before["version"]
    shown = await anna.until(lambda s: s["view"]["spectators"] == ["Watcher"])
    assert shown["version"] == before["version"] and shown["events"] == []
    await watcher.call("leave_room")
    gone = await anna.until(lambda s: s["view"]["spectators"] == [])
    assert gone["version"] == before["version"] and gone["events"] == []
    await watcher.refused("chat", "not_in_room", text="hello?")


async def test_a_name_is_one_person_s_in_a_room_in_any_case(lab):
    anna = await lab.open("Anna")
    room = (await anna.call("create_room", name="Friday night", seats=3))["room"]
    biel = await lab.open("Biel")
    await biel.call("join_room", room=room)
    # a second Anna can neither take a seat nor watch under the same name, in any case
    other = await lab.open("ANNA")
    refused = await other.refused("join_room", "name_taken", room=room)
    assert "ANNA" in refused["message"]
    await other.refused("join_room", "name_taken", room=room, **{"as": "spectator"})
    # nor under a spectator's name
    carme = await lab.open("Carme")
    await carme.call("join_room", room=room, **{"as": "spectator"})
    late = await lab.open("carme")
    await late.refused("join_room", "name_taken", room=room)
    await late.refused("join_room", "name_taken", room=room, **{"as": "spectator"})
    # the refusals changed nothing: the third seat is still free for someone else
    dani = await lab.open("Dani")
    assert (await dani.call("join_room", room=room))["seat"] == 2
    seen = await anna.until(lambda s: len(s["view"]["players"]) == 3)
    assert [p["name"] for p in seen["view"]["players"]] == ["Anna", "Biel", "Dani"]
    assert seen["view"]["spectators"] == ["Carme"]
    # the server's own name (its notices are shown under it) is nobody's, in any case
    spoof = await lab.open("Server")
    await spoof.refused("create_room", "name_taken", name="Notices", seats=2)
    await spoof.refused("join_room", "name_taken", room=room, **{"as": "spectator"})
    listed = await spoof.call("list_rooms")
    assert [r["name"] for r in listed["rooms"]] == ["Friday night"]  # no room was made


@pytest.mark.parametrize(("fields", "field"), [
    ({}, "room"),
    ({"room": ""}, "room"),
    ({"room": "r" * 65}, "room"),
    ({"room": "r", "as": "player2"}, "as"),
    ({"room": "r", "token": ""}, "token"),
    ({"room": "r", "token": "t" * 129}, "token"),
    ({"room": "r", "token": 5}, "token"),
])
async def test_join_room_refuses_fields_out_of_their_limits(lab, fields, field):
    anna = await lab.open("Anna")
    reply = await anna.refused("join_room", "invalid_field", **fields)
    assert reply["field"] == field


async def test_room_full_and_room_not_found_and_already_in_room(lab):
    room, (anna, biel), _ = await a_room(lab, 2)
    carme = await lab.open("Carme")
    await carme.refused("join_room", "room_full", room=room)
    await carme.refused("join_room", "room_not_found", room="no-such-room")
    await anna.refused("create_room", "already_in_room", name="Another", seats=2)
    await anna.refused("join_room", "already_in_room", room=room)
    await biel.refused("join_room", "already_in_room", room=room, **{"as": "spectator"})
    # a spectator may still come into a full room
    await carme.call("join_room", room=room, **{"as": "spectator"})


# -- leave, bots, start --------------------------------------------------------------------------


async def test_leave_before_the_start_frees_the_seat_for_the_next_comer(lab):
    room, (anna, biel, _carme), _ = await a_room(lab, 3)
    ok = await biel.call("leave_room")
    assert set(ok) == {"type", "re"}
    push = await anna.with_event("left")
    assert push["events"] == [{"kind": "left", "seat": 1, "name": "Biel"}]
    assert [p["seat"] for p in push["view"]["players"]] == [0, 2]  # a seat number missing
    dani = await lab.open("Dani")
    assert (await dani.call("join_room", room=room))["seat"] == 1  # the lowest free seat
    await biel.refused("leave_room", "not_in_room")


async def test_a_dropped_connection_before_the_start_frees_its_seat(lab):
    _room, (anna, biel), _ = await a_room(lab, 2)
    await biel.ws.close()
    biel.closed = True
    push = await anna.with_event("left")
    assert push["events"] == [{"kind": "left", "seat": 1, "name": "Biel"}]
    assert len(push["view"]["players"]) == 1


async def test_add_bot_fills_the_lowest_free_seat(lab):
    _room, (anna, biel, carme, dani), _ = await a_room(lab, 4)
    await biel.call("leave_room")
    await dani.call("leave_room")
    ok = await carme.call("add_bot", level="random")  # any player may seat a bot
    assert set(ok) == {"type", "re"}
    await anna.with_event("left")
    await anna.with_event("left")
    push = await anna.with_event("joined")
    event = push["events"][0]
    assert event["seat"] == 1 and is_str(event["name"])
    bot = push["view"]["players"][1]
    assert bot["bot"] is True and bot["connected"] is True and bot["name"] == event["name"]
    await anna.call("add_bot")  # the level defaults to greedy
    push = await anna.with_event("joined")
    assert push["events"][0]["seat"] == 3
    await anna.refused("add_bot", "room_full")
    await anna.refused("add_bot", "invalid_field", level="smart")


async def test_start_game_is_for_the_creator_once_every_seat_is_taken(lab):
    anna = await lab.open("Anna")
    made = await anna.call("create_room", name="R", seats=3)
    await anna.refused("start_game", "seats_not_full")
    biel = await lab.open("Biel")
    await biel.call("join_room", room=made["room"])
    await biel.call("add_bot", level="random")
    await biel.refused("start_game", "not_creator")
    watcher = await lab.open("Watcher")
    await watcher.call("join_room", room=made["room"], **{"as": "spectator"})
    await watcher.refused("start_game", "not_a_player")
    await watcher.refused("add_bot", "not_a_player")
    ok = await anna.call("start_game")
    assert set(ok) == {"type", "re"}
    await anna.refused("start_game", "already_started")
    await anna.refused("add_bot", "already_started")
    await (await lab.open("Carme")).refused("join_room", "already_started", room=made["room"])


async def test_room_requests_outside_a_room_are_not_in_room(lab):
    anna = await lab.open("Anna")
    await anna.refused("leave_room", "not_in_room")
    await anna.refused("add_bot", "not_in_room")
    await anna.refused("start_game", "not_in_room")
    await anna.refused("chat", "not_in_room", text="hello?")
    await anna.refused("action", "not_in_room", kind="end_turn")


async def test_the_start_push_and_the_playing_view(lab):
    _room, (anna, biel), _ = await a_room(lab, 2)
    before = (await anna.state())["version"]
    await anna.call("start_game")
    pushes = [await p.state(lambda s: s["view"]["status"] == "playing") for p in (anna, biel)]
    assert pushes[0]["version"] == pushes[1]["version"] > before
    assert pushes[0]["view"] == pushes[1]["view"]
    view = pushes[0]["view"]
    first = view["first"]
    assert pushes[0]["events"] == [{"kind": "started"}, {"kind": "round", "round": 1,
                                   "first": first}, {"kind": "turn", "seat": first}]
    assert view["round"] == 1 and view["turn"] == first and view["done"] == []
    assert view["deadline"] is None and 0 < view["bag"] < 150
    assert all(p["region"] is None and p["tokens"] == 7 and p["team"] for p in view["players"])


# -- chat ----------------------------------------------------------------------------------------


async def test_chat_reaches_everyone_in_the_room_with_seat_name_and_text(lab):
    room, (anna, biel), _ = await a_room(lab, 2)
    watcher = await lab.open("Watcher")
    await watcher.call("join_room", room=room, **{"as": "spectator"})
    outsider = await lab.open("Outsider")
    ok = await anna.call("chat", text="bona sort! 🍀")
    assert set(ok) == {"type", "re"}
    for peer in (anna, biel, watcher):
        push = await peer.take(lambda m: m["type"] == "chat")
        assert push == {"type": "chat", "room": room, "seat": 0, "name": "Anna",
                        "text": "bona sort! 🍀"}
    await watcher.call("chat", text="hola")
    for peer in (anna, biel, watcher):
        push = await peer.take(lambda m: m["type"] == "chat")
        assert push["seat"] is None and push["name"] == "Watcher"
    assert [m for m in await outsider.quiet() if m["type"] == "chat"] == []
    for text in ("", "x" * 201, "a\nb", "\x1b[31mred"):
        assert (await anna.refused("chat", "invalid_field", text=text))["field"] == "text"
    await anna.call("chat", text="x" * 200)


# -- a whole game --------------------------------------------------------------------------------


async def my_turn(peer: Peer, seat: int, since: int = 0) -> dict[str, Any]:
    """The view once it is ``seat``'s turn (or the game is over), at ``since`` or later."""
    push = await peer.until(lambda s: s["version"] >= since and (
        s["view"]["turn"] == seat or s["view"]["status"] == "finished"), timeout=10)
    return push["view"]


async def act(peer: Peer, kind: str, **fields: Any) -> int:
    """An action that must be accepted; the version in its `ok`."""
    ok = await peer.call("action", kind=kind, **fields)
    assert set(ok) == {"type", "re", "version"}
    return ok["version"]


async def test_with_compression_on_each_member_gets_the_same_pushes_framed_its_own_way():
    # A push is framed once for the members that take it as it is; a connection that
    # negotiated compression frames its own (server.runtime.connection.write_frame). Both
    # kinds of member see the same versions and views, and the Lab checks every frame.
    async with Lab(compression=True) as lab:
        anna = await lab.open("Anna")  # no compression: the shared frame
        made = await anna.call("create_room", name="R", seats=2)
        biel = await lab.open("Biel", compression="deflate")
        assert biel.ws.protocol.extensions  # deflate was agreed
        await biel.call("join_room", room=made["room"])
        watcher = await lab.open("Watcher", compression="deflate")
        await watcher.call("join_room", room=made["room"], **{"as": "spectator"})
        await anna.call("start_game")
        view = (await anna.state(lambda s: s["view"]["status"] == "playing"))["view"]
        actor = anna if view["turn"] == 0 else biel
        version = await act(actor, "end_turn")
        seen = [(await peer.state(lambda s: s["version"] == version))["view"]
                for peer in (anna, biel, watcher)]
        assert seen[0] == seen[1] == seen[2] and seen[0]["turn"] != view["turn"]


async def test_a_whole_game_against_a_bot_with_a_spectator(lab):
    anna = await lab.open("Anna")
    made = await anna.call("create_room", name="R", seats=2)
    room = made["room"]
    await anna.call("add_bot")
    watcher = await lab.open("Watcher")
    await watcher.call("join_room", room=room, **{"as": "spectator"})
    await watcher.refused("action", "not_a_player", kind="end_turn")
    await anna.refused("action", "game_not_started", kind="end_turn")
    await anna.call("start_game")
    view = (await anna.state(lambda s: s["view"]["status"] == "playing"))["view"]
    if view["turn"] == 1:
        await anna.refused("action", "not_your_turn", kind="end_turn")
    view = await my_turn(anna, 0)
    assert view["round"] == 1 and view["players"][0]["region"] is None

    # §4 recruit needs the pawn on the board; the rules refuse, naming the rule
    error = await anna.refused("action", "illegal_action", kind="recruit", sizes=[1])
    assert error["rule"] == "pawn_not_placed"
    # the first move goes anywhere: the region with the biggest casteller
    region = max(view["regions"], key=lambda r: max(view["regions"][r]["castellers"] or [0]))
    version = await act(anna, "move", region=region)
    push = await anna.state(lambda s: s["version"] == version)
    assert push["events"] == [{"kind": "action", "seat": 0,
                               "action": {"kind": "move", "region": region}}]
    assert push["view"]["done"] == ["move"] and push["view"]["players"][0]["region"] == region
    assert 0 in push["view"]["regions"][region]["pawns"]
    watched = await watcher.state(lambda s: s["version"] == version)
    assert watched["view"] == push["view"] and watched["events"] == push["events"]
    error = await anna.refused("action", "illegal_action", kind="move", region=region)
    assert error["rule"] in ("already_moved", "already_there")
    assert is_str(error["message"]) and error["message"]
    # recruit the biggest there
    biggest = push["view"]["regions"][region]["castellers"][0]
    team = push["view"]["players"][0]["team"]
    version = await act(anna, "recruit", sizes=[biggest])
    push = await anna.state(lambda s: s["version"] == version)
    assert push["events"][0] == {"kind": "action", "seat": 0,
                                 "action": {"kind": "recruit", "sizes": [biggest]}}
    assert push["view"]["players"][0]["team"] == sorted([*team, biggest], reverse=True)
    assert push["view"]["done"] == ["move", "recruit"]
    # build a one-level tower of the biggest, then take it down
    version = await act(anna, "build", levels=[[biggest]])
    push = await anna.state(lambda s: s["version"] == version)
    assert push["view"]["players"][0]["tower"] == [[biggest]]
    version = await act(anna, "dismantle")
    push = await anna.state(lambda s: s["version"] == version)
    assert push["view"]["players"][0]["tower"] == []
    # train with the `all` segment when it shows a skill
    tile = push["view"]["wheel"]["all"]
    if tile != "special":
        version = await act(anna, "train", choice="all")
        push = await anna.state(lambda s: s["version"] == version)
        assert push["events"] == [
            {"kind": "action", "seat": 0, "action": {"kind": "train", "choice": "all"}},
            {"kind": "trained", "seat": 0, "tile": tile}]
        assert push["view"]["players"][0]["skills"][tile] == 1
    version = await act(anna, "end_turn")
    push = await anna.state(lambda s: s["version"] == version)
    assert push["events"][0] == {"kind": "action", "seat": 0, "action": {"kind": "end_turn"}}
    assert push["events"][1]["kind"] == "turn" or push["events"][1]["kind"] == "round"

    # from now on Anna ends each of her turns; the bot plays its own
    ended = [version]
    while True:
        view = await my_turn(anna, 0, version)
        if view["status"] == "finished":
            break
        version = await act(anna, "end_turn")
        ended.append(version)
    final = anna.states()[-1]
    assert final["view"]["status"] == "finished"
    over = final["events"][-1]
    assert over["kind"] == "game_over"
    assert over["scores"] == final["view"]["scores"]
    assert over["winners"] == final["view"]["winners"]
    for kind in ("end_turn", "move"):
        fields = {"region": "bcn"} if kind == "move" else {}
        await anna.refused("action", "game_over", kind=kind, **fields)
    await watcher.refused("action", "not_a_player", kind="end_turn")
    listed = (await watcher.call("list_rooms"))["rooms"]
    assert [r["status"] for r in listed if r["room"] == room] == ["finished"]

    # what everyone saw, in order: every event of the game, versions growing
    for peer in (anna, watcher):
        pushes = [s for s in peer.states() if s["room"] == room]
        assert pushes[-1]["view"] == final["view"]
    events = [e for s in anna.states() for e in s["events"]]
    kinds = [e["kind"] for e in events]
    assert kinds.count("started") == 1 and kinds.count("game_over") == 1
    rounds = [e for e in events if e["kind"] == "round"]
    assert [e["round"] for e in rounds] == list(range(1, 11))
    festivals = [e for e in events if e["kind"] == "festival"]
    assert [f["round"] for f in festivals] == list(range(3, 11))  # one a round with 2 seats
    # what the festivals handed out is what the players took, region by region
    for seat, player in enumerate(final["view"]["players"]):
        won = [(r["prize"], f["region"]) for f in festivals for r in f["results"]
               if r["seat"] == seat and r["prize"] is not None]
        assert sorted(won) == sorted((t["prize"], t["region"]) for t in player["taken"]["prizes"])
        sizes = [(f["size"], f["region"]) for f in festivals for r in f["results"]
                 if r["seat"] == seat and r["size_token"]]
        assert sorted(sizes) == sorted((t["size"], t["region"]) for t in player["taken"]["sizes"])
    assert [(f["round"], f["region"], f["town"], f["size"]) for f in festivals] == [
        (f["round"], f["region"], f["town"], f["size"]) for f in final["view"]["festivals"]]
    # §8: a refill after rounds 2, 4, 6, 8, before the next `round` event
    refills = [i for i, k in enumerate(kinds) if k == "refill"]
    assert len(refills) == 4
    for i in refills:
        assert kinds[i + 1] == "round" and events[i + 1]["round"] in (3, 5, 7, 9)
    # every action event names its seat; the bot acted too
    seats = {e["seat"] for e in events if e["kind"] == "action"}
    assert seats == {0, 1}
    # each of Anna's end_turn oks named the version of the push that carried it
    by_version = {s["version"]: s["events"] for s in anna.states()}
    for v in ended:
        assert by_version[v][0] == {"kind": "action", "seat": 0, "action": {"kind": "end_turn"}}
    turns = [e["seat"] for e in events if e["kind"] == "turn"]
    assert len(turns) == 20  # 2 seats × 10 rounds, each turn announced as it begins


@pytest.mark.parametrize(("seats", "variant"), [(3, "advanced"), (4, "normal")])
async def test_the_view_of_bigger_and_advanced_games(lab, seats, variant):
    anna = await lab.open("Anna")
    made = await anna.call("create_room", name="R", seats=seats, variant=variant)
    for _ in range(seats - 1):
        await anna.call("add_bot", level="random")
    await anna.call("start_game")
    view = (await anna.state(lambda s: s["view"]["status"] == "playing"))["view"]
    assert view["room"] == made["room"] and view["variant"] == variant
    assert [p["bot"] for p in view["players"]] == [False] + [True] * (seats - 1)
    assert ("none" in view["wheel"]) == (variant == "advanced")
    view = await my_turn(anna, 0)
    if variant == "advanced":  # §4: no `all` segment to train with
        await act(anna, "move", region="bcn")
        error = await anna.refused("action", "illegal_action", kind="train", choice="all")
        assert error["rule"] == "all_not_allowed"


async def test_a_request_s_keys_may_come_in_any_order(lab):
    peer = await lab.open()
    peer.sent.append(3)
    await peer.send({"name": "Anna", "id": 3, "type": "hello"})
    assert (await peer.take(lambda m: m.get("re") == 3))["type"] == "welcome"


async def test_the_ok_of_an_action_and_its_push_carry_the_same_version(lab):
    _room, (anna, biel), _ = await a_room(lab, 2)
    await anna.call("start_game")
    view = (await anna.state(lambda s: s["view"]["status"] == "playing"))["view"]
    seat = view["turn"]
    actor, waiter = (anna, biel)[seat], (anna, biel)[1 - seat]
    await waiter.refused("action", "not_your_turn", kind="end_turn")
    version = await act(actor, "move", region="bcn")
    for peer in (anna, biel):
        push = await peer.state(lambda s: s["version"] == version)
        assert push["events"] == [{"kind": "action", "seat": seat,
                                   "action": {"kind": "move", "region": "bcn"}}]
    error = await actor.refused("action", "illegal_action", kind="move", region="gir")
    assert error["rule"] == "already_moved"
    version = await act(actor, "end_turn")
    push = await waiter.state(lambda s: s["version"] == version)
    assert push["events"] == [{"kind": "action", "seat": seat, "action": {"kind": "end_turn"}},
                              {"kind": "turn", "seat": 1 - seat}]
    assert push["view"]["turn"] == 1 - seat and push["view"]["done"] == []


@pytest.mark.parametrize(("fields", "field"), [
    ({}, "kind"),
    ({"kind": "jump"}, "kind"),
    ({"kind": "move"}, "region"),
    ({"kind": "move", "region": "paris"}, "region"),
    ({"kind": "move", "region": "bcn", "size": 3}, "size"),
    ({"kind": "recruit", "sizes": []}, "sizes"),
    ({"kind": "recruit", "sizes": [1, 2, 3]}, "sizes"),
    ({"kind": "recruit", "sizes": [11]}, "sizes[0]"),
    ({"kind": "recruit", "sizes": 3}, "sizes"),
    ({"kind": "train", "choice": "mine"}, "choice"),
    ({"kind": "train", "choice": "all", "size": 3}, "size"),
    ({"kind": "special", "effect": "fly"}, "effect"),
    ({"kind": "special", "effect": "move"}, "region"),
    ({"kind": "special", "effect": "recruit", "size": 3, "tile": "lp01"}, "tile"),
    ({"kind": "special", "effect": "perform", "tile": "lp33"}, "tile"),
    ({"kind": "build", "levels": []}, "levels"),
    ({"kind": "build", "levels": [[]]}, "levels[0]"),
    ({"kind": "build", "levels": [[7], [0]]}, "levels[1][0]"),
    ({"kind": "build", "levels": [[1]] * 14}, "levels"),
    ({"kind": "build", "levels": [[1] * 31]}, "levels[0]"),
    ({"kind": "dismantle", "levels": [[1]]}, "levels"),
    ({"kind": "end_turn", "seat": 0}, "seat"),
])
async def test_malformed_actions_are_invalid_field_naming_the_field(lab, fields, field):
    _room, (anna, _biel), _ = await a_room(lab, 2)
    await anna.call("start_game")
    reply = await anna.refused("action", "invalid_field", **fields)
    assert reply["field"] == field


# -- seats after the start: leaving, dropping, coming back -------------------------------------


async def test_after_the_start_a_seat_stays_with_its_token(lab):
    room, (anna, biel), tokens = await a_room(lab, 2)
    await anna.call("start_game")
    await anna.state(lambda s: s["view"]["status"] == "playing")
    # leave_room: the seat stays Biel's, shown not connected
    await biel.call("leave_room")
    push = await anna.with_event("left")
    assert push["events"] == [{"kind": "left", "seat": 1, "name": "Biel"}]
    assert push["view"]["players"][1]["connected"] is False
    assert push["view"]["players"][1]["name"] == "Biel"
    # back with the token (on the same connection); `as` is then ignored
    joined = await biel.call("join_room", room=room, token=tokens[1], **{"as": "spectator"})
    assert joined["seat"] == 1 and joined["room"] == room and joined["code"] is None
    mine = await biel.after(joined)
    push = await anna.with_event("connected")
    assert push["events"] == [{"kind": "connected", "seat": 1, "name": "Biel"}]
    assert push["view"]["players"][1]["connected"] is True
    assert mine["version"] == push["version"] and mine["view"] == push["view"]
    # a dropped connection: `disconnected`, and back on a new connection
    await biel.ws.close()
    biel.closed = True
    push = await anna.with_event("disconnected")
    assert push["events"] == [{"kind": "disconnected", "seat": 1, "name": "Biel"}]
    assert push["view"]["players"][1]["connected"] is False
    again = await lab.open("Biel")
    joined = await again.call("join_room", room=room, token=tokens[1])
    # the seat, and no token: the holder has it already (it travels once, docs: joined)
    assert joined["seat"] == 1 and joined["token"] is None
    view = (await again.after(joined))["view"]
    assert view["players"][1]["connected"] is True


async def test_after_a_restart_tokens_take_seats_back_and_only_the_creator_hears_the_code(
        tmp_path):
    db = str(tmp_path / "games.sqlite3")
    async with Lab(store=open_store(db)) as lab:
        anna, biel = await lab.open("Anna"), await lab.open("Biel")
        made = await anna.call("create_room", name="secret", seats=2, private=True)
        joined = await biel.call("join_room", room=made["code"])
        await anna.call("start_game")
        before = await anna.state(lambda s: s["view"]["status"] == "playing")
    async with Lab(store=open_store(db)) as lab:
        # Biel comes back first: he gets his seat, not the creator's code
        biel, anna = await lab.open("Biel"), await lab.open("Anna")
        back = await biel.call("join_room", room=made["room"], token=joined["token"])
        assert (back["seat"], back["code"]) == (1, None)
        again = await anna.call("join_room", room=made["room"], token=made["token"])
        assert (again["seat"], again["code"]) == (0, made["code"])
        # the game is back where it was, its version never going back
        push = await anna.after(again)
        assert push["version"] >= before["version"]
        assert push["view"]["players"][0]["connected"] and push["view"]["players"][1]["connected"]
        assert {k: v for k, v in push["view"].items() if k != "players"} == {
            k: v for k, v in before["view"].items() if k != "players"}


async def test_a_token_taken_back_elsewhere_closes_the_old_connection_with_4001(lab):
    room, (anna, biel), tokens = await a_room(lab, 2)
    await anna.call("start_game")
    other = await lab.open("Biel on the phone")
    joined = await other.call("join_room", room=room, token=tokens[1])
    assert joined["seat"] == 1
    code, reason = await biel.closed_with()
    assert code == 4001 and reason
    await other.state(lambda s: s["view"]["players"][1]["connected"])
    # the seat now answers to the new connection
    view = (await anna.state(lambda s: s["view"]["status"] == "playing"))["view"]
    while view["turn"] != 1:
        await act(anna, "end_turn")
        view = await my_turn(other, 1)
    await act(other, "end_turn")


async def test_a_seat_taken_back_under_another_name_keeps_its_player_s_name(lab):
    room, (anna, biel), tokens = await a_room(lab, 2)
    await anna.call("start_game")
    await biel.ws.close()
    biel.closed = True
    other = await lab.open("Mallory")
    joined = await other.call("join_room", room=room, token=tokens[1])
    assert (await other.after(joined))["view"]["players"][1]["name"] == "Biel"
    assert (await anna.with_event("connected"))["events"] == [
        {"kind": "connected", "seat": 1, "name": "Biel"}]
    # the chat push's seat and name agree with the view: the seat's player speaks
    await other.call("chat", text="it's me")
    push = await anna.take(lambda m: m["type"] == "chat")
    assert (push["seat"], push["name"]) == (1, "Biel")


async def test_wrong_tokens_are_bad_token(lab):
    room, (_anna, _biel), tokens = await a_room(lab, 2)
    _other_room, _, other_tokens = await a_room(lab, 2, names=("Carme", "Dani"))
    stranger = await lab.open("Eli")
    await stranger.refused("join_room", "bad_token", room=room, token="not-a-token")
    await stranger.refused("join_room", "bad_token", room=room, token=other_tokens[0])
    await stranger.refused("join_room", "room_not_found", room="no-such-room",
                           token=tokens[0])


# -- the turn timer ------------------------------------------------------------------------------


async def test_a_turn_that_runs_out_is_ended_with_a_timeout_event():
    async with Lab(turn_time_scale=0.02) as lab:  # 10 s turns last 0.2 s here
        _room, (anna, _biel), _ = await a_room(lab, 2, turn_seconds=10)
        await anna.call("start_game")
        start = await anna.state(lambda s: s["view"]["status"] == "playing")
        view = start["view"]
        assert type(view["deadline"]) in (int, float)
        assert view["deadline"] > time.time() - 1
        seat = view["turn"]
        push = await anna.state(lambda s: any(e["kind"] == "timeout" for e in s["events"]))
        # the timeout, then the usual events of an end_turn
        assert push["events"] == [
            {"kind": "timeout", "seat": seat},
            {"kind": "action", "seat": seat, "action": {"kind": "end_turn"}},
            {"kind": "turn", "seat": 1 - seat}]
        assert push["view"]["turn"] == 1 - seat
        assert push["view"]["deadline"] > view["deadline"]


# -- limits that speak the protocol --------------------------------------------------------------


async def test_too_many_messages_are_rate_limited_with_their_re():
    async with Lab(rate=1.0, burst=5.0, max_strikes=100) as lab:
        peer = await lab.open()
        ids = list(range(100, 120))
        for msg_id in ids:
            peer.sent.append(msg_id)
            await peer.send({"type": "hello", "id": msg_id, "name": "Anna"})
        replies = [await peer.take(lambda m, i=i: m.get("re") == i) for i in ids]
        codes = [r.get("code", r["type"]) for r in replies]
        assert codes[:5] == ["welcome"] * 5 and "rate_limited" in codes
        assert all(c in ("welcome", "rate_limited") for c in codes)


# -- what the view never holds --------------------------------------------------------------------


async def test_the_view_never_holds_a_seed_the_bag_s_order_or_a_token(lab):
    _room, (anna, biel), tokens = await a_room(lab, 2)
    await anna.call("start_game")
    push = await biel.state(lambda s: s["view"]["status"] == "playing")
    flat = msgpack.packb(push)
    for token in tokens:
        assert token.encode() not in flat
    assert type(push["view"]["bag"]) is int
    assert not {"seed", "tokens_hash", "bag_order"} & set(push["view"])
