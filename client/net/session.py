"""One player's session with a server: the connection, the room, and coming back after a drop.

:class:`Session` owns a :class:`client.net.net.GameClient` at a time. It says hello, joins,
creates and leaves rooms for the screen, remembers the seat token it was given
(:class:`client.local.seats.SeatStore`), and hands every push to its :class:`Listener`. When the
connection drops it tries again with a growing pause (0.5 s doubling to 10 s, each wait
announced), says hello again and takes its seat back with the token — the server keeps a
started game's seat for its player (docs/rules.md §10). It stops trying only when told to,
when the server gave the seat to a newer connection (close code 4001), or when the host
barred us from the server (``banned``).

What the host decides sticks here too: a ``removed`` push (the host closed the room, or
kicked us from it) puts us back in the lobby with the host's reason, and a rejoin refused as
``room_closed`` or ``kicked`` does the same, never retried into that room.

A ``state`` push is read once here into a :class:`RoomState`, its view a typed
:class:`shared.view.View`; a push whose view breaks the protocol is dropped, like any other
frame that does (:mod:`client.net.net`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import attrs
from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI, WebSocketException

from client.local.keys import KeyStore
from client.local.seats import HeldSeat, SeatStore
from client.net.net import GameClient, ServerError, fetch_record, fetch_review, join_anywhere
from shared import messages as m
from shared.actions import Action
from shared.describe import NOTICE_NAME
from shared.errors import CastellError, ProtocolError
from shared.record import GameRecordFile
from shared.review import Review
from shared.sanitize import safe
from shared.view import RoomStatus, View, parse_view

FIRST_RETRY = 0.5
MAX_RETRY = 10.0
#: The server closes a connection with this code when its seat was taken back elsewhere.
SEAT_TAKEN = 4001
#: What a client whose seat another connection took back says (and its shell, once closed).
SEAT_TAKEN_TEXT = ("your seat was taken back by another connection (another castell "
                   "playing it?): this one closes")
#: The server closes a banned player's connection with this code, its reason so begun.
BARRED = 1008
BARRED_REASON = "barred by the host: "
#: Answers to a rejoin that mean the seat is gone for good (``room_closed``: the host closed
#: the room).
SEAT_GONE = ("bad_token", "room_not_found", "room_closed")
#: Answers to a rejoin that keep us out of the room, not of the server: the host kicked us
#: (for a while, or until the host lets us back: the seat stays remembered meanwhile).
KEPT_OUT = ("kicked",)

log = logging.getLogger("castell.client")


@attrs.frozen
class RoomState:
    """A ``state`` push as the client keeps it: the room's view, parsed once, at ``version``,
    and the events since the previous push (wire maps, shown as they come)."""

    room: str
    version: int
    view: View
    events: tuple[dict[str, Any], ...]

    @classmethod
    def of(cls, push: m.StatePush) -> RoomState:
        """``push`` with its view checked; raises :class:`ProtocolError` for a malformed one."""
        return cls(push.room, push.version, parse_view(push.view), push.events)


class NotConnected(CastellError):
    """Raised when a request is made while the connection is down (it is being retried)."""

    code = "not_connected"


class Listener(Protocol):
    """What a session tells its screen."""

    def on_state(self, push: RoomState) -> None: ...
    def on_chat(self, push: m.ChatPush) -> None: ...
    def on_connection(self, status: str | None) -> None:
        """A connection problem in words (None: connected again)."""
    def on_notice(self, text: str) -> None:
        """Something the player should read (a seat lost, a room left)."""

    def on_your_turn(self, push: m.YourTurnPush) -> None:
        """One of the account's games reached its turn (``your_turn``)."""
    def on_invite(self, push: m.InvitePush) -> None:
        """A rematch offers us a seat (``invite``)."""
    def on_matched(self, push: m.MatchedPush) -> None:
        """A quick match found a game (``matched``)."""
    def on_match_waiting(self, push: m.MatchWaitingPush) -> None:
        """How the quick-match wait goes (``match_waiting``)."""
    def on_tournament(self, push: m.TournamentTablePush | m.TournamentEndedPush) -> None:
        """A tournament's round is paired (``tournament_table``) or it ended
        (``tournament_ended``)."""
    def on_removed(self, text: str) -> None:
        """The host removed us from the room (closed it, or kicked us): back in the lobby."""
    def on_note(self, note: m.Note) -> None:
        """A notification came to the account's inbox (``note``)."""
    def on_inbox_new(self, push: m.InboxNewPush) -> None:
        """Signed in with new notifications (``inbox_new``)."""
    def on_challenge(self, push: m.ChallengePush | m.ChallengeEndedPush) -> None:
        """A challenge made to us, or the end of one we made or were made (``challenge``,
        ``challenge_ended``)."""


def lasting(until: float | None) -> str:
    """How long a kick or a ban lasts, as a person reads it (``until``: Unix time)."""
    if until is None:
        return " for good"
    return " until " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(until))


def describe_failure(url: str, exc: BaseException) -> str:
    """Why connecting to ``url`` failed, in words."""
    if isinstance(exc, InvalidStatus):
        body = exc.response.body.decode("utf-8", "replace").strip() if exc.response.body else ""
        return f"{url} refused the connection ({exc.response.status_code}): {body or 'no reason'}"
    if isinstance(exc, InvalidURI):
        return f"{url} is not a websocket address"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return (f"{url}: the server's certificate is not trusted ({exc.verify_message}); "
                f"give its certificate with --cafile")
    if isinstance(exc, ssl.SSLError):
        return f"{url}: TLS failed ({exc.reason or exc})"
    if isinstance(exc, ConnectionRefusedError):
        return f"nothing answers at {url}: is castell-server running there?"
    if isinstance(exc, TimeoutError):
        return f"{url} did not answer in time"
    if isinstance(exc, InvalidHandshake | WebSocketException):
        return f"{url} does not speak the Castell protocol ({exc})"
    if isinstance(exc, OSError):
        return f"cannot reach {url}: {exc.strerror or exc}"
    return f"cannot reach {url}: {exc}"


class _Quiet:
    """The listener of a session nobody watches yet."""

    def on_state(self, push: RoomState) -> None:
        pass

    def on_chat(self, push: m.ChatPush) -> None:
        pass

    def on_connection(self, status: str | None) -> None:
        pass

    def on_notice(self, text: str) -> None:
        pass

    def on_your_turn(self, push: m.YourTurnPush) -> None:
        pass

    def on_invite(self, push: m.InvitePush) -> None:
        pass

    def on_matched(self, push: m.MatchedPush) -> None:
        pass

    def on_match_waiting(self, push: m.MatchWaitingPush) -> None:
        pass

    def on_tournament(self, push: m.TournamentTablePush | m.TournamentEndedPush) -> None:
        pass

    def on_removed(self, text: str) -> None:
        pass

    def on_note(self, note: m.Note) -> None:
        pass

    def on_inbox_new(self, push: m.InboxNewPush) -> None:
        pass

    def on_challenge(self, push: m.ChallengePush | m.ChallengeEndedPush) -> None:
        pass


class Session:
    """See the module docstring. Call :meth:`open` once, then run :meth:`run` as a task."""

    def __init__(self, url: str, name: str, listener: Listener | None = None, *,
                 ssl_context: ssl.SSLContext | None = None, seats: SeatStore | None = None,
                 first_retry: float = FIRST_RETRY, max_retry: float = MAX_RETRY,
                 home: str | None = None, keys: KeyStore | None = None) -> None:
        self.url = url
        #: The address the user gave (or ``home``, a name of its own): seats are remembered
        #: under it, whichever node of a cluster serves the room today, and looked up under
        #: every spelling of it (:func:`client.local.seats.same_server`).
        self.home = home if home is not None else url
        #: Every node known to serve this lobby (a cluster's ``rooms`` reply lists them).
        self.nodes: list[str] = [url]
        self.name = name
        self.listener: Listener = listener if listener is not None else _Quiet()
        self.ssl_context = ssl_context
        self.seats = seats
        #: This user's account key for the server (None: a guest), kept in ``keys``.
        self.keys = keys
        #: (Picked at each connection by the server's identity: :meth:`_dial`.)
        self.key: str | None = None
        #: Whether the server signed us in to an account (``welcome.account``).
        self.account = False
        self.first_retry = first_retry
        self.max_retry = max_retry
        self.client: GameClient | None = None
        self.welcome: m.Welcome | None = None
        self.room: str | None = None  # the room id we are in (or coming back to)
        self.join_key: str | None = None  # how a spectator finds the room again
        self.seat: int | None = None
        self.token: str | None = None
        self.code: str | None = None  # a private room's join code, for its creator
        self.created = False  # whether this session created the room it is in
        self.room_name: str | None = None
        self.state: RoomState | None = None
        #: Whether the server has more rooms than the last page of the list it sent.
        self.more_rooms = False
        self.stopped = False
        self.seat_lost = False
        #: Why the host barred us from the server, once it did (we stop for good then).
        self.barred: str | None = None
        self.on_reconnected: Callable[[], Awaitable[None]] | None = None
        self._stop = asyncio.Event()
        self._new_state = asyncio.Event()
        self._remembered: HeldSeat | None = None
        #: The seat (room, seat) forgotten last, until one is remembered again.
        self._forgotten: tuple[str | None, int | None] | None = None
        #: The rematches we were invited to: room id -> who made it (its creator).
        self.invited: dict[str, str] = {}
        #: The reviews being asked for: room id -> what their progress is told to.
        self.reviewing: dict[str, Callable[[int, int], None]] = {}

    # -- connecting ----------------------------------------------------------------------

    async def _dial(self) -> GameClient:
        client = await GameClient.connect(self.url, ssl_context=self.ssl_context,
                                          open_timeout=10.0)
        try:
            if self.keys is not None:
                server = await asyncio.wait_for(client.identify(), 10.0)
                self.key = self.keys.key_for(self.home, server)
            self.welcome = await asyncio.wait_for(client.hello(self.name, self.key), 10.0)
        except BaseException:
            await client.close()
            raise
        self.account = self.welcome.account
        if self.welcome.name:  # signed in: the account's own name
            self.name = self.welcome.name
        return client

    async def open(self) -> None:
        """Connect and say hello; raises (OSError, websockets errors, ServerError) on failure,
        so that a wrong address is reported at once rather than retried forever."""
        self.client = await self._dial()

    async def run(self) -> None:
        """Pump pushes to the listener; reconnect whenever the connection drops."""
        delay = self.first_retry
        attempt = 0
        while not self.stopped:
            client = self.client
            if client is None:
                attempt += 1
                try:
                    client = await self._reconnect()
                except ServerError as exc:
                    if exc.code == "banned":  # the host's word: no use trying again
                        self._barred(exc.message)
                        break
                    self.listener.on_connection(f"the server refused us: {exc.message}")
                    await self._pause(delay)
                    delay = min(delay * 2, self.max_retry)
                    continue
                except (OSError, TimeoutError, WebSocketException, ConnectionError) as exc:
                    self.listener.on_connection(
                        f"{describe_failure(self.url, exc)} — trying again in {delay:g} s "
                        f"(attempt {attempt})")
                    await self._pause(delay)
                    delay = min(delay * 2, self.max_retry)
                    continue
                self.client = client
                delay, attempt = self.first_retry, 0
                self.listener.on_connection(None)
                if self.on_reconnected is not None:
                    await self.on_reconnected()
            await self._pump(client)
            if self.client is not client and self.client is not None:
                continue  # we moved to another node on purpose (a ``moved`` answer)
            self.client = None
            if self.stopped:
                break
            code = client.ws.close_code
            reason = client.ws.close_reason or ""
            if code == BARRED and reason.startswith(BARRED_REASON):
                # (its ``removed`` push lost: the close says it too)
                self._barred(f"the host barred you from this server: "
                             f"{safe(reason.removeprefix(BARRED_REASON))}")
                break
            if code == SEAT_TAKEN:
                self.seat_lost = True
                self.stopped = True
                self.listener.on_connection(SEAT_TAKEN_TEXT)
                break
            self.listener.on_connection(f"connection lost ({client.ws.close_reason or code}) "
                                        f"— reconnecting…")

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)

    async def _reconnect(self) -> GameClient:
        """After a drop: a new connection and, if we were in a room, back into it with the
        seat token — on whichever node serves the room now (a cluster moves rooms off a
        node that died; ``join_anywhere`` follows ``moved`` and tries every known node)."""
        if self.room is None:
            return await self._dial()
        try:
            if self.token is not None or (self.seat is not None and self.account):
                # A seat token; or, signed in, the account's seat comes back without one.
                result = await join_anywhere(self.nodes, self.name, self.room,
                                             token=self.token, ssl_context=self.ssl_context,
                                             timeout=15.0, key=self.key)
            else:
                result = await join_anywhere(self.nodes, self.name,
                                             self.join_key or self.room, as_="spectator",
                                             ssl_context=self.ssl_context, timeout=15.0,
                                             key=self.key)
        except ServerError as exc:
            if exc.code not in SEAT_GONE + KEPT_OUT:
                raise
            name = self.room_name or self.room
            if exc.code not in KEPT_OUT:
                self._forget()
            self._clear_room()
            if exc.code in ("bad_token", "room_not_found"):
                self.listener.on_notice(f"the server no longer has your place in {name!r} "
                                        f"({exc.message}); back in the lobby")
            else:  # the host's word (closed, kicked), with the host's reason
                self.listener.on_notice(f"{name!r}: {exc.message}; back in the lobby")
            return await self._dial()
        self.url = result.url
        return result.client

    async def _follow(self, url: str) -> None:
        """A ``moved`` answer: the room lives on another node of the cluster; go there."""
        self.url = url
        if url not in self.nodes:
            self.nodes.append(url)
        old, self.client = self.client, await self._dial()
        if old is not None:
            await old.close()

    async def _request_following(self, cls: type, /, **fields: Any) -> Any:
        """A join request that follows the cluster's ``moved`` answers (a few hops)."""
        for _ in range(4):
            try:
                return await self.request(cls, **fields)
            except ServerError as exc:
                if exc.code != "moved" or not exc.url:
                    raise
                await self._follow(exc.url)
        return await self.request(cls, **fields)

    async def _pump(self, client: GameClient) -> None:
        async def sentinel() -> None:
            await client.closed.wait()
            client.pushes.put_nowait(None)

        watcher = asyncio.create_task(sentinel())
        try:
            while True:
                push = await client.pushes.get()
                if push is None:
                    return
                self._dispatch(push)
        finally:
            watcher.cancel()

    def _dispatch(self, push: Any) -> None:
        if isinstance(push, m.StatePush):
            if self.room is not None and push.room != self.room:
                return  # a late push of a room we left
            if self.state is not None and self.state.room == push.room and \
                    push.version < self.state.version:
                return
            try:
                state = RoomState.of(push)
            except ProtocolError as exc:
                log.info("dropped a frame from the server: %s", safe(exc.message))
                return
            self.state = state
            self.room_name = state.view.name
            if state.view.status == RoomStatus.FINISHED or (
                    self.seat is not None and self.seat in (state.view.resigned or ())):
                self._forget()  # played no more by us: never offered again
            elif self.token is not None and self.room is not None:
                self._remember()
            self.listener.on_state(state)
            self._new_state.set()
        elif isinstance(push, m.ChatPush) and (self.room is None or push.room == self.room):
            self.listener.on_chat(push)
        elif isinstance(push, m.YourTurnPush | m.InvitePush):
            if isinstance(push, m.InvitePush):
                self.invited[push.room] = push.from_
            if isinstance(push, m.YourTurnPush):
                self.listener.on_your_turn(push)
            else:
                self.listener.on_invite(push)
        elif isinstance(push, m.NoticePush) and push.room is None:
            self.listener.on_notice(f"{NOTICE_NAME}: {push.text}")
        elif isinstance(push, m.MatchedPush | m.MatchWaitingPush):
            if isinstance(push, m.MatchedPush):
                self.listener.on_matched(push)
            else:
                self.listener.on_match_waiting(push)
        elif isinstance(push, m.ChallengePush | m.ChallengeEndedPush):
            self.listener.on_challenge(push)
        elif isinstance(push, m.TournamentTablePush | m.TournamentEndedPush):
            self.listener.on_tournament(push)
        elif isinstance(push, m.RemovedPush):
            self._removed(push)
        elif isinstance(push, m.ReviewProgressPush) and push.room in self.reviewing:
            self.reviewing[push.room](push.done, push.total)
        elif isinstance(push, m.NotePush):
            self.listener.on_note(push.note)
        elif isinstance(push, m.InboxNewPush):
            self.listener.on_inbox_new(push)
        elif isinstance(push, m.NoticePush) and push.room is not None and push.room == self.room:
            # The server's word about the room, shown among the chat under its own name.
            self.listener.on_chat(m.ChatPush(room=push.room, seat=None, name=NOTICE_NAME,
                                             text=push.text))

    def _removed(self, push: m.RemovedPush) -> None:
        """The host removed us (a ``removed`` push): from the room (back in the lobby), or
        from the server (we stop: the connection is closing)."""
        reason = safe(push.text)
        if push.why == "banned":
            self._barred(f"the host barred you from this server{lasting(push.until)}: "
                         f"{reason}")
            return
        if push.room is None or push.room != self.room:
            return
        name = self.room_name or self.room
        if push.why == "closed":
            self._forget()  # played no more: not offered again
            text = f"the host closed {name!r}: {reason}; back in the lobby"
        else:
            text = (f"the host removed you from {name!r}{lasting(push.until)}: {reason}; "
                    f"back in the lobby")
        self._clear_room()
        self._tell_removed(text)

    def _tell_removed(self, text: str) -> None:
        self.listener.on_removed(text)

    def _barred(self, text: str) -> None:
        """The host barred us from the server: stop for good, and say why (once)."""
        self.stopped = True
        self._stop.set()
        if self.barred is None:
            self.barred = text
            self.listener.on_connection(text)

    async def stop(self) -> None:
        """Stop for good: close the connection, do not come back."""
        self.stopped = True
        self._stop.set()
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()

    # -- requests ------------------------------------------------------------------------

    async def request(self, cls: type, /, **fields: Any) -> Any:
        client = self.client
        if client is None or client.closed.is_set():
            raise NotConnected("not connected to the server right now: reconnecting…")
        try:
            return await client.request(cls, **fields)
        except ConnectionError:
            raise NotConnected("the connection dropped before the server answered; "
                               "reconnecting…") from None

    async def _state_where(self, predicate: Callable[[RoomState], bool],
                           timeout: float = 5.0) -> None:
        """Wait (a while) for a state push that satisfies ``predicate``."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while self.state is None or not predicate(self.state):
                    self._new_state.clear()
                    await self._new_state.wait()

    async def act(self, action: Action) -> int:
        """Send an action and wait (a while) for the push that shows it; its version."""
        reply = await self.request(m.ActionRequest, action=action)
        version = reply.version
        if version is not None:
            await self._state_where(lambda s: s.version >= version)
        return version

    async def start_game(self) -> None:
        """Start the room's game, and wait (a while) for the push that shows it started."""
        await self.request(m.StartGame)
        await self._state_where(lambda s: s.view.status != RoomStatus.WAITING)

    async def add_bot(self, level: str) -> None:
        """Seat a bot, and wait for the push that shows it."""
        before = len(self.state.view.players) if self.state else 0
        await self.request(m.AddBot, level=level)
        await self._state_where(lambda s: len(s.view.players) > before)

    async def list_rooms(self, after: str | None = None) -> tuple[m.RoomSummary, ...]:
        """A page of the public rooms: the first, or the one after room ``after``;
        :attr:`more_rooms` says whether more follow it."""
        reply = await self.request(m.ListRooms, **({"after": after} if after else {}))
        for node in reply.nodes or ():
            if node not in self.nodes:
                self.nodes.append(node)
        self.more_rooms = reply.more
        return reply.rooms

    async def _joined(self, reply: m.Joined, join_key: str | None, *,
                      created: bool = False) -> None:
        """In a room: the server sends its view right after ``joined``; wait for it."""
        if self.state is not None and self.state.room != reply.room:
            self.state = None
        self.room = reply.room
        self.join_key = join_key
        self.seat = reply.seat
        self.token = reply.token if reply.seat is not None else None
        self.code = reply.code
        self.created = created  # before the room's first view reaches the screen
        self.room_name = None
        await self._state_where(lambda s: s.room == reply.room)

    async def create_room(self, name: str, seats: int, variant: str = "normal",
                          turn_seconds: int | None = None, private: bool = False,
                          rated: bool = False) -> m.Joined:
        reply = await self.request(m.CreateRoom, name=name, seats=seats, variant=variant,
                                   turn_seconds=turn_seconds, private=private, rated=rated)
        self.room_name = name
        await self._joined(reply, None, created=True)
        self.room_name = name
        self._remember()
        return reply

    async def join(self, key: str, *, spectate: bool = False) -> m.Joined:
        reply = await self._request_following(m.JoinRoom, room=key,
                                              as_="spectator" if spectate else "player")
        await self._joined(reply, key)
        return reply

    async def resume(self, held: HeldSeat) -> m.Joined:
        """Take back a remembered seat; a refused token is forgotten."""
        try:
            reply = await self._request_following(m.JoinRoom, room=held.room,
                                                  token=held.token)
        except ServerError as exc:
            if exc.code in SEAT_GONE and self.seats is not None:
                self.seats.forget(held.url, held.room, held.seat)
            raise
        self.token = held.token
        await self._joined(reply, held.room)
        self.token = held.token
        self.room_name = held.name
        return reply

    async def closed_by_host(self, room: str) -> str | None:
        """Whether the host closed ``room`` (the server's words, with the host's reason),
        asked quietly, without taking a seat: its ``record`` is a closed game's, or is
        refused ``room_closed``. None when it was not closed, or the server cannot say."""
        standing = await self.seat_standing(room)
        return standing[1] if standing is not None and standing[0] == "closed" else None

    async def seat_standing(self, room: str, *, private: bool | None = None
                            ) -> tuple[str, str] | None:
        """Why a remembered seat of ``room`` is played no more, asked quietly with its
        ``record`` (no seat is taken): ``("closed", the server's words)`` when the host closed
        it, ``("over", ...)`` when its game is over (a record is given only then), ``("gone",
        ...)`` when the server has no such room and the room was known to be public (a
        private room's record is refused the same way to a guest). None when it may still be
        played, or the server cannot say."""
        try:
            reply = await self.request(m.RecordRequest, room=room)
        except ServerError as exc:
            if exc.code == "room_closed":
                return "closed", safe(exc.message)
            if exc.code == "room_not_found" and private is False:
                return "gone", "the server no longer has this game"
            return None
        except CastellError:
            return None
        result = reply.game.get("result") if isinstance(reply.game, dict) else None
        if isinstance(result, dict) and "abandoned" in result:
            return "closed", f"the host closed this room: {safe(str(result['abandoned']))}"
        return "over", "this game is over"

    def forget_seat(self, held: HeldSeat) -> None:
        """Forget a remembered seat (its room is played no more)."""
        if self.seats is not None:
            self.seats.forget(held.url, held.room, held.seat)

    async def my_games(self, status: str | None = None, limit: int = 20
                       ) -> tuple[m.GameEntry, ...]:
        """The signed-in account's games, newest first."""
        reply = await self.request(m.MyGames, status=status, limit=limit)
        return reply.entries

    async def record(self, room: str) -> GameRecordFile:
        """A finished game's record, fetched from the server (page by page, for a long
        game's: see :func:`client.net.net.fetch_record`)."""
        return await fetch_record(self.request, room)

    async def review(self, room: str, progress: Callable[[int, int], None]) -> Review:
        """A finished game's review, from the server (computed there, or read from its
        store); ``progress(done, total)`` is told of each ``review_progress`` push about it
        while it is computed."""
        self.reviewing[room] = progress
        try:
            return await fetch_review(self.request, room)
        finally:
            self.reviewing.pop(room, None)

    async def take_back(self, room: str, name: str) -> m.Joined:
        """Signed in: take back the account's seat of ``room`` (no token needed)."""
        reply = await self._request_following(m.JoinRoom, room=room)
        await self._joined(reply, room)
        self.room_name = name
        return reply

    async def resign(self) -> int:
        """Resign the game of this seat (docs/rules.md §10); wait (a while) for the push that
        shows it. The seat is played no more by us: its token is forgotten, and no later
        ``castell`` offers to resume it. Returns the room's version after it."""
        reply = await self.request(m.ResignRequest)
        self._forget()
        version: int = reply.version
        await self._state_where(lambda s: s.version >= version)
        return version

    async def rematch(self) -> m.Joined:
        """From a finished game: its rematch (made now, or joined if another player made it)."""
        reply = await self.request(m.Rematch)
        self._forget()
        # Made by us, unless another player made it (we were invited to it: at the same
        # moment, the invite comes before this reply); a private room's code is its
        # creator's alone.
        made = reply.code is not None or reply.room not in self.invited
        await self._joined(reply, None, created=made)
        self._remember()
        return reply

    async def quick_match(self, seats: tuple[int, ...], rated: bool = False,
                          bots_after: int | None = None) -> None:
        """Wait in the server's quick-match queue (a ``matched`` push says where to sit)."""
        await self.request(m.QuickMatch, seats=seats, rated=rated, bots_after=bots_after)

    async def cancel_match(self) -> None:
        await self.request(m.CancelMatch)

    async def challenge(self, to: tuple[str, ...], seats: int, variant: str = "normal",
                        turn_seconds: int | None = None, rated: bool = False,
                        ) -> m.ChallengeSent:
        """Challenge accounts by name (the reply says the challenge's id)."""
        sent: m.ChallengeSent = await self.request(
            m.ChallengeRequest, to=to, seats=seats, variant=variant,
            turn_seconds=turn_seconds, rated=rated)
        return sent

    async def answer_challenge(self, challenge: str, how: str) -> None:
        """``accept``, ``decline`` or ``cancel`` challenge ``challenge`` (a ``matched`` push
        says where to sit once a game is made of it)."""
        kind = {"accept": m.AcceptChallenge, "decline": m.DeclineChallenge,
                "cancel": m.CancelChallenge}[how]
        await self.request(kind, challenge=challenge)

    async def take_matched(self, push: m.MatchedPush) -> m.Joined:
        """Take the seat a quick match found (on the node that serves it, with its token)."""
        if push.url is not None and push.url != self.url:
            await self._follow(push.url)
        reply = await self._request_following(m.JoinRoom, room=push.room, token=push.token)
        self.token = push.token
        await self._joined(reply, push.room)
        self.token = push.token
        self._remember()
        return reply

    async def leave(self) -> None:
        """Back to the lobby. Before the start the seat is given up (and forgotten)."""
        started = self.state is not None and self.state.view.status != RoomStatus.WAITING
        with contextlib.suppress(NotConnected, ServerError):
            await self.request(m.LeaveRoom)
        if not started:
            self._forget()
        self._clear_room()

    def _clear_room(self) -> None:
        self.room = self.join_key = self.token = self.code = self.room_name = None
        self.seat = None
        self.state = None
        self.created = False

    # -- the seat file -------------------------------------------------------------------

    def held_seats(self) -> list[HeldSeat]:
        return self.seats.held(self.home, self.name) if self.seats is not None else []

    def _remember(self) -> None:
        if self.seats is None or self.room is None or self.token is None or self.seat is None:
            return
        view = self.state.view if self.state is not None \
            and self.state.room == self.room else None
        private = None if view is None else bool(view.private) or self.code is not None
        held = HeldSeat(self.home, self.room, self.token, self.room_name or self.room, self.seat,
                        self.name, private)
        if held != self._remembered:
            self.seats.remember(held)
            self._remembered = held
            self._forgotten = None

    def _forget(self) -> None:
        if (self.room, self.seat) == self._forgotten:
            return  # (a resigned seat's every push: forgotten once is enough)
        if self.seats is not None and self.room is not None:
            self.seats.forget(self.home, self.room, self.seat)
        self._remembered = None
        self._forgotten = (self.room, self.seat)
