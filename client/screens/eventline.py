"""The event lines: what the last actions did, in a line or two above the status line.

The full-screen client keeps the game's log (:attr:`client.control.controller.Controller.log`).
:func:`entries` reads its tail into *entries*, oldest first:

- one per turn, each of its actions in a few words (``Pau: moved to tar, trained balance,
  recruited 7 4, built 7 7/6 6/5``); the player's own turn is ``You: …`` and grows with each
  action, so that every action typed is echoed; an action taken back with ``undo`` drops out,
  ``took back: move to alt`` said instead;
- one per festival, its results in one line (``Festival at Valls (tar), size 6: Cai 9 trophy
  + size token, Anna 8 medal``);
- one per chat line, the server's word (a host's announcement) among them;
- one per player coming or going, the start and the end of the game.

Turns and festivals have shorter words too (``Pau: to tar, built 7 7/6 6/5, lp05 done``;
``Valls festival (tar) size 6: Cai 9 trophy+size, Anna 8 medal``). :func:`pick` chooses the
entries that fit in the lines the screen has for them: the newest always, the *pinned* ones —
the last festivals' results and the server's word, kept until the player's next action (a
spectator's: until the next turn ends) — and the *fresh* turns, every turn played since the
player's last action. When they do not fit whole, in their shorter words (a festival is
never cut: it wraps), then fresh turns a few to a line, then the oldest fresh turns are left
out and counted; older entries fill what is left, cut with ``…``. What is left out is said
in a marker (``… 2 more turns · chat: 1 unread (F2)``), which the caller puts at the end of
the board's ``↓`` line or on a line of its own, never over an entry's words; F2 (``log``)
shows it all. :func:`need` says how many lines the entries want, for the screen to make room.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs
from rich.console import Console
from rich.text import Text

from client.screens.render import seat_style
from shared import describe as d
from shared.describe import Event, Part
from shared.sanitize import safe
from shared.view import View

#: How many of the log's latest events are read: a few turns, more than any screen shows.
TAIL: Final = 150
#: The marker of chat lines the event lines leave out.
UNREAD: Final = "chat: {n} unread (F2)"
#: The marker of fresh turns the event lines leave out.
MORE_TURNS: Final = "… {n} more turn{s}"
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
    #: The same in fewer words, for a screen with no room for every line whole: a turn's
    #: moves, towers built, performances completed and a turn the server ended; a
    #: festival's places and prizes.
    short: tuple[Part, ...] | None = None
    #: A turn played since the player's last action (a spectator's: in the last round of
    #: turns): shown, or counted in the marker of the turns left out.
    fresh: bool = False


@attrs.define
class _Turn:
    """A turn being read: its seat and its actions in words, ``(action kind, words)``."""

    seat: Any
    last: int
    items: list[tuple[str, str]] = attrs.Factory(list)
    #: The words of the turn's short line (see :attr:`Entry.short`), by action kind.
    brief: list[tuple[str, str]] = attrs.Factory(list)
    ended: bool = False
    timed_out: str | None = None


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


def brief_words(action: Mapping[str, Any]) -> str | None:
    """What a turn's short line keeps of an action: where the pawn went (``to tar``, by a
    move, a training or a special action) and the tower built (``built 7 7/6 6/5``); None
    for the rest (recruits, trainings: the log has them). A performance completed is
    ``lp05 done`` there."""
    kind = action.get("kind")
    if kind == "move" or (kind in ("train", "special") and action.get("effect") == "move"):
        return f"to {d.region_label(action.get('region'))}"
    if kind in ("build", "dismantle"):
        return action_brief(action)
    return None


def _turn_entry(view: View, turn: _Turn, me: int | None) -> Entry:
    words = [w for _, w in turn.items] or ["passed"]
    name = "You" if turn.seat is not None and turn.seat == me else d.short_name(view, turn.seat)
    brief = [w for _, w in turn.brief] or words
    return Entry((Part(name, turn.seat), Part(": " + ", ".join(words))), "turn", turn.last,
                 turn.seat, short=(Part(name, turn.seat), Part(": " + ", ".join(brief))))


def _festival_parts(view: View, event: Event, short: bool = False) -> list[Part]:
    """``Festival at Valls (tar), size 6: Cai 9 trophy + size token, Anna 8 medal``; ``short``:
    ``Valls festival (tar) size 6: Cai 9 trophy+size, Anna 8 medal``."""
    results = event.get("results") or ()
    title = (f"{safe(event.get('town'))} festival ({d.region_label(event.get('region'))}) "
             f"size {safe(event.get('size'))}" if short else d.festival_title(event))
    parts = [Part(title + (": " if results else ": nobody took part"))]
    for i, result in enumerate(results):
        seat = result.get("seat")
        parts.append(Part(", " if i else ""))
        parts.append(Part(d.short_name(view, seat), seat))
        words = d.festival_result_words(view, result)[1:]
        parts.extend(Part(p.text.replace(" + size token", "+size"), p.seat) if short else p
                     for p in words)
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
                if t.timed_out is not None:
                    t.items.append(("timeout", t.timed_out))
                    t.brief.append(("timeout", t.timed_out))
            else:
                words = action_brief(action)
                # where a recruit happened, unless the line says the move that led there
                moved = any(w.startswith("moved to") or "move to" in w for _, w in t.items)
                if action.get("kind") == "recruit" and event.get("at") and not moved:
                    words += f" in {d.region_label(event.get('at'))}"
                t.items.append((str(action.get("kind")), words))
                brief = brief_words(action)
                if brief is not None:
                    t.brief.append((str(action.get("kind")), brief))
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
            t = turn_of(seat, i)
            t.items.append(("performed", f"completed {safe(event.get('tile'))}{extra}"))
            t.brief.append(("performed", f"{safe(event.get('tile'))} done"))
        elif kind == "undone":
            t = turn_of(seat, i)
            action = event.get("action") or {}
            taken = [j for j, (k, _) in enumerate(t.items) if k == action.get("kind")]
            if taken:  # the action is no longer the turn's; the undo is said in its place
                del t.items[taken[-1]]
            gone = [j for j, (k, _) in enumerate(t.brief) if k == action.get("kind")]
            if gone:
                del t.brief[gone[-1]]
            t.items.append(("undone", d.undone_words(action)))
        elif kind == "timeout":
            turn_of(seat, i).timed_out = d.skipped_words(event.get("reason"))
        elif kind == "turn":
            close()
            turn = _Turn(seat, i)
        elif kind == "round":
            close()
        elif kind == "festival":
            close()  # each festival of a round its own entry: none is cut for another
            out.append(Entry(tuple(_festival_parts(view, event)), "festival", i,
                             title=d.festival_title(event),
                             short=tuple(_festival_parts(view, event, short=True))))
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
    out = [attrs.evolve(e, pinned=True) if e.kind in PINNED_KINDS and e.last > acted else e
           for e in out]
    return _mark_fresh(out, events, start, me)


def _mark_fresh(found: list[Entry], events: Sequence[Event], start: int,
                me: int | None) -> list[Entry]:
    """The turns played since the player's last action (``fresh``); a spectator's, since
    the seat now playing last played (a round of turns)."""
    turns = [n for n, e in enumerate(found) if e.kind == "turn"]
    if me is not None:
        mine = max((i for i in range(start, len(events))
                    if events[i].get("kind") == "action" and events[i].get("seat") == me),
                   default=-1)
        since = [n for n in turns if found[n].last > mine and found[n].seat != me]
    else:
        seat = found[turns[-1]].seat if turns else None
        before = [n for n in turns[:-1] if found[n].seat == seat]
        since = [n for n in turns if not before or n > before[-1]]
    for n in since:
        found[n] = attrs.evolve(found[n], fresh=True)
    return found


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
    """The event lines as drawn; the log indices of the unread chat lines left out; how many
    fresh turns are left out; and the marker that says so (``… 2 more turns · chat: 1 unread
    (F2)``, None: nothing left out), for the caller to put on a line of its own or at the
    end of the board's ``↓`` line, never over an entry's words."""

    lines: list[Text]
    hidden: list[int]
    turns: int = 0
    mark: str | None = None


def _mark(turns: int, chats: int) -> str | None:
    said = []
    if turns:
        said.append(MORE_TURNS.format(n=turns, s="s" if turns != 1 else ""))
    if chats:
        said.append(UNREAD.format(n=chats).removesuffix(" (F2)"))
    return " · ".join(said) + " (F2)" if said else None


def _one_line(parts: Sequence[Part], width: int) -> Text:
    line = text_of(parts)
    return _cut(line, width) if line.cell_len > width else line


class _Layout:
    """Entries and the lines each takes whole, short, or cut, at one width."""

    def __init__(self, found: Sequence[Entry], width: int) -> None:
        self.found, self.width = found, width
        self.console = Console(width=width, file=io.StringIO(), color_system=None)
        self.full = [self.wrap(e.parts) for e in found]

    def wrap(self, parts: Sequence[Part]) -> list[Text]:
        return list(text_of(parts).wrap(self.console, self.width))

    def whole(self, n: int) -> list[Text]:
        """A festival whole: in its own words on one line, else its short words (wrapped)."""
        entry, full = self.found[n], self.full[n]
        if len(full) == 1 or entry.short is None:
            return full
        return self.wrap(entry.short)


def need(found: Sequence[Entry], width: int) -> int:
    """The lines the event lines want at ``width``: the newest entry whole, the kept ones
    whole and each fresh turn on a line of its own (its short words when they are too long
    for one)."""
    if not found:
        return 0
    lay = _Layout(found, width)
    newest = len(found) - 1
    total = len(lay.full[newest])
    for n in range(newest):
        if found[n].pinned:
            total += len(lay.whole(n))
        elif found[n].fresh:
            total += 1
    return total


def pick(found: Sequence[Entry], width: int, lines: int, *, unread_from: int = 0,
         me: int | None = None, own_name: str | None = None, mark_row: bool = False) -> Area:
    """The entries that fit in ``lines`` lines of ``width`` cells (see the module docstring).
    A chat line counts as unread from the log index ``unread_from`` on, unless the player
    said it (seat ``me``, or for a spectator the name ``own_name``). ``mark_row``: the
    marker of what is left out takes the first of the lines (else the caller places it)."""
    area = _pick(found, width, lines, unread_from, me, own_name)
    if area.mark is None or not mark_row:
        return area
    area = _pick(found, width, lines - 1, unread_from, me, own_name)
    assert area.mark is not None  # (fewer lines leave out no less)
    return attrs.evolve(area, lines=[Text(f"── {area.mark} ──", style="bold"), *area.lines])


def _pick(found: Sequence[Entry], width: int, lines: int, unread_from: int, me: int | None,
          own_name: str | None) -> Area:
    if lines <= 0:
        return Area([], [])
    lay = _Layout(found, width)
    blocks = _blocks(lay, lines) if found else {}
    dropped = [n for n, e in enumerate(found) if e.fresh and n not in blocks
               and not any(n in b.covers for b in blocks.values())]
    out: list[Text] = []
    for n in sorted(blocks):
        out.extend(blocks[n].lines)
    for line in out:
        line.rstrip()
    shown = {n: b for b in blocks.values() for n in b.covers}
    hidden = [e.last for n, e in enumerate(found)
              if e.kind == "chat" and e.last >= unread_from
              and not (me is not None and e.seat == me)
              and not (me is None and e.seat is None and own_name and e.name == own_name)
              and not (n in shown and shown[n].whole)]
    return Area(out, hidden, len(dropped), _mark(len(dropped), len(hidden)))


@attrs.define
class _Block:
    """Lines standing for the entries ``covers`` (whole: none of their words cut)."""

    lines: list[Text]
    covers: tuple[int, ...]
    whole: bool = True


def _blocks(lay: _Layout, lines: int) -> dict[int, _Block]:
    """The entries chosen for ``lines`` lines, by the index of their first entry: the newest,
    the kept ones and the fresh turns first, in fewer words (and a few short turns to a line)
    when they do not fit whole, the oldest fresh turns left out last of all; then older
    entries in what is left."""
    found, width = lay.found, lay.width
    newest = len(found) - 1
    kept = [n for n in range(newest) if found[n].pinned]
    fresh = [n for n in range(newest) if found[n].fresh and not found[n].pinned]

    def newest_block(budget: int) -> _Block:
        rows = lay.full[newest]
        take = min(len(rows), max(1, budget))
        out = [line.copy() for line in rows[:take]]
        if take < len(rows):
            out[-1] = _cut(out[-1], width)
        return _Block(out, (newest,), take == len(rows))

    def kept_blocks(short: bool) -> dict[int, _Block]:
        return {n: _Block(lay.whole(n) if short else lay.full[n], (n,)) for n in kept}

    def fresh_blocks(turns: list[int], how: str) -> dict[int, _Block]:
        if how == "whole":
            return {n: _Block(lay.full[n], (n,)) for n in turns}
        if how == "line":
            return {n: _Block([text_of(found[n].parts)] if len(lay.full[n]) == 1
                              else [_one_line(found[n].short or found[n].parts, width)], (n,),
                              len(lay.full[n]) == 1) for n in turns}
        # packed: runs of turns with nothing kept between them, a few to a line
        out: dict[int, _Block] = {}
        run: list[int] = []
        for n in [*turns, None]:
            if run and (n is None or any(run[-1] < k < n for k in kept)):
                out[run[0]] = _Block(_pack([found[k].short or found[k].parts for k in run],
                                           width), tuple(run), False)
                run = []
            if n is not None:
                run.append(n)
        return out

    def cost(blocks: dict[int, _Block]) -> int:
        return sum(len(b.lines) for b in blocks.values())

    chosen: dict[int, _Block] | None = None
    for short, how in ((False, "whole"), (True, "whole"), (True, "line"), (True, "packed")):
        body = {**kept_blocks(short), **fresh_blocks(fresh, how)}
        if cost(body) + len(lay.full[newest]) <= lines:
            chosen = {**body, newest: newest_block(lines - cost(body))}
            break
    # a fresh newest turn in its short words too, among the others; then the oldest fresh
    # turns left out (and counted) until the rest fits (the newest in at least a line)
    last = [newest] if found[newest].fresh and found[newest].short is not None else []
    for drop in range(len(fresh) + 1) if chosen is None else ():
        body = {**kept_blocks(True), **fresh_blocks([*fresh[drop:], *last], "packed")}
        if last and cost(body) <= lines:
            chosen = body
            break
        body = {**kept_blocks(True), **fresh_blocks(fresh[drop:], "packed")}
        if not last and cost(body) + 1 <= lines:
            chosen = {**body, newest: newest_block(lines - cost(body))}
            break
    if chosen is None:  # not even the kept ones fit: a line each, the newest first
        chosen = {newest: newest_block(lines - len(kept))}
        budget = lines - len(chosen[newest].lines)
        for n in reversed(kept):
            if budget <= 0:
                break
            rows = lay.whole(n)
            take = min(len(rows), max(1, budget - len([k for k in kept if k < n])))
            cut = [line.copy() for line in rows[:take]]
            if take < len(rows):
                cut[-1] = _cut(cut[-1], width)
            chosen[n] = _Block(cut, (n,), take == len(rows))
            budget -= take
    budget = lines - cost(chosen)
    covered = {n for b in chosen.values() for n in b.covers}
    for n in range(newest - 1, -1, -1):  # older entries in what is left
        if budget <= 0:
            break
        if n in covered or found[n].fresh:
            continue
        rows = lay.full[n]
        take = min(len(rows), budget)
        cut = [line.copy() for line in rows[:take]]
        if take < len(rows):
            cut[-1] = _cut(cut[-1], width)
        chosen[n] = _Block(cut, (n,), take == len(rows))
        budget -= take
    return chosen


def _pack(turns: Sequence[Sequence[Part]], width: int) -> list[Text]:
    """Turns' short words a few to a line, `` · `` between them; one too long for a line
    alone is cut."""
    out: list[Text] = []
    line: Text | None = None
    for parts in turns:
        text = _one_line(parts, width)
        if line is not None and line.cell_len + 3 + text.cell_len <= width:
            line.append(" · ", style="dim")
            line.append_text(text)
            continue
        if line is not None:
            out.append(line)
        line = text
    if line is not None:
        out.append(line)
    return out
