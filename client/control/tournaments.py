"""Swiss tournaments as the player reads them: the ``tournaments`` list, one tournament's
standings and current tables (``tournament N``), and what the ``tournament_table`` and
``tournament_ended`` pushes say (docs/protocol.md, "Swiss tournaments")."""

from __future__ import annotations

from client.control.lobby import timer_text
from shared import messages as m
from shared.sanitize import safe


def list_lines(entries: tuple[m.TournamentEntry, ...]) -> list[str]:
    """The ``tournaments`` reply, numbered for `tournament N`."""
    if not entries:
        return ["Tournaments: none yet — `tournament create NAME rounds=3 seats=2` makes one"]
    lines = ["Tournaments, newest first (`tournament N` shows one, `tournament join N`):"]
    for i, e in enumerate(entries, 1):
        progress = f"round {e.round}/{e.rounds}" if e.status == "running" \
            else f"{e.rounds} round{'s' if e.rounds != 1 else ''}"
        lines.append(f"  {i:>2}. {safe(e.name)} — {e.status} · {progress} · {e.seats} seats "
                     f"· {e.players} player{'s' if e.players != 1 else ''} · id {e.tournament}")
    return lines


def _points(value: float) -> str:
    return f"{value:g}"


def _place(place: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(place, f"{place}th")


def tournament_lines(t: m.TournamentReply) -> list[str]:
    """One tournament: its settings, standings (rank, points, Buchholz, game score, games)
    and the current round's tables with their places once over."""
    where = {"open": "open: `tournament join " + t.tournament + "` enters it",
             "running": f"round {t.round} of {t.rounds}",
             "finished": f"finished after {t.round} rounds",
             "cancelled": f"cancelled in round {t.round}"}[t.status]
    by = f" · by {safe(t.creator)}" if t.creator else ""
    lines = [f"{safe(t.name)} (id {t.tournament}) · {where}",
             f"  Swiss · {t.rounds} rounds · {t.seats} seats · {timer_text(t.turn_seconds)} "
             f"turns · {'rated' if t.rated else 'unrated'}{by}"]
    if not t.standings:
        lines.append("  nobody has entered yet")
        return lines
    lines.append("  rank player            points  Buchholz  score  games")
    for s in t.standings:
        left = " (left)" if s.withdrawn else ""
        lines.append(f"  {s.rank:>4} {safe(s.name)[:16]:<16}  {_points(s.points):>6}  "
                     f"{_points(s.buchholz):>8}  {s.score:>5}  {s.games:>5}{left}")
    if t.tables:
        lines.append(f"  Round {t.round} tables (`watch ROOM` follows one):")
    for table in t.tables:
        if table.places is None:
            result = "playing"
        else:
            result = ", ".join(f"{safe(n)} {_place(p)}"
                               for n, p in sorted(zip(table.players, table.places,
                                                      strict=True), key=lambda np: np[1]))
        lines.append(f"    {' – '.join(safe(n) for n in table.players)} · {result} · "
                     f"room {table.room}")
    if t.bye is not None:
        lines.append(f"    bye: {safe(t.bye)}")
    return lines


def table_text(push: m.TournamentTablePush) -> str:
    """A round paired: where the player sits (or that they sit it out)."""
    head = f"{safe(push.name)!r}, round {push.round}"
    if push.bye:
        return f"{head}: you sit this round out (a bye scores 1 point)"
    return f"{head}: your table is ready (room {push.room}, seat {push.seat})"


def ended_text(push: m.TournamentEndedPush) -> str:
    """A tournament over: the player's final rank, or that the host cancelled it."""
    if push.status == "cancelled":
        return f"{safe(push.name)!r} was cancelled by the host"
    rank = f": you placed {_place(push.rank)}" if push.rank is not None else ""
    return (f"{safe(push.name)!r} is over{rank} — `tournament {push.tournament}` shows the "
            "standings")
