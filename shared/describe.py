"""The view and its events in words: the text shared by the client's boxed screen, its
``--plain`` lines and the server's web pages (``server.web``), so pure and in ``shared``.

Every function takes parts of a protocol view (``docs/protocol.md``, "The view"), as the
typed :class:`shared.view.View` the session parsed it into, and returns plain strings, or
:class:`Part` lists when a piece of text belongs to a seat (so the boxed renderer can colour
it). Events stay the wire maps they came as. Strings that come from the server go through
:func:`shared.sanitize.safe` here, once, so no renderer prints them raw (the web pages
escape them for HTML besides).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

from shared.board import ADJACENT, PRIZE_BY_RANK, REGION_NAMES, REGIONS, ROUNDS, SKILLS, TILES
from shared.errors import CastellError
from shared.festival import ranks
from shared.sanitize import safe
from shared.scoring import places, ranked, score_player, winners
from shared.state import Festival, Prizes, Skills
from shared.view import PlayerView, RoomStatus, TakenView, View, state_from_view

#: Whose name a ``notice`` from the server is shown under (among the chat).
NOTICE_NAME: Final = "server"
#: What follows a spectator's name in the chat: spectators speak from no seat.
SPECTATOR_MARK: Final = "(watching)"

#: An event of a ``state`` push (or a chat line among them), as the wire map it came as.
Event = Mapping[str, Any]

#: The once-per-turn actions of §4, in the order the header lists them.
TURN_ACTIONS: Final = ("move", "recruit", "train", "special")
SKILL_ABBREV: Final = {"balance": "bal", "base": "bas", "mix": "mix", "strength": "str",
                       "width": "wid"}
SCORE_CATEGORIES: Final = ("tower", "diversity", "prizes", "sizes", "performances")


class Part(NamedTuple):
    """A piece of a line; ``seat`` is set when the text names that seat's player."""

    text: str
    seat: int | None = None


def plain(parts: Sequence[Part]) -> str:
    return "".join(p.text for p in parts)


# Players -------------------------------------------------------------------------------


def player_at(view: View, seat: int | None) -> PlayerView | None:
    """The player at ``seat``, or None (an empty seat, or no seat)."""
    for p in view.players:
        if p.seat == seat:
            return p
    return None


def seat_name(view: View, seat: int | None) -> str:
    """The player's name at ``seat``, made safe; ``seat N`` for an unknown seat."""
    p = player_at(view, seat)
    name = safe(p.name) if p else ""
    return name or f"seat {seat}"


def short_name(view: View, seat: int | None) -> str:
    """The name at ``seat`` without a bot's level: ``Pau`` of ``Pau·greedy`` (a room's names
    differ before the ``·`` already; the level stands in the bot's panel)."""
    name = seat_name(view, seat)
    p = player_at(view, seat)
    if p is not None and p.bot and "·" in name:
        return name.split("·")[0] or name
    return name


def who(view: View, seat: int | None) -> Part:
    return Part(seat_name(view, seat), seat)


def region_label(region: str | None) -> str:
    return safe(region) if region else "—"


def neighbours(region: str) -> list[str]:
    """Regions next to ``region`` in board order (§2)."""
    return [r for r in REGIONS if r in ADJACENT.get(region, ())]


def team_text(team: Sequence[int]) -> str:
    """A team grouped by size, largest first: ``9×2 8 7×3``."""
    counts = Counter(team)
    return " ".join(
        f"{size}×{n}" if n > 1 else str(size) for size, n in sorted(counts.items(), reverse=True)
    )


def level_text(level: Sequence[int]) -> str:
    return " ".join(str(s) for s in level)


def tower_text(levels: Sequence[Sequence[int]]) -> str:
    """A tower on one line, bottom level first: ``7 7 7 / 5 5 / 2``."""
    return " / ".join(level_text(level) for level in levels)


def tower_lines(levels: Sequence[Sequence[int]], width: int | None = None) -> list[str]:
    """A tower drawn level by level, top level first, each level centred on the widest.

    A level wider than ``width`` characters is written grouped (``10×9``) so that the
    drawing never wraps.
    """
    rows = [level_text(level) for level in reversed(levels)]
    if width is not None:
        rows = [r if len(r) <= width else team_text(level)
                for r, level in zip(rows, reversed(levels), strict=True)]
    width = max((len(r) for r in rows), default=0)
    return [r.center(width).rstrip() for r in rows]


def skills_text(skills: Skills, sep: str = " · ") -> str:
    """The skills a player has ranks in: ``bal 1 · str 2``, or ``no skills``."""
    ranks = [f"{SKILL_ABBREV[s]} {skills.rank(s)}" for s in SKILLS if skills.rank(s)]
    return sep.join(ranks) if ranks else "no skills"


def taken_text(taken: TakenView) -> str:
    """What a player took, grouped by region (§9 diversity): ``gir lp04 · tar trophy size 6``.

    Taken special action tokens (not tied to a region) come last.
    """
    items: dict[str, list[str]] = {}
    for tile in taken.tiles:
        items.setdefault(tile.region, []).append(safe(tile.tile))
    for prize in taken.prizes:
        items.setdefault(prize.region, []).append(safe(prize.prize))
    for size in taken.sizes:
        items.setdefault(size.region, []).append(f"size {size.size}")
    groups = [f"{region_label(r)} {' '.join(items[r])}" for r in REGIONS if r in items]
    tokens = taken.tokens
    if tokens:
        groups.append(f"{tokens} token{'s' if tokens != 1 else ''}")
    return " · ".join(groups) if groups else "nothing yet"


def player_title(view: View, p: PlayerView, me: int | None) -> str:
    """``▶ Anna (you)``: the name with its markers (turn, you, bot, offline)."""
    seat = p.seat
    marks = []
    if seat == me:
        marks.append("(you)")
    if p.bot:
        marks.append("(bot)")
    if not p.connected:
        marks.append("(offline)")
    if seat in (view.resigned or ()):
        marks.append("(resigned)")
    prefix = "▶ " if seat == view.turn and view.status == RoomStatus.PLAYING else ""
    return prefix + " ".join([seat_name(view, seat), *marks])


def player_summary(p: PlayerView, score: int | None = None, width: int | None = None) -> str:
    """``at gir · best 8 · score 23`` (``no pawn yet`` before the first move); ``score`` is
    the player's score so far (:func:`scores_so_far`). Where that is wider than ``width``
    cells (a narrow panel), shorter: ``gir · best 8 · 23 pts``, ``no pawn · 0 pts`` (a
    best tower of 0 unsaid), so that the line stays whole."""
    where = f"at {region_label(p.region)}" if p.region else "no pawn yet"
    full = f"{where} · best {p.best}" + (f" · score {score}" if score is not None else "")
    if width is None or len(full) <= width:
        return full
    parts = [region_label(p.region) if p.region else "no pawn"]
    if p.best:
        parts.append(f"best {p.best}")
    if score is not None:
        parts.append(f"{score} pts")
    return " · ".join(parts)


def scores_so_far(view: View) -> dict[int, int]:
    """Each seat's total as §9 would count it now: what the players have taken so far,
    counted by the rules engine's own scoring (none before the start)."""
    if view.status == RoomStatus.WAITING:
        return {}
    try:
        state = state_from_view(view)
    except CastellError:
        return {}
    return {p.seat: score_player(p).total for p in state.players}


def tokens_and_skills(p: PlayerView) -> str:
    """``5 tokens · bal 1 · str 1``: special action tokens left and skill ranks."""
    head = f"{p.tokens} token{'s' if p.tokens != 1 else ''}"
    if not any(p.skills.rank(s) for s in SKILLS):
        return head
    return f"{head} · {skills_text(p.skills, ' ')}"


# The turn ------------------------------------------------------------------------------


def turn_marks(done: Sequence[str]) -> list[str]:
    """``move ✓`` for each action taken this turn, ``train ·`` for the others (§4)."""
    return [f"{a} {'✓' if a in done else '·'}" for a in TURN_ACTIONS]


def countdown(deadline: float | None, now: float | None) -> str | None:
    """Time left (never negative), or None without a deadline or a clock: ``m:ss`` under an
    hour; a correspondence game's longer turns as ``5 h 12 min`` or ``1 d 23 h``."""
    if deadline is None or now is None:
        return None
    left = max(0, int(deadline - now))
    if left >= 86400:
        return f"{left // 86400} d {left % 86400 // 3600} h"
    if left >= 3600:
        return f"{left // 3600} h {left % 3600 // 60} min"
    return f"{left // 60}:{left % 60:02d}"


def status_text(view: View) -> str:
    if view.status == RoomStatus.WAITING:
        taken, seats = len(view.players), view.seats
        if taken == seats:
            return f"every seat taken {taken}/{seats}, waiting for the start"
        return f"waiting for players {taken}/{seats}"
    if view.status == RoomStatus.FINISHED:
        winners = view.winners or ()
        return f"game over: {plain(winners_text(view, winners))}" if winners else "game over"
    return f"round {view.round}/{ROUNDS}"


def turn_text(view: View, me: int | None) -> Part | None:
    """Whose turn it is, from ``me``'s point of view."""
    turn = view.turn
    if turn is None or view.status != RoomStatus.PLAYING:
        return None
    if turn == me:
        return Part("your turn", turn)
    return Part(f"{seat_name(view, turn)}'s turn", turn)


# The board -----------------------------------------------------------------------------


def tile_name(tile: str | None) -> str:
    return safe(tile).capitalize() if tile else "—"


def wheel_all_text(view: View) -> str:
    """What the `all` segment trains this round; the advanced game has no such segment."""
    if "all" in view.wheel:
        return f"all regions: {tile_name(view.wheel['all'])}"
    if view.variant == "advanced":
        return "advanced: no `all` tile"
    return "all regions: —"


def performance_label(tile_id: str, compact: bool = False) -> str:
    """``lp04 shape 3·2·1 (3 pts)``; compact: ``lp04 3·2·1 (3)``."""
    tile = TILES.get(tile_id)
    if tile is None:
        return safe(tile_id)
    if not compact:
        return f"{tile.id} {tile.describe()} ({tile.points} pts)"
    if tile.kind == "shape":
        return f"{tile.id} {'·'.join(map(str, tile.shape))} ({tile.points})"
    skills = "+".join(SKILL_ABBREV.get(s, s) for s in tile.skills)
    return f"{tile.id} {tile.points}lv {skills} ({tile.points})"


def next_festival_round(festivals: Sequence[Festival]) -> int | None:
    """The round of the earliest festival not yet held (§5), or None."""
    rounds = [f.round for f in festivals if not f.done]
    return min(rounds) if rounds else None


def festival_window(festivals: Sequence[Festival], rows: int) -> tuple[list[Festival], int]:
    """The festivals to list in ``rows`` lines and how many later ones are left out.

    The list starts at the last festival held (for context), then the coming ones.
    """
    pending = [i for i, f in enumerate(festivals) if not f.done]
    start = max(0, pending[0] - 1) if pending else max(0, len(festivals) - rows)
    shown = list(festivals[start:start + rows])
    hidden = len(festivals) - start - len(shown)
    if hidden:
        shown = shown[:-1]
        hidden += 1
    return shown, hidden


def prizes_text(prizes: Prizes) -> str:
    """The prize supply left: ``trophy 11 medal 14 ribbon 14``."""
    return " ".join(f"{p} {prizes.left(p)}" for p in ("trophy", "medal", "ribbon"))


# Events --------------------------------------------------------------------------------


def _moved_to(event: Event) -> str | None:
    """The region an action event moved its player to, if it was a move of any kind."""
    if event.get("kind") != "action":
        return None
    action = event.get("action") or {}
    if action.get("kind") == "move" or action.get("effect") == "move":
        return action.get("region")
    return None


def _undone_move(event: Event) -> bool:
    """Whether ``event`` took back a move (of any kind): the pawn went back where it was."""
    if event.get("kind") != "undone":
        return False
    action = event.get("action") or {}
    return action.get("kind") == "move" or action.get("effect") == "move"


def regions_at(events: Sequence[Event], view: View) -> list[str | None]:
    """For each event, where its seat's pawn stood when it happened (None when unknown).

    An event the client marked with ``at`` when it arrived (:func:`mark_regions`) says so
    itself. Otherwise a pawn is where its last earlier move in the list took it (a move taken
    back with ``undo`` no longer counts); without one, where the view shows it now — unless a
    later move in the list means it stood somewhere unknown.
    """
    last_move: dict[Any, int] = {}
    for i, event in enumerate(events):
        if _moved_to(event) or _undone_move(event):
            last_move[event.get("seat")] = i
    out: list[str | None] = []
    places: dict[Any, list[str | None]] = {}  # per seat: where it stood, latest last
    for i, event in enumerate(events):
        seat = event.get("seat")
        stack = places.get(seat)
        where = event.get("at")
        if where is None and stack:
            where = stack[-1]
        elif where is None and last_move.get(seat, -1) <= i and _moved_to(event) is None:
            p = player_at(view, seat)
            where = p.region if p else None
        out.append(where)
        dest = _moved_to(event)
        stack = places.setdefault(seat, [])
        if dest:
            if not stack:
                stack.append(where)  # where it came from (None: unknown)
            stack.append(dest)
        elif _undone_move(event):
            if len(stack) > 1:
                stack.pop()
            else:
                stack[:] = [None]  # back where it was before the list began: unknown
        elif where is not None and (not stack or stack[-1] != where):
            stack.append(where)
    return out


def mark_regions(events: Sequence[Event], view: View) -> list[Event]:
    """The events of one push, each action marked with ``at``: where its seat's pawn stood,
    told by the view that came with them. A line kept long after its push still names its
    region, whatever the player did since."""
    return [{**event, "at": where} if event.get("kind") == "action" and where else event
            for event, where in zip(events, regions_at(events, view), strict=True)]


def effect_words(action: Mapping[str, Any]) -> str:
    """What a training or a special action did (its ``effect``): ``move to bcn``,
    ``recruit an 8``, ``perform lp05``."""
    effect = action.get("effect")
    if effect == "move":
        return f"move to {region_label(action.get('region'))}"
    if effect == "recruit":
        size = safe(action.get("size"))
        return f"recruit {'an' if size in ('8', '11', '18') else 'a'} {size}"
    if effect == "perform":
        return f"perform {safe(action.get('tile'))}"
    return safe(effect)


#: How a turn the timer ended reads.
TIMED_OUT: Final = "ran out of time"
#: How a turn the server ended for another reason reads, by the ``timeout`` event's ``reason``
#: (docs/protocol.md, "Events").
SKIPPED: Final = {"removed": "turn skipped (removed by the host)",
                  "resigned": "turn skipped (resigned)"}


def skipped_words(reason: Any) -> str:
    """Why the server ended a turn, by a ``timeout`` event's ``reason``: ``ran out of time``
    without one (or one this client does not know)."""
    return SKIPPED.get(reason, TIMED_OUT) if isinstance(reason, str) else TIMED_OUT


def fold_training(events: Sequence[Event]) -> list[Event]:
    """The events with each ``train`` action and the ``trained`` event that says which skill
    it raised folded into one (the skill under ``raised``): one action, one line. A turn the
    timer ended (``timeout``, then the ``end_turn`` played for the seat) is one line too,
    marked ``timed_out`` (the ``timeout`` event's ``reason`` when it has one): it must not read
    like a turn the player ended."""
    out: list[Event] = []
    for event in events:
        last = out[-1] if out else None
        if (last is not None and last.get("kind") == "timeout"
                and event.get("kind") == "action" and event.get("seat") == last.get("seat")
                and (event.get("action") or {}).get("kind") == "end_turn"):
            out[-1] = {**event, "timed_out": last.get("reason") or True}
            continue
        if (event.get("kind") == "trained" and event.get("tile") != "special"
                and last is not None and last.get("kind") == "action"
                and last.get("seat") == event.get("seat") and "raised" not in last
                and (last.get("action") or {}).get("kind") == "train"):
            out[-1] = {**last, "raised": event.get("tile")}
            continue
        out.append(event)
    return out


def action_words(action: Mapping[str, Any], where: str | None,
                 raised: str | None = None) -> str:
    """An action's fields in words, after the player's name: ``recruited 6 6 in alt``;
    ``raised`` is the skill a training raised (:func:`fold_training`)."""
    kind = action.get("kind")
    here = f" in {region_label(where)}" if where else ""
    if kind == "train" and raised:
        choice = "the `all` tile" if action.get("choice") == "all" else f"the tile{here or ''}"
        return f"raised {safe(raised)} with {choice}"
    if kind == "move":
        return f"moved to {region_label(action.get('region'))}"
    if kind == "recruit":
        return f"recruited {' '.join(safe(s) for s in action.get('sizes') or ())}{here}"
    if kind == "train":
        choice = "the `all` tile" if action.get("choice") == "all" else f"the tile{here or ''}"
        extra = f": {effect_words(action)}" if action.get("effect") else ""
        return f"trained with {choice}{extra}"
    if kind == "special":
        return f"spent a token to {effect_words(action)}"
    if kind == "build":
        levels = action.get("levels") or ()
        return f"built {len(levels)} level{'s' if len(levels) != 1 else ''}: " + " / ".join(
            " ".join(safe(s) for s in level) for level in levels)
    if kind == "dismantle":
        return "dismantled the tower"
    if kind == "end_turn":
        return "ended the turn"
    return f"did {safe(kind)}"


def undone_words(action: Mapping[str, Any]) -> str:
    """What an ``undone`` event took back, after the player's name: ``took back: move to
    Girona``."""
    words = action_words(action, None)
    verbs = {"moved": "move", "recruited": "recruit", "trained": "train", "spent": "spend",
             "built": "build", "dismantled": "dismantle"}
    first, _, rest = words.partition(" ")
    words = f"{verbs[first]} {rest}" if first in verbs else words
    return f"took back: {words}"


def festival_title(event: Event) -> str:
    return (f"Festival at {safe(event.get('town'))} ({region_label(event.get('region'))}), "
            f"size {safe(event.get('size'))}")


_PRIZE_PLURALS: Final = {"trophy": "trophies", "medal": "medals", "ribbon": "ribbons"}


def prize_text(view: View, results: Sequence[Mapping[str, Any]],
               result: Mapping[str, Any]) -> str | None:
    """What ``result`` (one of a festival's ``results``) won: its prize; for a place that
    wins a prize when the supply had none of it left (§5.3), ``(no trophies left)``, so that a
    top score that took nothing does not read as a mistake; None for a place without one."""
    if result.get("prize"):
        return safe(result["prize"])
    scores: dict[int, int] = {}
    for r in results:
        if type(r.get("seat")) is not int or type(r.get("score")) is not int:
            return None
        scores[r["seat"]] = r["score"]
    seat = result.get("seat")
    if seat not in scores:
        return None
    table = PRIZE_BY_RANK.get(len(view.players), ())
    rank = ranks(scores)[seat]  # §5.3, as the festival ranked them
    if rank > len(table):
        return None
    return f"(no {_PRIZE_PLURALS[table[rank - 1]]} left)"


def festival_result_words(view: View, result: Mapping[str, Any],
                          results: Sequence[Mapping[str, Any]] = ()) -> list[Part]:
    """``Anna 8 trophy + size token``; ``Biel 9 (no trophies left)`` when the supply had
    none for the place (``results``: the festival's, to rank it)."""
    bits = [str(safe(result.get("score")))]
    prize = prize_text(view, results or (result,), result)
    if prize:
        bits.append(prize)
    if result.get("size_token"):
        bits.append("+ size token")
    return [who(view, result.get("seat")), Part(" " + " ".join(bits))]


def winners_text(view: View, winners: Sequence[int]) -> list[Part]:
    parts: list[Part] = []
    for i, seat in enumerate(winners):
        if i:
            parts.append(Part(" and " if i == len(winners) - 1 else ", "))
        parts.append(who(view, seat))
    verb = " wins" if len(winners) == 1 else " share the victory"
    return [*parts, Part(verb)] if parts else [Part("no winner")]


def event_parts(view: View, event: Event, where: str | None = None) -> list[Part] | None:
    """One event as a line of parts, or None for an event not worth a line.

    Festival events are one title line here; their results are listed by the caller
    (a table on screen, lines in ``--plain``).
    """
    kind = event.get("kind")
    seat = event.get("seat")
    if kind == "action":
        if event.get("timed_out"):
            why = skipped_words(event.get("timed_out"))
            return [who(view, seat), Part(f"'s {why}" if why != TIMED_OUT
                                          else " ran out of time: the turn ended")]
        return [who(view, seat), Part(" " + action_words(event.get("action") or {}, where,
                                                         event.get("raised")))]
    if kind == "undone":
        return [who(view, seat), Part(" " + undone_words(event.get("action") or {}))]
    if kind == "turn":
        return [Part("— "), who(view, seat), Part("'s turn")]
    if kind == "round":
        return [Part(f"— round {safe(event.get('round'))}, "), who(view, event.get("first")),
                Part(" plays first")]
    if kind == "refill":
        return [Part("the regions are refilled from the bag")]
    if kind == "trained":
        tile = event.get("tile")
        if tile == "special":
            return None  # the action line already says which effect
        return [who(view, seat), Part(f" raised {safe(tile)}")]
    if kind == "performed":
        tokens = event.get("tokens") or 0
        extra = f" and {tokens} token{'s' if tokens != 1 else ''}" if tokens else ""
        return [who(view, seat),
                Part(f" completed {safe(event.get('tile'))} in "
                     f"{region_label(event.get('region'))}{extra}")]
    if kind == "festival":
        results = event.get("results") or ()
        tail = "" if results else ": nobody took part"
        return [Part(festival_title(event) + tail)]
    if kind == "timeout":
        why = skipped_words(event.get("reason"))
        return [who(view, seat), Part(f"'s {why}" if why != TIMED_OUT else f" {why}")]
    if kind == "resigned":
        return [who(view, seat), Part(" resigned")]
    if kind == "game_over":
        return [Part("Game over: "), *winners_text(view, event.get("winners") or ())]
    if kind == "started":
        return [Part("the game starts")]
    if kind == "refused":  # not a server event: a refusal of the player's own line, kept
        return [Part(f"✗ {safe(event.get('text'))}")]
    if kind == "chat":  # not a server event: the client puts chat lines among the events
        return chat_parts(view, event)
    name = Part(safe(event.get("name", "")) or seat_name(view, seat), seat)
    room = {"joined": " joined", "left": " left", "connected": " is back",
            "disconnected": " lost the connection"}
    if kind in room:
        return [name, Part(room[kind])]
    return [Part(f"({safe(kind)})")]


def chat_parts(view: View | None, message: Mapping[str, Any]) -> list[Part]:
    """A chat push as ``Anna: hello``; a spectator's as ``Carme (watching): hello``, without a
    seat colour, so that it never reads as a player's. ``view`` (None before the room's first
    view) names a seat whose message has no name."""
    seat = message.get("seat")
    name = safe(message.get("name", "")) or (seat_name(view, seat) if view else f"seat {seat}")
    if seat is None and message.get("name") != NOTICE_NAME:
        name += f" {SPECTATOR_MARK}"
    return [Part(name, seat), Part(": " + safe(message.get("text", "")))]


def watchers_text(view: View) -> str | None:
    """Who watches the room, as ``watching: Carme, Pere``; None when nobody does."""
    if not view.spectators:
        return None
    return "watching: " + ", ".join(safe(n) for n in view.spectators)


# Scores --------------------------------------------------------------------------------


def score_rows(view: View) -> list[tuple[int, list[str], str]]:
    """Final scores in the final order (winners first, then by total, those who resigned
    last: :func:`shared.scoring.places`): (seat, cells: categories of §9 then total, what
    the row is marked with: ``★ winner``, ``resigned`` or nothing)."""
    won = set(view.winners or ())
    gone = view.resigned or ()
    scores = {s.seat: s for s in view.scores or ()}
    order = ranked(places(((s.seat, s.total) for s in scores.values()), won, gone))
    return [(seat, [str(getattr(scores[seat], c)) for c in (*SCORE_CATEGORIES, "total")],
             "★ winner" if seat in won else "resigned" if seat in gone else "")
            for seat in order]


def score_lines(view: View, me: int | None) -> list[str]:
    """The ``score`` command: every player's score by the categories of §9, counted with
    what they hold now (the final scores once the game is over), best first; those who
    resigned last."""
    if view.status == RoomStatus.WAITING:
        return ["no score yet: the game has not started"]
    if view.scores:
        rows = [(seat, cells, mark) for seat, cells, mark in score_rows(view)]
        head = "Final score (§9):"
    else:
        try:
            state = state_from_view(view)
        except CastellError:
            return ["the score cannot be counted from this view"]
        now = [score_player(p) for p in state.players]
        gone = view.resigned or ()
        lead = set(winners(now, gone))
        order = ranked(places(((s.seat, s.total) for s in now), lead, gone))
        by_seat = {s.seat: s for s in now}
        rows = [(seat, [str(getattr(by_seat[seat], c)) for c in (*SCORE_CATEGORIES, "total")],
                 "leads" if seat in lead else "resigned" if seat in gone else "")
                for seat in order]
        head = (f"Score now, round {view.round}/{ROUNDS} (§9 on what everyone holds; "
                "`rules scoring`):")
    names = {seat: seat_name(view, seat) + (" (you)" if seat == me else "")
             for seat, _, _ in rows}
    width = max([6, *(len(n) for n in names.values())])
    columns = [*SCORE_CATEGORIES, "total"]
    sizes = [max(len(c), *(len(cells[i]) for _, cells, _ in rows))
             for i, c in enumerate(columns)]
    lines = [head, "  " + "player".ljust(width) + "".join(
        "  " + c.rjust(n) for c, n in zip(columns, sizes, strict=True))]
    for seat, cells, mark in rows:
        lines.append("  " + names[seat].ljust(width) + "".join(
            "  " + v.rjust(n) for v, n in zip(cells, sizes, strict=True))
            + (f"  {mark}" if mark else ""))
    return lines


def tie_note(view: View) -> str | None:
    """Why a player with the winners' total did not win: they resigned (§10 "Resigning":
    they rank last, whatever the scores), or the tie went to the better best tower (§9)."""
    winners = set(view.winners or ())
    gone = set(view.resigned or ())
    scores = view.scores or ()
    top = {s.total for s in scores if s.seat in winners}
    beaten = [s.seat for s in scores if s.seat not in winners and s.total in top]
    if not beaten:
        return None
    points = next(iter(top))
    said = []
    lower = [s for s in beaten if s not in gone]
    if lower:
        said.append(f"a tie on {points} points goes to the better best tower (§9): "
                    f"{', '.join(seat_name(view, s) for s in lower)} had a lower one")
    quit_ = [s for s in beaten if s in gone]
    if quit_:
        who = ", ".join(seat_name(view, s) for s in quit_)
        said.append(f"{who} resigned and so {'ranks' if len(quit_) == 1 else 'rank'} last "
                    f"(§10 Resigning), even on {points} points")
    return "; ".join(said)


def region_name(region: str) -> str:
    return REGION_NAMES.get(region, safe(region))
