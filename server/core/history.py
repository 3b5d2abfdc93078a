"""A room's history: every event of its game since the start, and its chat, by version.

What the ``history`` request answers (docs/protocol.md). The history is derived from what the
store holds, never from memory alone, so it survives a restart and a cluster takeover: a game
is its seed plus its stored actions, and replaying the actions with :mod:`shared.engine`
gives back each action's events at the version stored with it. What the actions cannot give
is stored beside them: the version the game started at, which actions the turn timer played
(their events begin with ``timeout``), and the chat lines (``chat`` events, at the room's
version when they were said).

The events of seats filling, players leaving, dropping and coming back (``joined``, ``left``,
``connected``, ``disconnected``) are not part of it: they say nothing of the game, and the
view shows who is there now.

:class:`History` holds one room's entries in version order; :func:`derive` builds it from the
store's records, and a runner keeps it up to date with :meth:`History.add` as changes commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from server.store.base import ChatRecord, GameRecord
from shared import engine
from shared import events as ev
from shared.codec import event_to_wire, unpack_action

#: The room events a history leaves out (see the module docstring).
LEFT_OUT = frozenset({ev.PlayerJoined.KIND, ev.PlayerLeft.KIND, ev.PlayerConnected.KIND,
                      ev.PlayerDisconnected.KIND})


@attrs.define
class Entry:
    """What happened at one version of a room: the events of the change to it, then the chat
    lines said while the room was at it."""

    version: int
    events: list[dict[str, Any]] = attrs.Factory(list)


def chat_event(seat: int | None, name: str, text: str) -> dict[str, Any]:
    """A chat line as an event of a history (kind ``chat``)."""
    return event_to_wire(ev.ChatSaid(seat, name, text))


@attrs.define
class History:
    """One room's history entries, oldest first, one per version that has events."""

    entries: list[Entry] = attrs.Factory(list)
    #: How many chat lines it holds (the store keeps only so many: see :meth:`add_chat`).
    chat_lines: int = 0

    def add(self, version: int, events: Iterable[Any]) -> None:
        """The events of the change that took the room to ``version`` (engine or room events
        or wire maps); those :data:`LEFT_OUT` are dropped."""
        kept = [wire for wire in map(event_to_wire, events) if wire["kind"] not in LEFT_OUT]
        if kept:
            self._at(version).events.extend(kept)

    def add_chat(self, version: int, seat: int | None, name: str, text: str) -> None:
        """A chat line said at ``version``."""
        self._at(version).events.append(chat_event(seat, name, text))
        self.chat_lines += 1

    def _at(self, version: int) -> Entry:
        if self.entries and self.entries[-1].version == version:
            return self.entries[-1]
        if self.entries and self.entries[-1].version > version:
            raise ValueError(f"version {version} comes before {self.entries[-1].version}")
        entry = Entry(version)
        self.entries.append(entry)
        return entry

    def page(self, before: int | None, limit: int) -> list[Entry]:
        """The last ``limit`` entries with versions below ``before`` (all: None), oldest
        first."""
        entries = self.entries
        if before is not None:
            entries = [entry for entry in entries if entry.version < before]
        return entries[-limit:] if limit > 0 else []


def derive(record: GameRecord, chat: Sequence[ChatRecord]) -> History:
    """A room's history from its stored records: its game replayed from the seed, each
    action's events at the version stored with it, and its chat lines where they were said."""
    history = History()
    game: list[tuple[int, list[Any]]] = []
    room = record.room
    if room.started_version is not None or record.actions or room.status != "waiting":
        names = [seat.name for seat in record.seats]
        state = engine.new_game(names, room.variant, room.seed)
        assert state.turn is not None
        # A game started before schema 3 has no started_version: just before its first
        # action (or at the room's version when it has none).
        started = room.started_version
        if started is None:
            started = record.actions[0].version - 1 if record.actions else room.version
        game.append((started, [ev.GameStarted(), ev.RoundStarted(1, state.first),
                               ev.TurnStarted(state.turn)]))
        for stored in record.actions:
            state, events = engine.apply(state, stored.seat, unpack_action(stored.action))
            timed = [ev.TurnTimedOut(stored.seat)] if stored.timed_out else []
            game.append((stored.version, [*timed, *events]))
    lines = sorted(chat, key=lambda line: line.version)  # stable: said order within one
    at = 0
    for version, events in game:
        while at < len(lines) and lines[at].version < version:
            line = lines[at]
            history.add_chat(line.version, line.seat, line.name, line.text)
            at += 1
        history.add(version, events)
    for line in lines[at:]:
        history.add_chat(line.version, line.seat, line.name, line.text)
    return history
