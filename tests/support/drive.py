"""Drive a sans-I/O room by value: feed it inputs, get back what it asked of the world.

``drive(room, inputs, store="ok" | "fail" | "lost")`` plays the driver's part
(:mod:`server.runtime.runner`) without sockets, loop or store: each input is one call of the room
(:func:`do`); a change it proposes is "stored" as ``store`` says, then committed or aborted as
the runner would:

* ``ok``: every write is stored, the change committed;
* ``fail``: the store refuses: no write stands; a forced change is committed all the same
  (not stored), any other aborted;
* ``lost``: the writes are stored but their answer is lost; a read-back finds the version
  when the change stores one (committed), otherwise as ``fail``, except that its writes stand.

What comes back (:class:`Driven`): the messages sent (decoded, to whom), the views pushed,
the writes that stand, the other effects (timers, bots, closes), the refusals (the error
each refused input raised), and the room at the end (a reload replaces it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import attrs
import msgpack

from server.core.room import Change, Push, Room, Send, Write
from shared.errors import CastellError

Store = Literal["ok", "fail", "lost"]


@attrs.frozen
class Input:
    """One input of a room: the room's method ``name`` called with these arguments."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = attrs.Factory(dict)


def do(name: str, /, *args: Any, **kwargs: Any) -> Input:
    """The input ``room.name(*args, **kwargs)``."""
    return Input(name, args, kwargs)


@attrs.frozen
class Pushed:
    """A view pushed: to whom, at which version, with which events (decoded), whole."""

    to: tuple[Any, ...]
    version: int
    events: tuple[Any, ...]
    view: dict[str, Any]


@attrs.define
class Driven:
    room: Room[Any]
    sends: list[tuple[Any, dict[str, Any]]] = attrs.Factory(list)
    pushes: list[Pushed] = attrs.Factory(list)
    writes: list[Write] = attrs.Factory(list)
    effects: list[Any] = attrs.Factory(list)
    refused: list[CastellError] = attrs.Factory(list)
    #: What each input returned that is neither a change nor effects (a chat write, ...).
    returned: list[Any] = attrs.Factory(list)

    def to(self, member: Any) -> list[dict[str, Any]]:
        """The messages ``member`` was sent, decoded, in order (pushes included)."""
        return [msg for who, msg in self.sends if who == member]

    def of(self, kind: type) -> list[Any]:
        """The effects of one kind (``ArmTimer``, ``WakeBot``, ``Close``, ...), in order."""
        return [e for e in self.effects if isinstance(e, kind)]


def drive(room: Room[Any], inputs: Iterable[Input], store: Store = "ok", *,
          now: float = 1_000_000.0) -> Driven:
    """Feed ``room`` the ``inputs`` in order, the store behaving as ``store`` says."""
    out = Driven(room)
    for item in inputs:
        try:
            result = getattr(out.room, item.name)(*item.args, **item.kwargs)
        except CastellError as exc:  # a refusal: nothing changed, nothing written
            out.refused.append(exc)
            continue
        if isinstance(result, Change):
            _settle(out, result, store, now)
        elif isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], Room):
            out.room, effects = result  # a reload: the room as the store holds it
            _record(out, effects)
        elif isinstance(result, list):
            _record(out, result)
        elif result is not None:
            out.returned.append(result)
    return out


def _settle(out: Driven, change: Change[Any], store: Store, now: float) -> None:
    room = out.room
    if store == "ok":
        out.writes.extend(change.writes)
        _record(out, room.commit(change, now=now))
        return
    if store == "lost":
        out.writes.extend(change.writes)
        if room.stores_version(change):  # the read-back finds the version stored
            _record(out, room.commit(change, now=now))
            return
    if change.forced:
        _record(out, room.commit(change, now=now, stored=False))
    else:
        _record(out, room.abort(change))


def _record(out: Driven, effects: Iterable[Any]) -> None:
    for effect in effects:
        out.effects.append(effect)
        if isinstance(effect, Push):
            msg = msgpack.unpackb(effect.data)
            out.pushes.append(Pushed(effect.to, effect.shown.version,
                                     tuple(msg.get("events", ())), effect.shown.view))
            out.sends.extend((member, msg) for member in effect.to)
        elif isinstance(effect, Send):
            msg = msgpack.unpackb(effect.data)
            out.sends.extend((member, msg) for member in effect.to)
