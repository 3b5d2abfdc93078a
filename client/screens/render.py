"""Drawing a protocol view on the terminal with rich, and as plain lines for ``--plain``.

:func:`render` turns a view (``docs/protocol.md``, "The view", as a typed
:class:`shared.view.View`), the seat of the player looking
at it (or None for a spectator), recent events and the current time into one rich renderable:
header, the score table once the game is over, Regions, Festivals, Local performances, one
panel per player (the player's own first; a waiting room lists its seats instead) and recent
events. It adapts to the width it is given: at 100 columns the regions and the festivals stand
side by side and the player panels share one row; narrower, the festivals become a column of
the regions table, the header shortens its words, player panels stack and tile descriptions
shorten. On a screen too short for everything (``short``) the players come before the
performances; narrower than 96 columns, the player's own panel then spans the width right
under the regions, so that their tower and takings are on the first page. Who watches is
said in the header when it has room. :func:`render_plain` gives the same facts as text
lines.

The renderer never forces styles: colours and bold are only requests that a Console created
with ``no_color`` or ``color_system=None`` drops. Text from the server is made safe
(:func:`shared.sanitize.safe`) and put in ``Text`` objects, never parsed as markup.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs
from rich import box
from rich.cells import cell_len, set_cell_size
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from client.control.hints import supply_note, supply_text
from shared import describe as d
from shared.board import REGIONS, ROUNDS
from shared.describe import Part
from shared.sanitize import safe
from shared.state import Row
from shared.view import Festival, PlayerView, RegionView, RoomStatus, View

__all__ = ["SEAT_STYLES", "event_lines", "print_view", "render", "render_plain", "safe",
           "seat_style"]

#: One colour per seat (0–3), for pawns, panel titles and event lines.
SEAT_STYLES: Final = ("cyan", "magenta", "yellow", "green")
#: Below this width the regions and festivals panels stack.
SIDE_BY_SIDE: Final = 96
#: Below this width performance tiles use short descriptions.
FULL_TILES: Final = 100
MIN_PLAYER_PANEL: Final = 25
FESTIVAL_ROWS: Final = 7
#: Cells of the room name in the header.
HEADER_NAME: Final = 24


def _clip(text: str, cells: int) -> str:
    """``text`` cut to at most ``cells`` terminal cells (wide characters count twice)."""
    return text if cell_len(text) <= cells else set_cell_size(text, cells).rstrip()


def seat_style(seat: int | None) -> str:
    """The style of a seat's colour ("" for no seat)."""
    if seat is None:
        return ""
    return SEAT_STYLES[seat % len(SEAT_STYLES)]


def _text(parts: Sequence[Part], style: str = "") -> Text:
    text = Text(style=style)
    for part in parts:
        text.append(part.text, style=f"bold {seat_style(part.seat)}" if part.seat is not None
                    else "")
    return text


# Header --------------------------------------------------------------------------------


def _header(view: View, me: int | None, now: float | None, width: int,
            watching: str = "spectating") -> tuple[Text, bool]:
    """The top line: room, round, whose turn and what it has done, the clock, who watches.
    Narrower than the full line, the same facts in fewer cells, so that it never wraps
    mid-phrase. Also whether it names every spectator (``watching: Carme, Pere``): then the
    board needs no line of its own for them."""
    # the last resort drops the spectator's mark: the status line says it too
    # and the room's name is cut only when nothing else is left to shorten
    levels = ((False, True, watching, width), (False, False, watching, width),
              (True, False, watching, width), (True, False, "", width),
              (True, False, "", HEADER_NAME), (True, False, "", HEADER_NAME // 2))
    # who watches: named, else counted (the clock without its word, if need be), before the
    # words shorten any further
    seen = d.watchers_text(view)
    count = f"{len(view.spectators)} watching" if view.spectators else None
    tries = [(level, True, extra) for level in levels[:3] for extra in (seen, count)]
    tries += [(levels[2], False, count)] if count is not None else []
    tries += [(level, True, None) for level in levels]
    for (compact, brand, watch, name), clock, extra in tries:
        text = _header_line(view, me, now, width, watch, compact, brand, name, clock)
        if extra is not None:
            text.append(f" · {extra}", style="dim")
        if text.cell_len <= width:
            break
    return text, seen is not None and extra == seen


def _header_line(view: View, me: int | None, now: float | None, width: int, watching: str,
                 compact: bool, brand: bool, name: int, clock: bool = True) -> Text:
    text = Text()
    if width >= SIDE_BY_SIDE and brand:
        text.append("CASTELL · ", style="bold")
    text.append(_clip(safe(view.name), name), style="bold")
    status = d.status_text(view)
    if compact and view.status == RoomStatus.PLAYING:
        status = f"R{view.round}/{ROUNDS}"
    elif compact and view.status == RoomStatus.FINISHED:
        status = "game over"  # the score table right below names the winners
    text.append(f" · {status}")
    turn = d.turn_text(view, me)
    if turn is not None:
        text.append(" · ")
        text.append(turn.text, style=f"bold {seat_style(turn.seat)}")
        done = view.done
        # compact: a tick on what is done, the rest bare (a "·" would read as a separator)
        text.append(": " + (" ".join(f"{a}✓" if a in done else a for a in d.TURN_ACTIONS)
                            if compact else "  ".join(d.turn_marks(done))))
    left = d.countdown(view.deadline, now)
    if view.deadline is not None and now is not None and left is not None:
        urgent = view.deadline - now < 16
        text.append(f"{' ' if compact else '   '}{'time ' if clock else ''}{left}",
                    style="bold reverse" if urgent else "bold")
    if me is None and watching:
        text.append(f" · {watching}", style="dim")
    return text


# Regions and festivals -------------------------------------------------------------------


def _pawns(view: View, seats: Sequence[int], cells: int) -> Text:
    """Pawn names on one line of ``cells`` cells: whole when they fit, else without the bots'
    levels (``Pau`` of ``Pau·greedy``), else the longest cut (marked ``…``) until they do, so
    that a crowded region still gives every pawn a place."""
    names = [d.seat_name(view, seat) for seat in seats]
    room = cells - max(0, len(names) - 1)
    if sum(map(cell_len, names)) > room:
        names = [d.short_name(view, seat) for seat in seats]
    keep = [cell_len(n) for n in names]
    while sum(keep) > room and max(keep, default=0) > 2:
        keep[keep.index(max(keep))] -= 1
    text = Text(no_wrap=True, overflow="ellipsis")
    for i, (seat, name, k) in enumerate(zip(seats, names, keep, strict=True)):
        if i:
            text.append(" ")
        shown = name if cell_len(name) <= k else (
            _clip(name, k) if k < 4 else set_cell_size(name, k - 1).rstrip() + "…")
        text.append(shown, style=f"bold {seat_style(seat)}")
    return text


def _pawns_cells(view: View, width: int, festivals: bool, castellers: Sequence[str]) -> int:
    """The cells the pawns column of the Regions panel has at ``width``: what the panel's
    other columns leave."""
    panel = width if festivals else width * 60 // 100
    fixed = [3, max(len("castellers"), *map(len, castellers)),
             max(len("trains"), *(len(d.tile_name(t)) for t in view.wheel.values())),
             max(len(" ".join(d.neighbours(r))) for r in REGIONS)]
    if festivals:
        fixed.append(max(_festival_cell(view, r).cell_len for r in REGIONS))
    return max(5, panel - 4 - sum(fixed) - len(fixed))


def _festival_cell(view: View, region: str) -> Text:
    """The next festival still to come in ``region`` (``▶`` when it is the next of all), and
    the round of a later one: ``▶R4 size 3 +R8``."""
    festivals = view.festivals
    nxt = d.next_festival_round(festivals)
    coming = [f for f in festivals if not f.done and f.region == region]
    text = Text(no_wrap=True, overflow="ellipsis")
    if coming:
        f = coming[0]
        is_next = f.round == nxt
        text.append(f"{'▶' if is_next else ''}R{f.round} size {f.size}",
                    style="bold" if is_next else "")
        text.append("".join(f" +R{later.round}" for later in coming[1:]), style="dim")
    return text


def _regions_panel(view: View, me: int | None, width: int, festivals: bool = False,
                   short: bool = False) -> Panel:
    """The regions; with ``festivals``, each region's coming festivals too (a narrow screen
    has no room for the Festivals panel beside it) and the prizes left under them. On a
    ``short`` screen the next festivals' towns go in the title, when they fit there."""
    table = Table(box=None, padding=(0, 1, 0, 0), pad_edge=False, expand=True,
                  header_style="bold")
    regions = view.regions
    castellers = [" ".join(map(str, regions[r].castellers)) if r in regions else ""
                  for r in REGIONS]
    # On a very narrow screen the neighbours and festivals give way, never a region's id
    # or its castellers.
    table.add_column("reg", no_wrap=True, min_width=3)
    table.add_column("castellers", no_wrap=True,
                     min_width=max(len("castellers"), *(len(c) for c in castellers)))
    # Every pawn keeps a place, even in a crowded region: the other columns give way first.
    cells = _pawns_cells(view, width, festivals, castellers)
    pawns = [_pawns(view, regions[r].pawns if r in regions else (), cells) for r in REGIONS]
    table.add_column("pawns", no_wrap=True, overflow="ellipsis", ratio=1,
                     min_width=max(5, *(p.cell_len for p in pawns)))
    table.add_column("trains", no_wrap=True)
    table.add_column("next to", no_wrap=True, overflow="ellipsis")
    if festivals:
        table.add_column("festivals", no_wrap=True, overflow="ellipsis")
    wheel = view.wheel
    mine = _region_of(view, me)
    for r, here, pawn_names in zip(REGIONS, castellers, pawns, strict=True):
        table.add_row(
            r,
            here,
            pawn_names,
            d.tile_name(wheel.get(r)),
            " ".join(d.neighbours(r)),
            *([_festival_cell(view, r)] if festivals else []),
            style="bold" if r == mine else "",  # the player's own region stands out
        )
    foot = f"{d.wheel_all_text(view)} · bag {view.bag}"
    body: RenderableType = table
    title = Text("Regions")
    if festivals:
        foot += f" · {supply_text(view.prizes, len(view.players))}"
        # with their regions if they fit, else without (the festivals column has them): on a
        # short screen in the title, else (or if too long for it) on a line of their own
        named = [t for t in (_next_towns(view, "next"), _next_towns(view, "next", False))
                 if t is not None and title.cell_len + 3 + t.cell_len <= width - 6]
        towns = [t for t in (_next_towns(view), _next_towns(view, regions=False))
                 if t is not None and t.cell_len <= width - 4]
        whole = _next_towns(view)
        if named and short:
            title.append(" · ")
            title.append_text(named[0])
        elif whole is not None:
            body = Group(table, towns[0] if towns else whole)
    return Panel(body, title=title, title_align="left", subtitle=Text(foot),
                 subtitle_align="left", box=box.ROUNDED)


def _next_towns(view: View, label: str = "next festivals", regions: bool = True
                ) -> Text | None:
    """The next round's festivals with their towns, for the narrow layout whose festivals
    column has no room for them: ``next festivals (R5): Tortosa (ebr) size 2 · …`` (without
    ``regions``, ``Tortosa size 2``)."""
    nxt = d.next_festival_round(view.festivals)
    coming = [f for f in view.festivals if not f.done and f.round == nxt]
    if not coming:
        return None
    text = Text(f"{label} (R{nxt}): ", style="bold")
    text.append(" · ".join(f"{safe(f.town)}"
                           f"{f' ({d.region_label(f.region)})' if regions else ''} size {f.size}"
                           for f in coming))
    return text


def _region_of(view: View, seat: int | None) -> str | None:
    """Where the pawn of ``seat`` stands (None: no pawn, or no seat)."""
    p = d.player_at(view, seat)
    return p.region if p is not None else None


def _festival_rows(view: View, mine: str | None, width: int
                   ) -> tuple[list[Festival], int, list[bool]]:
    """The festivals the panel lists in :data:`FESTIVAL_ROWS` lines at ``width`` (a town
    too long for its column takes two), how many later ones it leaves out, and which is the
    player's own next one (``← you``)."""
    festivals = view.festivals
    nxt = d.next_festival_round(festivals)
    inner = width - width * 60 // 100 - 4  # the panel's share of the screen, less its frame
    shown, hidden = d.festival_window(festivals, FESTIVAL_ROWS)
    while True:
        yours = [not f.done and f.round == nxt and mine is not None and f.region == mine
                 for f in shown]
        fixed = (max((len(f"R{f.round}") + 2 for f in shown), default=0)
                 + max((len(f"size {f.size}") + 1 for f in shown), default=0)
                 + 4 + (6 if any(yours) else 0))
        lines = sum(1 if cell_len(f.town) <= inner - fixed else 2 for f in shown)
        if lines + (1 if hidden else 0) <= FESTIVAL_ROWS or len(shown) <= 2:
            return shown, hidden, yours
        shown, hidden = shown[:-1], hidden + 1


def _festivals_panel(view: View, me: int | None, width: int) -> Panel:
    festivals = view.festivals
    nxt = d.next_festival_round(festivals)
    table = Table(box=None, padding=(0, 1, 0, 0), pad_edge=False, show_header=False,
                  expand=True)
    shown, hidden, yours = _festival_rows(view, _region_of(view, me), width)
    table.add_column(no_wrap=True)  # ✓ / ▶ and the round
    # A town is never cut: the longest (Vilafranca del Penedès) takes a second line at 100
    # columns rather than lose its end.
    table.add_column(ratio=1, overflow="fold")  # town
    table.add_column(no_wrap=True)  # region
    table.add_column(no_wrap=True)  # size
    if any(yours):
        table.add_column(no_wrap=True)  # ← you
    for f, here in zip(shown, yours, strict=True):
        is_next = not f.done and f.round == nxt
        mark = "✓" if f.done else ("▶" if is_next else " ")
        style = "dim" if f.done else ("bold" if is_next else "")
        table.add_row(
            f"{mark}R{f.round}", safe(f.town), d.region_label(f.region), f"size {f.size}",
            *(["← you" if here else ""] if any(yours) else []),
            style=style,
        )
    if hidden:
        table.add_row("…", f"{hidden} more", style="dim")
    if not festivals:
        table.add_row("", "no calendar yet")
    gone = supply_note(view.prizes, len(view.players))  # §5.3: said where the prizes are
    body = Group(table, Text("left: " + d.prizes_text(view.prizes)),
                 *([Text(gone, style="bold")] if gone else []))
    # §5: who takes part, a short rules page away from where the sizes are
    return Panel(body, title="Festivals", title_align="left", box=box.ROUNDED,
                 subtitle=Text("who enters: `rules festivals`", style="dim"),
                 subtitle_align="left")


def _performances_panel(view: View, compact: bool) -> Panel:
    table = Table(box=None, padding=(0, 2, 0, 0), pad_edge=False, show_header=False,
                  expand=True)
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    table.add_column(no_wrap=True, justify="right")
    rows = view.performances
    if not any(row.tiles or row.tokens for row in rows.values()):
        return Panel(Text("every tile has been completed", style="dim"),
                     title="Local performances", title_align="left", box=box.ROUNDED)
    for r in REGIONS:
        row = rows.get(r, Row())
        tiles = [d.performance_label(t, compact) for t in row.tiles]
        table.add_row(r, "   ".join(tiles) or "—", f"tokens {row.tokens}" if row.tokens else "")
    return Panel(table, title="Local performances", title_align="left", box=box.ROUNDED)


# Players ---------------------------------------------------------------------------------


def _player_panel(view: View, p: PlayerView, me: int | None, inner: int,
                  height: int | None = None, score: int | None = None) -> Panel:
    seat = p.seat
    current = seat == view.turn and view.status == RoomStatus.PLAYING
    title_text = d.player_title(view, p, me)
    summary = d.player_summary(p, score, inner)
    if cell_len(title_text) > inner - 2:
        # The title must not touch the border: the marks (you, bot, offline) go inside, then
        # the turn's ▶ goes (the bold border and the header say whose turn it is); a name
        # too long even alone is cut in the title and said whole inside.
        marks = [w for w, on in (("you", seat == me), ("bot", p.bot),
                                 ("offline", not p.connected)) if on]
        name = d.seat_name(view, seat)
        title_text = d.player_title(view, attrs.evolve(p, bot=False, connected=True), None)
        if cell_len(title_text) > inner - 2:
            title_text = name
        if cell_len(title_text) > inner - 2:
            title_text = set_cell_size(name, inner - 3).rstrip() + "…"
            marks.insert(0, name)
        summary = " · ".join([*marks, summary])
    lines: list[RenderableType] = [
        Text(_pack(summary, inner)),
        Text(_pack("team " + (d.team_text(p.team) or "—"), inner)),
        Text(_pack(d.tokens_and_skills(p), inner)),
    ]
    tower = p.tower
    if tower:
        lines.append(Text("\n".join(d.tower_lines(tower, inner)), justify="center", style="bold"))
    else:
        lines.append(Text("no tower", style="dim"))
    lines.append(Text(_pack("took " + d.taken_text(p.taken), inner)))
    title = Text(title_text, style=f"bold {seat_style(seat)}")
    return Panel(Group(*lines), title=title, title_align="left", box=box.ROUNDED,
                 border_style=f"bold {seat_style(seat)}" if current else "dim", height=height)


#: What stays together on a line of a player's panel: ``bal 1``, ``team 10×4``, ``size 3``,
#: ``2 tokens``; anything else is one word.
_ITEM = re.compile(r"[^\W\d]+ \d\S*|\d+ tokens?|\S+")


def _pack(text: str, width: int) -> str:
    """``text`` cut into lines of at most ``width`` cells between its `` · ``-separated items
    (an item too long for a line between its words, ``bal 1`` or ``size 3`` never apart)."""
    lines: list[str] = []
    line = ""
    for i, segment in enumerate(text.split(" · ")):
        units = [segment] if cell_len(segment) <= width else _ITEM.findall(segment)
        for j, unit in enumerate(units):
            sep = " · " if i and not j else " "
            if not line:
                line = unit
            elif cell_len(line + sep + unit) <= width:
                line += sep + unit
            else:
                lines.append(line + (" ·" if sep == " · " and cell_len(line) + 2 <= width
                                     else ""))
                line = unit
    lines.append(line)
    return "\n".join(lines)


def _seats_panel(view: View, me: int | None) -> Panel:
    """A room waiting for its game: who sits in which seat, and the seats still free."""
    taken = {p.seat: p for p in view.players}
    lines = []
    for seat in range(view.seats):
        p = taken.get(seat)
        line = Text(f"seat {seat}  ")
        if p is None:
            line.append("free", style="dim")
        else:
            line.append(d.player_title(view, p, me), style=f"bold {seat_style(seat)}")
        lines.append(line)
    return Panel(Group(*lines), title="Seats", title_align="left", box=box.ROUNDED)


def _wide_panel(view: View, p: PlayerView, me: int | None, width: int, score: int | None,
                rows: int | None = None) -> Panel:
    """A player's panel across the whole width (a short screen): where they stand and their
    tokens and skills in its title (what fits there), their team and takings on the left,
    their tower drawn on the right — in at most ``rows`` lines when it can, the tower
    written on one line (bottom level first) when drawn it would not fit."""
    inner = width - 4
    seat = p.seat
    current = seat == view.turn and view.status == RoomStatus.PLAYING
    title = d.player_title(view, p, me)
    items = ["team " + (d.team_text(p.team) or "—"), "took " + d.taken_text(p.taken)]
    for said in (d.player_summary(p, score), d.tokens_and_skills(p)):
        if cell_len(f"{title} · {said}") <= inner - 2 and len(items) == 2:
            title = f"{title} · {said}"
        else:
            items.insert(len(items) - 1, said)
    drawn = d.tower_lines(p.tower, inner // 3) if p.tower else []
    right = max([cell_len(line) for line in drawn] or [len("no tower")])
    left = inner - right - 3

    def packed(cells: int, extra: list[str]) -> str:
        return "\n".join(_pack(item, cells) for item in [*items, *extra])

    body: RenderableType
    text = packed(left, [])
    written = packed(inner, ["tower " + d.tower_text(p.tower)])
    tall = 2 + max(text.count("\n") + 1, len(drawn))
    if drawn and rows is not None and tall > rows and 2 + written.count("\n") + 1 < tall:
        body = Text(written)
    else:
        grid = Table.grid(expand=True, padding=(0, 0, 0, 3))
        grid.add_column(ratio=1)
        grid.add_column(min_width=right + 3, no_wrap=True)  # (its padding counts)
        grid.add_row(Text(text), Text("\n".join(drawn), style="bold")  # (centred already)
                     if drawn else Text("no tower", style="dim"))
        body = grid
    return Panel(body, title=Text(title, style=f"bold {seat_style(seat)}"), title_align="left",
                 box=box.ROUNDED,
                 border_style=f"bold {seat_style(seat)}" if current else "dim")


def _players(view: View, me: int | None, width: int, own: int | None = None,
             short: bool = False) -> list[RenderableType]:
    """The players' panels, in rows; the waiting room's seats instead. On a ``short``
    screen narrower than :data:`SIDE_BY_SIDE`, the player's own panel across the whole width
    (in ``own`` lines when it can), the others after it."""
    players = list(view.players)
    if not players:
        return []
    if view.status == RoomStatus.WAITING:
        return [_seats_panel(view, me)]
    scores = d.scores_so_far(view)
    # The player's own panel first, the others in seat order after it (clockwise, §3): the
    # same places every turn, whoever plays first in a round.
    players.sort(key=lambda p: p.seat)
    seats = [p.seat for p in players]
    rows: list[RenderableType] = []
    if me in seats:
        at = seats.index(me)
        players = players[at:] + players[:at]
        if short and width < SIDE_BY_SIDE and len(players) > 1:
            rows.append(_wide_panel(view, players[0], me, width, scores.get(me), own))
            players = players[1:]
    n = len(players)
    per_row = n
    if width // n < MIN_PLAYER_PANEL:
        per_row = -(-n // 2) if width // -(-n // 2) >= MIN_PLAYER_PANEL else 1
    if short and width < SIDE_BY_SIDE and per_row == 1:  # one to a row: as wide as one's own
        return [*rows, *(_wide_panel(view, p, me, width, scores.get(p.seat)) for p in players)]
    for start in range(0, n, per_row):
        grid = Table.grid(expand=True)
        chunk = players[start:start + per_row]
        for _ in range(per_row):
            grid.add_column(ratio=1)
        inner = width // per_row - 4  # borders and padding
        # The panels of a row share the height of the tallest (a tower makes one taller).
        console = Console(width=width // per_row, file=io.StringIO(), color_system=None)
        height = max(len(console.render_lines(
            _player_panel(view, p, me, inner, score=scores.get(p.seat)), pad=False))
            for p in chunk)
        panels = [_player_panel(view, p, me, inner, height, scores.get(p.seat))
                  for p in chunk]
        grid.add_row(*panels, *[""] * (per_row - len(chunk)))
        rows.append(grid)
    return rows


# Events and scores -------------------------------------------------------------------------


def _event_renderables(view: View, events: Sequence[d.Event], max_lines: int,
                       width: int = 100) -> list[RenderableType]:
    """The latest events that fit in ``max_lines`` screen lines (a long chat line wraps and
    counts for each line it takes)."""
    out: list[tuple[int, RenderableType]] = []
    events = d.fold_training(events)
    for event, where in zip(events, d.regions_at(events, view), strict=True):
        parts = d.event_parts(view, event, where)
        if parts is None:
            continue
        results = event.get("results") or () if event.get("kind") == "festival" else ()
        if not results:
            line = _text(parts)
            out.append((max(1, -(-line.cell_len // max(1, width))), line))
            continue
        table = Table(box=None, padding=(0, 2, 0, 0), pad_edge=False, show_header=False)
        table.add_column(no_wrap=True)
        table.add_column(justify="right")
        table.add_column()
        table.add_column()
        for r in results:
            table.add_row(_text([d.who(view, r.get("seat"))]), str(safe(r.get("score"))),
                          d.prize_text(view, results, r) or "—",
                          "size token" if r.get("size_token") else "")
        out.append((1 + len(results), Group(_text(parts), Padding(table, (0, 0, 0, 2)))))
    kept: list[RenderableType] = []
    used = 0
    for lines, renderable in reversed(out):
        if used + lines > max_lines:
            break
        kept.append(renderable)
        used += lines
    return kept[::-1]


def _scores_panel(view: View, width: int) -> Panel:
    # Narrow, the columns sit closer together so that no name or heading is cut.
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
                  padding=(0, 1) if width >= SIDE_BY_SIDE else (0, 1, 0, 0))
    table.add_column("player", no_wrap=True)
    for c in (*d.SCORE_CATEGORIES, "total"):
        table.add_column(c, justify="right")
    table.add_column("")
    for seat, cells, mark in d.score_rows(view):
        table.add_row(_text([d.who(view, seat)]), *cells, mark,
                      style="bold" if mark == "★ winner" else "")
    note = d.tie_note(view)
    body = Group(table, Text(note, style="dim")) if note else table
    return Panel(body, title="Final score", title_align="left", box=box.ROUNDED)


# Entry points ----------------------------------------------------------------------------------


def render(view: View, me: int | None = None, events: Sequence[d.Event] = (), *,
           now: float | None = None, width: int = 100, max_event_lines: int = 4,
           short: bool = False, watching: str = "spectating",
           page: int | None = None) -> RenderableType:
    """The whole screen for ``view`` as seen from seat ``me`` (None: a spectator).

    ``events`` are recent events (oldest first); the last ``max_event_lines`` lines of them
    are shown. ``now`` (Unix time) drives the turn countdown; without it none is shown.
    ``width`` is the width the result will be printed at. ``short`` is for a screen too
    short for everything: the players' panels come before the local performances; narrower
    than :data:`SIDE_BY_SIDE`, the player's own panel spans the width right after the regions
    (their next festivals' towns in their title), so that the player's own team, tower and
    takings are on the first page — the ``page`` lines under the header, when given: a tower
    too tall for them is written on one line instead of drawn. A finished game shows its
    score table first. ``watching`` is what the header calls a spectator's view.
    """
    header, named = _header(view, me, now, width, watching)
    parts: list[RenderableType] = [header]
    if view.scores:
        parts.append(_scores_panel(view, width))
    board: list[RenderableType] = []
    if view.status != RoomStatus.WAITING or view.regions:
        if width >= SIDE_BY_SIDE:
            top = Table.grid(expand=True)
            top.add_column(ratio=60)
            top.add_column(ratio=40)
            top.add_row(_regions_panel(view, me, width), _festivals_panel(view, me, width))
            board.append(top)
        else:
            board.append(_regions_panel(view, me, width, festivals=True, short=short))
        performances = _performances_panel(view, compact=width < FULL_TILES)
    else:
        performances = None
    own = None
    if short and page is not None:  # what the first page leaves the player's own panel
        own = page - sum(_height(part, width) for part in [*parts[1:], *board])
    players = _players(view, me, width, own, short)
    if short:
        board.extend(players)
    if performances is not None:
        board.append(performances)
    if not short:
        board.extend(players)
    watchers = d.watchers_text(view)
    if watchers is not None and not named:  # the header had no room for every name
        board.append(Text(_clip(watchers, width), style="dim"))
    parts.extend(board)
    parts.extend(_event_renderables(view, events, max_event_lines, width))
    return Group(*parts)


def _height(renderable: RenderableType, width: int) -> int:
    """The lines ``renderable`` takes at ``width``."""
    console = Console(width=width, file=io.StringIO(), color_system=None)
    return len(console.render_lines(renderable, pad=False))


def print_view(console: Console, view: View, me: int | None = None,
               events: Sequence[d.Event] = (), *, now: float | None = None,
               max_event_lines: int = 4) -> None:
    """Print :func:`render` at the console's width."""
    console.print(render(view, me, events, now=now, width=console.width,
                         max_event_lines=max_event_lines))


def chat_text(view: View | None, message: Mapping[str, Any]) -> Text:
    """A ``chat`` push as one line, the speaker in their seat colour."""
    return _text(d.chat_parts(view, message))


def render_plain(view: View, me: int | None = None, events: Sequence[d.Event] = (), *,
                 now: float | None = None) -> list[str]:
    """The facts of the view and the events as plain text lines (``--plain`` mode)."""
    lines = []
    head = f"Castell · {safe(view.name)} · {d.status_text(view)}"
    turn = d.turn_text(view, me)
    if turn is not None:
        done = [a for a in d.TURN_ACTIONS if a in view.done]
        left = [a for a in d.TURN_ACTIONS if a not in done]
        head += (f" · {turn.text} · done: {' '.join(done) or 'nothing'}"
                 f" · left: {' '.join(left) or 'nothing'}")
    clock = d.countdown(view.deadline, now)
    if clock is not None:
        head += f" · time {clock}"
    if me is None:
        head += " · spectating"
    lines.append(head)
    regions = view.regions
    for r in REGIONS if regions else ():
        info = regions.get(r, RegionView((), ()))
        castellers = " ".join(map(str, info.castellers)) or "none"
        pawns = ", ".join(d.seat_name(view, s) for s in info.pawns) or "no pawns"
        lines.append(f"region {r} ({d.region_name(r)}): castellers {castellers} · {pawns} · "
                     f"trains {d.tile_name(view.wheel.get(r))} · "
                     f"next to {' '.join(d.neighbours(r))}")
    if regions:
        lines.append(f"wheel: {d.wheel_all_text(view)} · bag {view.bag}")
    nxt = d.next_festival_round(view.festivals)
    for f in view.festivals:
        state = "done" if f.done else ("next" if f.round == nxt else "later")
        lines.append(f"festival R{f.round} {safe(f.town)} ({d.region_label(f.region)}) "
                     f"size {f.size}: {state}")
    note = supply_note(view.prizes, len(view.players))
    lines.append("prizes left: " + d.prizes_text(view.prizes) + (f" · {note}" if note else ""))
    rows = view.performances
    for r in REGIONS if rows else ():
        row = rows.get(r, Row())
        tiles = ", ".join(d.performance_label(t) for t in row.tiles) or "none"
        lines.append(f"performances {r}: {tiles} · tokens {row.tokens}")
    scores = d.scores_so_far(view)
    for p in view.players:
        tower = d.tower_text(p.tower) or "none"
        lines.append(
            f"player {d.player_title(view, p, me).removeprefix('▶ ')} (seat {p.seat}): "
            f"{d.player_summary(p, scores.get(p.seat))} · "
            f"team {d.team_text(p.team) or 'none'} · "
            f"tower {tower} · {d.tokens_and_skills(p)} · "
            f"took {d.taken_text(p.taken)}"
        )
    for seat, cells, mark in d.score_rows(view):
        named = ", ".join(f"{c} {v}" for c, v in zip((*d.SCORE_CATEGORIES, "total"), cells,
                                                      strict=True))
        tail = {"★ winner": " · winner", "resigned": " · resigned"}.get(mark, "")
        lines.append(f"score {d.seat_name(view, seat)}: {named}{tail}")
    note = d.tie_note(view)
    if note:
        lines.append(note)
    watchers = d.watchers_text(view)
    if watchers is not None:
        lines.append(watchers)
    lines.extend(event_lines(view, events))
    return lines


def event_lines(view: View, events: Sequence[d.Event]) -> list[str]:
    """The events as plain lines, a festival's results indented under it (``--plain``)."""
    lines = []
    events = d.fold_training(events)
    for event, where in zip(events, d.regions_at(events, view), strict=True):
        parts = d.event_parts(view, event, where)
        if parts is None:
            continue
        lines.append(d.plain(parts))
        if event.get("kind") == "festival":
            results = event.get("results") or ()
            lines.extend("  " + d.plain(d.festival_result_words(view, r, results))
                         for r in results)
    return lines
