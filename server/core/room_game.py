"""A room's game: its state and log of actions, its turn timer (§4) and the dice of its bots.
Pure rules via :mod:`shared.engine`; it decides nothing about seats, versions or views.

A seat whose player resigned (docs/rules.md §10, "Resigning") is played out as the room's
rules say: where bots may sit (an unrated room) a bot of the ``normal`` level plays its turns
(:attr:`RoomGame.stand_in`); in a rated room, which seats no bot, each of its turns ends at
once, as if its timer had run out."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Sequence
from typing import Any

from server.core.room_effects import ArmTimer, BotTurn, CancelTimer, TurnKey, WakeBot
from shared import engine, replay
from shared.actions import Recorded
from shared.state import GameState
from shared.view import RoomStatus

log = logging.getLogger("castell.room")


class RoomGame:
    """The game of one room (None before the start) and its timing."""

    def __init__(self, room_id: str, variant: str, seed: int, turn_seconds: int | None,
                 seats: Sequence[Any], *, bot_delay: float = 0.0,
                 time_scale: float = 1.0, stand_in: str | None = "normal") -> None:
        self.room_id = room_id
        #: The room's seats (read only: who is a bot, see :mod:`server.core.room_seats`).
        self.seats = seats
        self.variant = variant
        self.seed = seed
        self.turn_seconds = turn_seconds
        self.bot_delay = bot_delay
        self.time_scale = time_scale
        self.state: GameState | None = None
        self.log: list[tuple[int, Recorded]] = []
        self.deadline: float | None = None
        self.finished_at: float | None = None
        self.turn_key: TurnKey | None = None
        #: The level of the bot that plays a resigned seat's turns; None: none may (a rated
        #: room), the turns end at once instead.
        self.stand_in = stand_in
        #: The turn whose end at once was asked for (a resigned seat's, without a stand-in).
        self._at_once: TurnKey | None = None
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

    def replay(self, names: list[str], actions: Iterable[tuple[int, Recorded]]) -> None:
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
        if seat is None:
            return None
        level = seat.bot
        if level is None and state.turn in state.resigned:
            level = self.stand_in  # §10: a resigned seat's turns, played for it
        if level is None:
            return None
        if self._bot_rng is None:
            self._bot_rng = random.Random(self.seed ^ 0x5EED)
        return BotTurn(seat.index, level, state, self._bot_rng)

    def bot_effects(self) -> list[WakeBot]:
        return [WakeBot(self.bot_delay)] if self.bot_turn() is not None else []

    def turn_effects(self, now: float) -> list[ArmTimer | CancelTimer]:
        """After a game change: a new turn gets a fresh timer (§4); a finished game none."""
        state = self.state
        if state is None:
            return []
        key = (state.round, state.turn)
        if key == self.turn_key:
            # The seat to play resigned during its turn: without a stand-in, it ends now.
            if self.ends_at_once(state) and self._at_once != key:
                return self.arm(key, now)
            return []
        self.turn_key = key
        if state.over:
            self.deadline = None
            self.finished_at = now
            log.info("room %s: game over, winners %s", self.room_id, state.winners)
            return [CancelTimer()]
        return self.arm(key, now)

    def ends_at_once(self, state: GameState) -> bool:
        """§10: whether the turn at hand is a resigned seat's that no bot plays."""
        return (self.stand_in is None and not state.over and state.turn is not None
                and state.turn in state.resigned)

    def arm(self, key: TurnKey, now: float) -> list[ArmTimer | CancelTimer]:
        """§4: a fresh full turn on the room's timer, if it has one (shown as ``deadline``);
        §10: a resigned seat's turn that no bot plays ends at once, as a timed-out turn."""
        state = self.state
        if state is not None and self.ends_at_once(state):
            self._at_once = key
            self.deadline = now
            return [ArmTimer(key, 0.0)]
        if self.turn_seconds is None:
            return [CancelTimer()]
        seconds = self.turn_seconds * self.time_scale
        self.deadline = now + seconds
        return [ArmTimer(key, seconds)]

    def resume_play(self, *, now: float, deadline: float | None = None
                    ) -> list[ArmTimer | CancelTimer | WakeBot]:
        """After a restore: the turn timer, and the bots woken. §4: the turn at hand gets a
        fresh full turn (a restart, a takeover), unless ``deadline`` is the one it already
        had when the room left memory with nobody in it: then it runs out at that time, at
        once if that has passed (an absent player's turn is not lengthened by the game
        being unloaded and loaded back). A bot's turn is fresh either way: its bot plays."""
        state = self.state
        if state is None or state.over:
            return []
        self.turn_key = (state.round, state.turn)
        # (a bot's turn is the bot's to play: it would have, had the game stayed in memory)
        if deadline is not None and self.turn_seconds is not None \
                and not self.ends_at_once(state) and self.bot_turn() is None:
            self.deadline = deadline
            return [ArmTimer(self.turn_key, max(0.0, deadline - now)), *self.bot_effects()]
        return [*self.arm(self.turn_key, now), *self.bot_effects()]
