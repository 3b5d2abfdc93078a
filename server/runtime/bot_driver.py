"""A room's bots, driven: who plays, when, what they chose, and their wait after a refusal.

A :class:`BotDriver` plays bot turns for one room until a person is to act or the game is
over, as one task (woken again by the room's ``WakeBot`` effect once it ended). A bot thinks
with the room unlocked (a hard bot may take seconds, and the room's people may still chat or
watch meanwhile); its choice is played only if the game has not moved on. A move the store
refused is tried again after the room's backoff, cut short as soon as the store takes a write
again (:mod:`server.runtime.retries`). A hard bot's plan for the rest of its turn is kept by seat
and
played while the game is where the plan expects it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import TYPE_CHECKING

import attrs

from server.runtime.runner_writes import StoreUnavailable
from server.runtime.thinking import Thinkers, ThinkingFailed
from shared import bots
from shared.actions import EndTurn

if TYPE_CHECKING:
    from server.core.room import BotTurn
    from server.runtime.timers import Host, TurnTimer

log = logging.getLogger("castell.room")


class BotDriver:
    """One room's bots. See the module docstring."""

    def __init__(self, host: Host, timer: TurnTimer, thinkers: Thinkers,
                 think: float) -> None:
        self.host = host
        self.timer = timer
        #: Where the bots think, and for how long a hard bot may (seconds).
        self.thinkers = thinkers
        self.think = think
        self._task: asyncio.Task[None] | None = None
        self._plans: dict[int, bots.Decision] = {}
        #: Set to cut short the wait before a retry (the store took a write).
        self._retry: asyncio.Event | None = None

    def wake(self, delay: float) -> None:
        """Play the bots' turns from ``delay`` seconds on (unless they are playing)."""
        if self.host.closed or (self._task is not None and not self._task.done()):
            return  # the bots' task is playing already: it goes on by itself
        self._task = asyncio.get_running_loop().create_task(self._play(delay))

    def store_back(self) -> None:
        """The store took a write: a move waiting on its backoff is tried again now."""
        if self._retry is not None:
            self._retry.set()

    def stop(self) -> None:
        """The room is let go of: the bots stop, and a bot still thinking for it too."""
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        self.thinkers.cancel(self.host)

    async def _play(self, delay: float) -> None:
        host = self.host
        retry = False
        while True:
            await (self._back_off(delay) if retry else host.scheduler.sleep(delay))
            async with host.lock:
                try:
                    await host.settle()
                except StoreUnavailable:
                    delay, retry = host.room.retry_delay, True
                    continue
                turn = host.room.bot_turn()
                if turn is None:
                    self._plans.clear()
                    return
                seed = turn.rng.getrandbits(63)
            decision = await self._choose(turn, seed)
            async with host.lock:
                if host.closed:
                    return
                change = host.room.bot_chose(turn, decision.action, now=host.clock())
                stored = change is None or await host.save(change)
                if change is not None and stored and decision.rest:
                    self._plans[turn.seat] = attrs.evolve(decision, expect=host.room.state)
                else:
                    self._plans.pop(turn.seat, None)
            delay = host.room.bot_delay if stored else host.room.retry_delay
            retry = not stored

    async def _back_off(self, delay: float) -> None:
        """The wait before a retry of a move the store refused: ``delay``, or until a write
        is stored again (:meth:`store_back`), whichever comes first."""
        woken = self._retry = asyncio.Event()
        self.host.retries.wait(self.host)
        try:
            await self.host.scheduler.wait(woken, delay)
        finally:
            self._retry = None
            if self.timer.retrying is None:
                self.host.retries.forget(self.host)

    async def _choose(self, turn: BotTurn, seed: int) -> bots.Decision:
        """The bot's choice: the next step of the turn it planned, or a decision made in a
        worker process (:mod:`server.runtime.thinking`); the ``normal`` choice when that fails."""
        planned = bots.follow(self._plans.get(turn.seat), turn.state, turn.seat)
        if planned is not None:
            return planned
        room = self.host.room
        think = self.think if bots.level_name(turn.level) == "hard" else None
        try:
            thinking = time.perf_counter()
            action, rest = await self.thinkers.decide(turn.state, turn.seat, turn.level, seed,
                                                      think=think, owner=self.host,
                                                      share=room.host_address)
            metrics = self.host.metrics
            if metrics is not None:
                metrics.bot_seconds.labels(level=bots.level_name(turn.level)).observe(
                    time.perf_counter() - thinking)
            return bots.Decision(action, rest)
        except ThinkingFailed as exc:
            log.warning("room %s: the %s bot in seat %d had no answer (%s); it plays the "
                        "normal choice", room.id, turn.level, turn.seat, exc)
        except Exception:
            log.exception("room %s: the bot in seat %d failed to choose; it plays the normal "
                          "choice", room.id, turn.seat)
        try:
            return await asyncio.to_thread(bots.decide, turn.state, turn.seat, "normal",
                                           random.Random(seed))
        except Exception:
            log.exception("room %s: the normal choice failed too; the turn of seat %d is "
                          "ended", room.id, turn.seat)
            return bots.Decision(EndTurn())
