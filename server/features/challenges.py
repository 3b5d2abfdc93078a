"""Challenges by name: a signed-in player invites accounts by name to a game, and the game
is made once every one of them accepts (docs/protocol.md, ``challenge``).

:class:`Challenges` owns the ``challenge``, ``accept``, ``decline`` and ``challenge_cancel``
requests:

* **A challenge** names one to three accounts and the game: its seat count (the challenger,
  each name, bots in the rest where the room allows: never in a rated game), variant, turn
  timer and whether it is rated. It is stored (:class:`~server.store.base.ChallengesStore`),
  so that a restart, or another node of a cluster, knows it; each named account hears the
  ``challenge`` push wherever its connections are (:meth:`Challenges.deliver`).
* **Its end**, once, whoever ends it first (the store ends it atomically): every named
  player accepted (the room is made), one declined, the challenger cancelled it, or it
  expired: ``--challenge-expiry`` seconds after it was made, a day for a correspondence game
  (a turn timer of a day or more, :data:`CORRESPONDENCE`). The challenger and every named
  player hear ``challenge_ended`` with the reason.
* **The game**: made on the node of the last acceptance, private, every player seated as a
  quick match seats its players (:meth:`server.runtime.runner.RoomRunner.seat_matched`: the
  challenger in seat 0, the named players after in their order, bots in the free seats) and
  started; each player hears ``matched`` with their seat and its token (and the node's
  address in a cluster) and takes the seat with ``join_room``. The seats are held
  :data:`HELD` seconds (:mod:`server.features.reservations`).
* **Limits**: accounts only (``not_signed_in``); at most ``--challenges-per-hour`` challenges
  made by one account in the last hour, counted in the store on every node
  (``rate_limited``); none while the server drains (``draining``).

The expiry is armed on the node that made the challenge, and on every node at its start for
the challenges the store holds open; an ``accept`` of an expired challenge ends it then.
Its wait is a deadline in the lobby's scheduler (one heap for the node, no task while it
waits), so a test moves a virtual clock instead of waiting.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import TYPE_CHECKING, Any

from server.features.matchmaking import unique_names
from server.features.reservations import Reservations
from server.runtime.timers import Cancellable, Scheduler
from server.store.records import ChallengeRecord
from shared import messages as m
from shared.errors import CastellError, ProtocolError
from shared.wire import ROOM_NAME_MAX

if TYPE_CHECKING:
    from server.edge.requests import Requests
    from server.runtime.connection import Connection

log = logging.getLogger("castell.challenges")

#: A turn timer of this many seconds or more makes a correspondence game, whose challenge
#: waits this long too (a day).
CORRESPONDENCE = 24 * 3600
#: How long the seats of a challenge's game are held for its players (seconds): longer than
#: a quick match's, as a challenger may be finishing another game when it is accepted.
HELD = 120.0
#: The window of ``--challenges-per-hour`` (seconds).
WINDOW = 3600.0


def not_found() -> CastellError:
    return CastellError("no such challenge is open for you", code="challenge_not_found")


class Challenges:
    """The challenges of one server (or node). See the module docstring."""

    def __init__(self, requests: Requests) -> None:
        self.requests = requests
        self.config = requests.config
        self.lobby = requests.lobby
        self.store = requests.lobby.store
        self.accounts = requests.accounts
        self.directory = requests.directory
        self.reservations = Reservations(self.lobby, max(HELD, self.config.match_reserve))
        #: The expiry armed on this node, by challenge id: a deadline in the lobby's
        #: scheduler (no task while a challenge waits: a correspondence game's waits a day).
        self.expiries: dict[str, Cancellable] = {}
        #: The challenges whose expiry came, being ended.
        self._ending: set[asyncio.Task[None]] = set()

    # -- the seams other features plug into ---------------------------------------------------

    async def deliver(self, account: str, push: Any) -> None:
        """Tell ``account`` of a challenge (``challenge``, ``challenge_ended``, ``matched``):
        live, on every connection it has on any node; a challenge made to it is also kept
        in its inbox (server.features.inbox, quietly: the live push says it), so that an
        account that was away finds it when it comes back."""
        await self.accounts.deliver(account, push)
        if isinstance(push, m.ChallengePush):
            timer = f", {push.turn_seconds} s a turn" if push.turn_seconds else ""
            rated = " rated" if push.rated else ""
            await self.requests.inbox.notify(
                account, "challenge",
                f"{push.from_} challenges you to a{rated} game of {push.seats} seats{timer}: "
                f"`accept` or `decline` it", from_=push.from_, ref=push.challenge,
                push=False)

    async def refused_by(self, challenged: str, challenger: str) -> bool:
        """Whether account ``challenged`` keeps account ``challenger``'s challenges away:
        it blocks it (server.features.social). A blocked challenger is answered as if the
        name were nobody's."""
        return await self.requests.social.blocks(challenged, challenger)

    # -- the life of the feature --------------------------------------------------------------

    def now(self) -> float:
        return self.lobby.clock()

    @property
    def scheduler(self) -> Scheduler:
        return self.lobby.scheduler

    async def start(self) -> None:
        """Arm the expiry of every challenge the store holds open."""
        for challenge in await self.store.open_challenges():
            self._arm(challenge)

    async def close(self) -> None:
        for deadline in self.expiries.values():
            deadline.cancel()
        self.expiries.clear()
        tasks = list(self._ending)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        await self.reservations.close()

    def _arm(self, challenge: ChallengeRecord) -> None:
        if challenge.id in self.expiries:
            return
        self.expiries[challenge.id] = self.scheduler.call_later(
            max(0.0, challenge.expires_at - self.now()), self._expired, challenge.id)

    def _expired(self, challenge: str) -> None:
        """The expiry of ``challenge`` came: it is ended, in a task of its own."""
        self.expiries.pop(challenge, None)
        task = asyncio.get_running_loop().create_task(self._expire(challenge))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def _expire(self, challenge: str) -> None:
        try:
            await self._end(challenge, "expired", None)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("challenge %s: its expiry failed", challenge)

    # -- the requests ---------------------------------------------------------------------------

    async def challenge(self, conn: Connection, msg: m.ChallengeRequest) -> m.ChallengeSent:
        """``challenge``: stored, each named player told; the reply says its id."""
        account = self._account(conn)
        if self.requests.draining:
            raise CastellError("this server is about to stop for maintenance: challenge "
                               "in a few minutes", code="draining")
        if msg.seats < len(msg.to) + 1:
            raise ProtocolError(f"{len(msg.to)} player(s) and you need {len(msg.to) + 1} "
                                "seats at least", code="invalid_field", field="seats")
        if msg.rated and msg.seats != len(msg.to) + 1:
            raise CastellError("bots never sit in a rated game: name a player for every "
                               "seat", code="rated_room")
        now = self.now()
        if await self.store.challenges_since(account, now - WINDOW) \
                >= self.config.challenges_per_hour:
            raise CastellError("you have made too many challenges this hour: wait a while",
                               code="rate_limited")
        to_accounts: list[str] = []
        to_names: list[str] = []
        for name in msg.to:
            found = await self.accounts.owner(name)
            if found is None or found.account == account or found.account in to_accounts \
                    or await self.refused_by(found.account, account):
                # A player who blocks the challenger is answered as one who does not exist.
                why = "that is you" if found is not None and found.account == account else \
                    "named twice" if found is not None and found.account in to_accounts else \
                    "no account has that name"
                raise CastellError(f"{name!r}: {why}", code="not_found")
            to_accounts.append(found.account)
            to_names.append(found.name)
        turn = msg.turn_seconds
        if msg.rated and turn is None:
            turn = self.config.rated_turn_seconds
        wait = CORRESPONDENCE if turn is not None and turn >= CORRESPONDENCE \
            else self.config.challenge_expiry
        record = ChallengeRecord("c" + secrets.token_hex(8), account, conn.name or "?",
                                 tuple(to_accounts), tuple(to_names), msg.seats, msg.variant,
                                 turn, msg.rated, now, now + wait)
        await self.store.put_challenge(record)
        self._arm(record)
        log.info("challenge %s: %s challenges %s", record.id, record.from_name,
                 ", ".join(to_names))
        push = m.ChallengePush(challenge=record.id, from_=record.from_name, to=record.to_names,
                               seats=record.seats, variant=record.variant, rated=record.rated,
                               expires=record.expires_at, turn_seconds=record.turn_seconds)
        for target in to_accounts:
            await self.deliver(target, push)
        return m.ChallengeSent(re=msg.id, challenge=record.id, expires=record.expires_at)

    async def accept(self, conn: Connection, challenge: str) -> ChallengeRecord | None:
        """``accept``: the acceptance stored; the challenge, when it was the last one (and
        so ended here: :meth:`make` its game), else None."""
        account = self._account(conn)
        found = await self.store.open_challenge(challenge)
        if found is None or account not in found.to_accounts:
            raise not_found()
        if self.now() >= found.expires_at:
            await self._end(challenge, "expired", None)
            raise not_found()
        accepted = await self.store.accept_challenge(challenge, account)
        if accepted is None:
            raise not_found()
        if not set(found.to_accounts) <= set(accepted.accepted):
            return None
        ended = await self.store.end_challenge(challenge, "accepted", self.now())
        if ended is None:
            raise not_found()
        self._disarm(challenge)
        return ended

    async def make(self, challenge: ChallengeRecord) -> None:
        """The game of an accepted challenge: made, seated, started; its players told."""
        c = challenge
        title = f"{c.from_name} vs {', '.join(c.to_names)}"
        if len(title) > ROOM_NAME_MAX:
            title = title[:ROOM_NAME_MAX - 1] + "…"
        runner = await self.directory.create(title, c.seats, c.variant, c.turn_seconds, True,
                                             rated=c.rated)
        players = [(c.from_name, c.from_account), *zip(c.to_names, c.to_accounts, strict=True)]
        names = unique_names([name for name, _ in players])
        tokens = [secrets.token_urlsafe(24) for _ in players]
        await runner.seat_matched([(n, t, a) for n, t, (_, a)
                                   in zip(names, tokens, players, strict=True)])
        self.reservations.hold(runner, len(players))
        log.info("room %s: the game of challenge %s", runner.id, c.id)
        url = self.directory.url or None
        for seat, ((_, account), token) in enumerate(zip(players, tokens, strict=True)):
            await self.deliver(account, m.MatchedPush(room=runner.id, seat=seat, token=token,
                                                      url=url))
        await self._tell_ended(c, "accepted", None, runner.id)

    async def decline(self, conn: Connection, challenge: str) -> None:
        account = self._account(conn)
        found = await self.store.open_challenge(challenge)
        if found is None or account not in found.to_accounts:
            raise not_found()
        if not await self._end(challenge, "declined", conn.name):
            raise not_found()

    async def cancel(self, conn: Connection, challenge: str) -> None:
        account = self._account(conn)
        found = await self.store.open_challenge(challenge)
        if found is None or found.from_account != account:
            raise not_found()
        if not await self._end(challenge, "cancelled", None):
            raise not_found()

    # -- the parts ------------------------------------------------------------------------------

    @staticmethod
    def _account(conn: Connection) -> str:
        if conn.account is None:
            raise CastellError("challenges are between accounts: say hello with a key",
                               code="not_signed_in")
        return conn.account

    def _disarm(self, challenge: str) -> None:
        deadline = self.expiries.pop(challenge, None)
        if deadline is not None:
            deadline.cancel()

    async def _end(self, challenge: str, why: str, by: str | None) -> bool:
        """End ``challenge`` for ``why`` unless it has ended; whether this call ended it
        (then everyone is told)."""
        ended = await self.store.end_challenge(challenge, why, self.now())
        if ended is None:
            return False
        self._disarm(challenge)
        log.info("challenge %s: %s", challenge, why)
        await self._tell_ended(ended, why, by, None)
        return True

    async def _tell_ended(self, c: ChallengeRecord, why: str, by: str | None,
                          room: str | None) -> None:
        push = m.ChallengeEndedPush(challenge=c.id, why=why, by=by, room=room)
        for account in (c.from_account, *c.to_accounts):
            await self.deliver(account, push)
