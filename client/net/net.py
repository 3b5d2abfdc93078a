"""The client side of the wire: one websocket to a server, requests matched to replies.

``GameClient`` sends requests with fresh ids, resolves each one when the reply with that
``re`` arrives (raising :class:`ServerError` for an ``error``), and queues pushes
(``state``, ``chat``) in arrival order while keeping the latest ``state``. The terminal
client, the bots' load generator and the tests all speak through it.

It asks for view patches at ``hello`` (``patches``, docs/protocol.md): a ``patch`` push is
applied to the view it holds (:func:`shared.patch.apply`) and queued as the ``state`` push of
the whole view it makes, so whoever reads the pushes sees whole views either way. It asks
for them packed too (``packed``: ``p`` pushes, :mod:`shared.packed`), which read as the same
``patch``. A patch
that does not fit the view held (another base, or a path the view lacks) is dropped and the
whole view asked for again (``resync``).

A server is not trusted further than the codec checks: a frame that does not decode is
dropped (a reply that cannot be read fails its request), and an error's words are made safe
for a terminal before anyone can print them.

:func:`join_anywhere` gets into a room on a cluster of server nodes (or on one server): it
follows ``moved`` errors to the node that serves the room and, when a node is gone, tries the
others until the room is served again.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NamedTuple

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.typing import Subprotocol

from shared import messages as m
from shared.actions import Action
from shared.codec import decode_server, encode, unpack
from shared.errors import CastellError, ProtocolError
from shared.logs import frame_safe_logger
from shared.patch import apply
from shared.record import GameRecordFile, RecordError
from shared.review import Review, ReviewError
from shared.sanitize import safe


async def fetch_record(request: Callable[..., Awaitable[Any]], room: str) -> GameRecordFile:
    """A finished game's whole record, through ``request`` (a :meth:`GameClient.request`):
    the ``record`` reply and, for a long game, the pages that follow it (``next``: asked for
    with ``from``), their actions joined in order. :class:`RecordError` when the pages do not
    follow on from each other."""
    return GameRecordFile.from_data(
        await _paged(request, m.RecordRequest, room, "game", "actions", RecordError))


async def fetch_review(request: Callable[..., Awaitable[Any]], room: str) -> Review:
    """A finished game's review, through ``request`` (a :meth:`GameClient.request`): the
    ``review`` reply and, for a review larger than a frame, the pages that follow it
    (``next``: asked for with ``from``), their turns joined in order. The server's
    ``review_progress`` pushes come on the pushes' way meanwhile. :class:`ReviewError` when
    the pages do not follow on from each other or the review cannot be read."""
    return Review.from_data(
        await _paged(request, m.ReviewRequest, room, "review", "turns", ReviewError))


async def _paged(request: Callable[..., Awaitable[Any]], cls: type, room: str, field: str,
                 items: str, error: type[Exception]) -> dict[str, Any]:
    """A reply's map ``field`` whose list ``items`` comes in pages (``next``: asked for
    with ``from``), the pages' items joined in order; ``error`` when they do not follow on
    from each other (``record``'s actions, ``review``'s turns)."""
    what = {"actions": "record", "turns": "review"}.get(items, field)
    reply = await request(cls, room=room)
    data = dict(getattr(reply, field))
    joined = list(data.get(items) or ())
    while reply.next is not None:
        if reply.next != len(joined):
            raise error(f"the server's {what} of {room!r} skips or repeats {items} "
                        f"(a page from {reply.next} after {len(joined)})")
        reply = await request(cls, room=room, from_=reply.next)
        page = getattr(reply, field).get(items) or ()
        if not page and reply.next is not None:
            raise error(f"the server's {what} of {room!r} has an empty page")
        joined.extend(page)
    data[items] = joined
    return data


#: The largest frame the client accepts from a server.
MAX_SIZE = 4 * 1024 * 1024

log = logging.getLogger("castell.client")


class ServerError(CastellError):
    """Raised when the server answers a request with an ``error``."""

    def __init__(self, error: m.Error) -> None:
        # The words come from the server: never let them reach a terminal as they are.
        super().__init__(safe(error.message), code=error.code)
        self.rule = error.rule
        self.error = error

    @property
    def url(self) -> str | None:
        """For ``moved``: the node that serves the room (None: ask again in a moment)."""
        return self.error.url


class GameClient:
    """A connection to a Castell server. Use :meth:`connect`."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.pushes: asyncio.Queue[Any] = asyncio.Queue()
        self.state: m.StatePush | None = None
        #: The whole view received last, in arrival order (what a patch applies to), and
        #: whether a ``resync`` is under way (patches are dropped until its view comes).
        self.view: m.StatePush | None = None
        self.resyncing = False
        #: Whole views received, patches applied, and resyncs asked for.
        self.views = 0
        self.patched = 0
        self.resyncs = 0
        #: Whether this connection's patches come packed (said at hello, and taken).
        self.packed = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self.closed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, url: str, *, ssl_context: ssl.SSLContext | None = None,
                      open_timeout: float = 10.0, **kwargs: Any) -> GameClient:
        # Frames carry the seat token: never log their contents, even at DEBUG.
        kwargs.setdefault("logger", frame_safe_logger("castell.client.ws"))
        ws = await connect(url, subprotocols=[Subprotocol(m.SUBPROTOCOL)],
                           ssl=ssl_context, open_timeout=open_timeout,
                           compression=None, max_size=MAX_SIZE, **kwargs)
        return cls(ws)

    async def close(self) -> None:
        await self.ws.close()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader

    async def __aenter__(self) -> GameClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- requests --------------------------------------------------------------------------

    async def request(self, cls: type, /, **fields: Any) -> Any:
        """Send ``cls(id=<fresh>, **fields)`` and return its reply (or raise ServerError)."""
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            await self.ws.send(encode(cls(id=msg_id, **fields)))
            reply = await future
        finally:
            self._pending.pop(msg_id, None)
        if isinstance(reply, m.Error):
            raise ServerError(reply)
        return reply

    async def hello(self, name: str, key: str | None = None, *,
                    patches: bool = True, packed: bool = True) -> m.Welcome:
        """Say hello as ``name``; with ``key``, signed in to that key's account (registered
        under ``name`` the first time). View patches are asked for unless told not to, and
        packed (:mod:`shared.packed`) unless told not to; a server that does not know one
        refuses its field: then hello again without it."""
        asks = [{"patches": True, "packed": True}] if patches and packed else []
        asks += [{"patches": True}] if patches else []
        for fields in asks:
            try:
                welcome: m.Welcome = await self.request(m.Hello, name=name, key=key, **fields)
            except ServerError as exc:
                if exc.code != "invalid_field" or exc.error.field not in fields:
                    raise
                continue
            self.packed = "packed" in fields
            return welcome
        self.packed = False
        return await self.request(m.Hello, name=name, key=key)

    async def identify(self) -> str | None:
        """The server's identity (``identify``), or None from a server that does not say it
        (one that does not know the request answers ``unknown_type``; whatever else refuses
        it, the client goes on, knowing the server by its address)."""
        try:
            reply = await self.request(m.Identify)
        except ServerError:
            return None
        return str(reply.server_id)

    async def act(self, action: Action) -> int:
        """Send an action; returns the room's version after it."""
        reply = await self.request(m.ActionRequest, action=action)
        return reply.version

    # -- pushes ----------------------------------------------------------------------------

    async def next_push(self, timeout: float = 10.0) -> Any:
        return await asyncio.wait_for(self.pushes.get(), timeout)

    async def wait_state(self, predicate: Any = None, timeout: float = 10.0) -> m.StatePush:
        """The next ``state`` push (satisfying ``predicate``, if given), skipping others."""
        async with asyncio.timeout(timeout):
            while True:
                push = await self.pushes.get()
                if isinstance(push, m.StatePush) and (predicate is None or predicate(push)):
                    return push

    def drain(self) -> list[Any]:
        """Every push queued so far, without waiting."""
        out = []
        while not self.pushes.empty():
            out.append(self.pushes.get_nowait())
        return out

    async def _read(self) -> None:
        try:
            async for data in self.ws:
                if isinstance(data, str):
                    continue
                try:
                    msg = decode_server(data, max_size=MAX_SIZE, packed_room=(
                        None if not self.packed else
                        self.view.room if self.view is not None else ""))
                except ProtocolError as exc:
                    self._refused(data, exc)
                    continue
                re = getattr(msg, "re", None)
                if re is not None and re in self._pending:
                    self._pending[re].set_result(msg)
                    continue
                if isinstance(msg, m.Patch):
                    whole = self._apply(msg)
                    if whole is None:
                        continue
                    msg = whole
                elif isinstance(msg, m.StatePush):
                    self.resyncing = False
                    self.views += 1
                if isinstance(msg, m.StatePush):
                    self.view = msg
                if isinstance(msg, m.StatePush) and (
                    self.state is None or msg.version >= self.state.version
                ):
                    self.state = msg
                self.pushes.put_nowait(msg)
        except ConnectionClosed:
            pass
        finally:
            self.closed.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("connection closed"))

    def _apply(self, patch: m.Patch) -> m.StatePush | None:
        """The whole view ``patch`` makes of the one held; None (and a ``resync`` asked
        for) when it does not fit that view."""
        held = self.view
        if self.resyncing:
            return None
        if held is not None and held.room == patch.room and held.version == patch.base:
            try:
                view = apply(held.view, list(patch.changes))
            except ProtocolError as exc:
                log.info("dropped a patch from the server: %s", safe(exc.message))
            else:
                self.patched += 1
                return m.StatePush(patch.room, patch.version, view, patch.events)
        self.resyncing = True
        self.resyncs += 1
        task = asyncio.get_running_loop().create_task(self._resync())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return None

    async def _resync(self) -> None:
        """Ask for the whole view again (it comes as a ``state`` push before the ``ok``)."""
        try:
            await self.request(m.Resync)
        except (ServerError, ConnectionError, ProtocolError, WebSocketException) as exc:
            self.resyncing = False
            log.info("resync refused: %s", exc)

    def _refused(self, data: bytes, exc: ProtocolError) -> None:
        """A frame from the server that breaks the protocol: dropped, and if it answers a
        pending request, that request fails with the reason."""
        log.info("dropped a frame from the server: %s", safe(exc.message))
        with contextlib.suppress(ProtocolError):
            value = unpack(data, max_size=MAX_SIZE)
            re = value.get("re") if isinstance(value, dict) else None
            future = self._pending.get(re) if type(re) is int else None
            if future is not None and not future.done():
                future.set_exception(ProtocolError(
                    f"the server's reply broke the protocol: {safe(exc.message)}",
                    code=exc.code, field=exc.field))


class JoinResult(NamedTuple):
    """Where :func:`join_anywhere` got in: the open client, the ``joined`` reply, and the
    address of the node that answered it."""

    client: GameClient
    joined: m.Joined
    url: str


#: How many ``moved`` answers in a row are followed before pausing (two nodes that disagree
#: for a moment must not be bounced between at full speed).
_MAX_HOPS = 4


async def join_anywhere(urls: Sequence[str], name: str, room: str, *,
                        token: str | None = None, as_: str = "player", key: str | None = None,
                        ssl_context: ssl.SSLContext | None = None, timeout: float = 30.0,
                        pause: float = 0.2, max_pause: float = 1.0) -> JoinResult:
    """Connect, say hello as ``name`` (signed in with ``key``, if given) and ``join_room``
    ``room`` (an id or a private code; with ``token``, taking that seat back; signed in, the
    account's own seat is taken back without one), on whichever node of ``urls`` serves it.

    The nodes are tried in order. A ``moved`` answer sends the same request, token and all, to
    the node it names; a node that does not answer, or a room between two nodes (its node
    died and another is taking it over), makes it try the next node, pausing ``pause``
    seconds (doubling up to ``max_pause``) once every node has been tried. Any other refusal
    (``bad_token``, ``room_not_found``, ``room_full`` …) is raised as a :class:`ServerError`
    at once; after ``timeout`` seconds the last failure is raised.

    A lone server is a list of one url. For a cluster, any node's ``rooms`` reply lists the
    others (``Rooms.nodes``).
    """
    if not urls:
        raise ValueError("join_anywhere needs at least one server address")
    deadline = time.monotonic() + timeout
    known = list(dict.fromkeys(urls))
    turn, hops, wait = 0, 0, pause
    target: str | None = None
    failure: BaseException | None = None
    while True:
        if target is None:
            if turn and turn % len(known) == 0:
                await _sleep_until(deadline, wait, failure)
                wait = min(wait * 2, max_pause)
                hops = 0
            url = known[turn % len(known)]
            turn += 1
        else:
            url, target = target, None
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise failure or TimeoutError(f"no server joined {room!r} in time")
        try:
            client = await GameClient.connect(url, ssl_context=ssl_context,
                                              open_timeout=min(10.0, remaining))
        except (OSError, TimeoutError, WebSocketException) as exc:
            failure = exc
            continue
        try:
            async with asyncio.timeout(min(10.0, max(remaining, 0.1))):
                await client.hello(name, key)
                joined = await client.request(m.JoinRoom, room=room, as_=as_, token=token)
        except ServerError as exc:
            await client.close()
            if exc.code != "moved":
                raise
            failure = exc
            if exc.url is not None and hops < _MAX_HOPS:
                hops += 1
                target = exc.url
                if exc.url not in known:
                    known.append(exc.url)
            continue
        except (ConnectionError, TimeoutError, WebSocketException) as exc:
            # the node went away meanwhile: try the next one
            await client.close()
            failure = exc
            continue
        return JoinResult(client, joined, url)


async def _sleep_until(deadline: float, seconds: float, failure: BaseException | None) -> None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise failure or TimeoutError("no server answered in time")
    await asyncio.sleep(min(seconds, left))
