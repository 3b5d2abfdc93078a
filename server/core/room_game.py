"""A room's game: its state and log of actions, its turn timer (§4) and the dice of its bots.
Pure rules via :mod:`shared.engine`; it decides nothing about seats, versions or views."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Sequence
from typing import Any

from server.core.room_effects import ArmTimer, BotTurn, CancelTimer, TurnKey, WakeBot
from shared import engine, replay
from shared.actions import Action
from shared.state import GameState
from shared.view import RoomStatus

log = logging.getLogger("castell.room")


class RoomGame:
    """The game of one room (None before the start) and its timing."""

    def __init__(self, room_id: str, variant: str, seed: int, turn_seconds: int | None,
                 seats: Sequence[Any], *, bot_delay: float = 0.0,
                 time_scale: float = 1.0) -> None:
        self.room_id = room_id
        #: The room's seats (read only: who is a bot, see :mod:`server.core.room_seats`).
        self.seats = seats
        self.variant = variant
        self.seed = seed
        self.turn_seconds = turn_seconds
        self.bot_delay = bot_delay
        self.time_scale = time_scale
        self.state: GameState | None = None
        self.log: list[tuple[int, Action]] = []
        self.deadline: float | None = None
        self.finished_at: float | None = None
        self.turn_key: TurnKey | None = None
        #: The bots' randomness, seeded from the room's seed; made at the first bot turn
        #: (a Mersenne Twister holds 2.5 KiB, and most rooms never have a bot).
        self._bot_rng: random.Random | None = None

    @property
    def status(self) -> RoomStatus:
        if self.state is None:
            return RoomStatus.WAITING
        return RoomStatus.FINISHED if self.state.over else RoomStatus.PLAYING

    @property
    def over(self) -> bool:
        return self.state is not None and self.state.over

    def new(self, names: list[str]) -> GameState:
        """The game of a room seating ``names``, as its seed sets it up."""
        return engine.new_game(names, self.variant, self.seed)

    def replay(self, names: list[str], actions: Iterable[tuple[int, Action]]) -> None:
        """The stored game: set up from the seed, then every stored action applied."""
        self.log.extend(actions)
        state = replay.final_state(names, self.variant, self.seed, self.log)
        self.state = state
        self.turn_key = (state.round, state.turn)

    def bot_turn(self) -> BotTurn | None:
        """The bot whose turn it is, with what it needs to choose; None when a person is to
        act, or no game is on."""
        state = self.state
        if state is None or state.over or state.turn is None:
            return None
        seat = self.seats[state.turn]
        if seat is None or seat.bot is None:
            return None
        if self._bot_rng is None:
            self._bot_rng = random.Random(self.seed ^ 0x5EED)
        return BotTurn(seat.index, seat.bot, state, self._bot_rng)

    def bot_effects(self) -> list[WakeBot]:
        return [WakeBot(self.bot_delay)] if self.bot_turn() is not None else []

    def turn_effects(self, now: float) -> list[ArmTimer | CancelTimer]:
        """After a game change: a new turn gets a fresh timer (§4); a finished game none."""
        state = self.state
        if state is None:
            return []
        key = (state.round, state.turn)
        if key == self.turn_key:
            return []
        self.turn_key = key
        if state.over:
            self.deadline = None
            self.finished_at = now
            log.info("room %s: game over, winners %s", self.room_id, state.winners)
            return [CancelTimer()]
        return self.arm(key, now)

    def arm(self, key: TurnKey, now: float) -> list[ArmTimer | CancelTimer]:
        """§4: a fresh full turn on the room's timer, if it has one (shown as ``deadline``)."""
        if self.turn_seconds is None:
            return [CancelTimer()]
        seconds = self.turn_seconds * self.time_scale
        self.deadline = now + seconds
        return [ArmTimer(key, seconds)]

    def resume_play(self, *, now: float) -> list[ArmTimer | CancelTimer | WakeBot]:
        """After a restore: a fresh full turn on the timer, and the bots woken."""
        state = self.state
        if state is None or state.over:
            return []
        self.turn_key = (state.round, state.turn)
        return [*self.arm(self.turn_key, now), *self.bot_effects()]
