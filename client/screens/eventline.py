"""The event lines: what the last actions did, in a line or two above the status line.

The full-screen client keeps the game's log (:attr:`client.control.controller.Controller.log`).
:func:`entries` reads its tail into *entries*, oldest first:

- one per turn, each of its actions in a few words (``Pau: moved to tar, trained balance,
  recruited 7 4, built 7 7/6 6/5``); the player's own turn is ``You: …`` and grows with each
  action, so that every action typed is echoed; an action taken back with ``undo`` drops out,
  ``took back: move to alt`` said instead;
- one per round's festivals, their results in one line (``Festival at Valls (tar), size 6:
  Cai 9 trophy + size token, Anna 8 medal``);
- one per chat line, the server's word (a host's announcement) among them;
- one per player coming or going, the start and the end of the game.

:func:`pick` chooses those that fit in the lines the screen has for them: the newest always,
then the *pinned* ones — the last festivals' results and the server's word, kept until the
player's next action (a spectator's: until the next turn ends) — then older ones, an entry
too long for its lines cut with ``…``. A chat line left out, not yet read, is counted in a
marker at the end of the first line (``chat: 2 unread (F2)``); F2 (``log``) shows it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs
from rich.console import Console
from rich.text import Text

from client.screens import describe as d
from client.screens.describe import Event, Part
from client.screens.render import seat_style
from client.screens.sanitize import safe
from shared.view import View

#: How many of the log's latest events are read: a few turns, more than any screen shows.
TAIL: Final = 150
#: The marker of chat lines the event lines leave out.
UNREAD: Final = "chat: {n} unread (F2)"
#: Entries kept until the player's next action.
PINNED_KINDS: Final = ("festival", "notice")


@attrs.frozen
class Entry:
    """One event line's worth (it may wrap): ``kind`` is ``turn``, ``festival``, ``chat``,
    ``notice`` (the server's word) or ``other``; ``last`` is the index, in the events
    read, of its newest event; ``title``, a festival's first line in the log."""

    parts: tuple[Part, ...]
    kind: str
    last: int
    seat: int | None = None
    name: str | None = None
    pinned: bool = False
    title: str | None = None


@attrs.define
class _Turn:
    """A turn being read: its seat and its actions in words, ``(action kind, words)``."""

    seat: Any
    last: int
    items: list[tuple[str, str]] = attrs.Factory(list)
    ended: bool = False
    timed_out: bool = False


def _sizes(sizes: Any) -> str:
    return " ".join(safe(s) for s in sizes or ())


def action_brief(action: Mapping[str, Any]) -> str:
    """An action in a few words, for its turn's line: ``moved to tar``, ``recruited 7 4``,
    ``trained: recruit a 4``, ``special: move to tar``, ``built 7 7/6 6/5``."""
    kind = action.get("kind")
    if kind == "move":
        return f"moved to {d.region_label(action.get('region'))}"
    if kind == "recruit":
        return f"recruited {_sizes(action.get('sizes'))}"
    if kind == "train":
        return f"trained: {d.effect_words(action)}" if action.get("effect") else "trained"
    if kind == "special":
        return f"special: {d.effect_words(action)}"
    if kind == "build":
        return "built " + "/".join(_sizes(level) for level in action.get("levels") or ())
    if kind == "dismantle":
        return "dismantled the tower"
    return f"did {safe(kind)}"


def _turn_entry(view: View, turn: _Turn, me: int | None) -> Entry:
    words = [w for _, w in turn.items] or ["passed"]
    name = "You" if turn.seat is not None and turn.seat == me else d.short_name(view, turn.seat)
    return Entry((Part(name, turn.seat), Part(": " + ", ".join(words))), "turn", turn.last,
                 turn.seat)


def _festival_parts(view: View, event: Event) -> list[Part]:
    """``Festival at Valls (tar), size 6: Cai 9 trophy + size token, Anna 8 medal``."""
    results = event.get("results") or ()
    parts = [Part(d.festival_title(event) + (": " if results else ": nobody took part"))]
    for i, result in enumerate(results):
        seat = result.get("seat")
        parts.append(Part(", " if i else ""))
        parts.append(Part(d.short_name(view, seat), seat))
        parts.extend(d.festival_result_words(view, result)[1:])
    return parts


def entries(view: View, events: Sequence[Event], me: int | None) -> list[Entry]:
    """The events (the log, oldest first) as entries, oldest first (by their newest event);
    indices count from the start of ``events``, only the last :data:`TAIL` are read."""
    start = max(0, len(events) - TAIL)
    out: list[Entry] = []
    turn: _Turn | None = None

    def close() -> None:
        nonlocal turn
        if turn is not None and (turn.items or turn.ended):
            out.append(_turn_entry(view, turn, me))
        turn = None

    def turn_of(seat: Any, i: int) -> _Turn:
        nonlocal turn
        if turn is None or turn.seat != seat or turn.ended:
            close()
            turn = _Turn(seat, i)
        turn.last = i
        return turn

    for i in range(start, len(events)):
        event = events[i]
        kind, seat = event.get("kind"), event.get("seat")
        if kind == "action":
            action = event.get("action") or {}
            t = turn_of(seat, i)
            if action.get("kind") == "end_turn":
                t.ended = True
                if t.timed_out:
                    t.items.append(("timeout", "ran out of time"))
            else:
                words = action_brief(action)
                # where a recruit happened, unless the line says the move that led there
                moved = any(w.startswith("moved to") or "move to" in w for _, w in t.items)
                if action.get("kind") == "recruit" and event.get("at") and not moved:
                    words += f" in {d.region_label(event.get('at'))}"
                t.items.append((str(action.get("kind")), words))
        elif kind == "trained":
            if event.get("tile") == "special":  # the action's own words say which effect
                continue
            t = turn_of(seat, i)
            skill = safe(event.get("tile"))
            if t.items and t.items[-1] == ("train", "trained"):
                t.items[-1] = ("train", f"trained {skill}")
            else:
                t.items.append(("trained", f"raised {skill}"))
        elif kind == "performed":
            tokens = event.get("tokens") or 0
            extra = f" (+{tokens} token{'s' if tokens != 1 else ''})" if tokens else ""
            turn_of(seat, i).items.append(("performed",
                                           f"completed {safe(event.get('tile'))}{extra}"))
        elif kind == "undone":
            t = turn_of(seat, i)
            action = event.get("action") or {}
            taken = [j for j, (k, _) in enumerate(t.items) if k == action.get("kind")]
            if taken:  # the action is no longer the turn's; the undo is said in its place
                del t.items[taken[-1]]
            t.items.append(("undone", d.undone_words(action)))
        elif kind == "timeout":
            turn_of(seat, i).timed_out = True
        elif kind == "turn":
            close()
            turn = _Turn(seat, i)
        elif kind == "round":
            close()
        elif kind == "festival":
            close()
            parts = _festival_parts(view, event)
            before = out[-1] if out else None
            if before is not None and before.kind == "festival" and before.last == i - 1:
                out[-1] = attrs.evolve(before, parts=(*before.parts, Part(" · "), *parts),
                                       last=i)
            else:
                out.append(Entry(tuple(parts), "festival", i, title=d.festival_title(event)))
        elif kind == "chat":
            notice = seat is None and event.get("name") == d.NOTICE_NAME
            out.append(Entry(tuple(d.chat_parts(view, event)), "notice" if notice else "chat",
                             i, seat, event.get("name")))
        elif kind in ("refill", "refused"):  # the board shows the one, the status line the other
            continue
        else:
            parts_ = d.event_parts(view, event)
            if parts_ is not None:
                out.append(Entry(tuple(parts_), "other", i, seat))
    close()
    out.sort(key=lambda e: e.last)
    # Pinned until the player's next action (a spectator's: until a turn ends after it).
    acted = max((i for i in range(start, len(events)) if _acts(events[i], me)), default=-1)
    return [attrs.evolve(e, pinned=True) if e.kind in PINNED_KINDS and e.last > acted else e
            for e in out]


def _acts(event: Event, me: int | None) -> bool:
    if event.get("kind") != "action":
        return False
    if me is not None:
        return bool(event.get("seat") == me)
    return (event.get("action") or {}).get("kind") == "end_turn"


def text_of(parts: Sequence[Part]) -> Text:
    """An entry's parts as a line: names in their seat's colour."""
    text = Text()
    for part in parts:
        text.append(part.text, style=f"bold {seat_style(part.seat)}"
                    if part.seat is not None else "")
    return text


def _cut(line: Text, width: int) -> Text:
    """The last line kept of an entry cut short, ending with ``…``."""
    line = line.copy()
    line.rstrip()
    if line.cell_len > width - 1:
        line.truncate(width - 1)
    line.append("…", style="dim")
    return line


@attrs.frozen
class Area:
    """The event lines as drawn, and the log indices of the unread chat lines left out."""

    lines: list[Text]
    hidden: list[int]


def pick(found: Sequence[Entry], width: int, lines: int, *, unread_from: int = 0,
         me: int | None = None, own_name: str | None = None) -> Area:
    """The entries that fit in ``lines`` lines of ``width`` cells (see the module docstring).
    A chat line counts as unread from the log index ``unread_from`` on, unless the player
    said it (seat ``me``, or for a spectator the name ``own_name``)."""
    if lines <= 0:
        return Area([], [])
    console = Console(width=width, file=io.StringIO(), color_system=None)
    wrapped = [text_of(e.parts).wrap(console, width) for e in found]
    chosen: dict[int, int] = {}
    budget = lines
    if found:
        newest = len(found) - 1
        pinned = [i for i in range(newest) if found[i].pinned]
        chosen[newest] = min(len(wrapped[newest]), max(1, budget - len(pinned)))
        budget -= chosen[newest]
        for n, i in enumerate(reversed(pinned)):
            if budget <= 0:
                break
            left = len(pinned) - n - 1  # pinned entries still to place, one line each
            chosen[i] = min(len(wrapped[i]), max(1, budget - left))
            budget -= chosen[i]
        for i in range(newest - 1, -1, -1):
            if budget <= 0:
                break
            if i not in chosen:
                chosen[i] = min(len(wrapped[i]), budget)
                budget -= chosen[i]
    out: list[Text] = []
    for i in sorted(chosen):
        kept = [line.copy() for line in wrapped[i][:chosen[i]]]
        for line in kept:
            line.rstrip()
        if chosen[i] < len(wrapped[i]):
            kept[-1] = _cut(kept[-1], width)
        out.extend(kept)
    hidden = [e.last for i, e in enumerate(found)
              if e.kind == "chat" and e.last >= unread_from
              and not (me is not None and e.seat == me)
              and not (me is None and e.seat is None and own_name and e.name == own_name)
              and chosen.get(i, 0) < len(wrapped[i])]
    if hidden:
        mark = Text(UNREAD.format(n=len(hidden)), style="bold reverse")
        room = width - mark.cell_len - 1
        first = out[0].copy() if out else Text()
        if first.cell_len > room:
            first = _cut(first, room)
        first.append(" " * (room - first.cell_len + 1))
        first.append_text(mark)
        out[:1] = [first]
    return Area(out, hidden)
