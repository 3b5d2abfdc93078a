"""Hand-built protocol views (docs/protocol.md, "The view") for client tests.

Each function returns a fresh dict shaped exactly like the ``view`` of a ``state`` push:
a 2-seat game in round 4, a 4-seat game in round 5, a finished 3-seat game, a room still
waiting for players, and helpers to build events as the server sends them. The client keeps
a view parsed once into a :class:`shared.view.View`: :func:`typed` does that to a sample.
"""

from __future__ import annotations

import copy
from typing import Any

import attrs

from shared.view import View, parse_view

NOW = 1_700_000_000.0


def player(seat: int, name: str, *, region: str | None = None, team: list[int] | None = None,
           tower: list[list[int]] | None = None, skills: dict[str, int] | None = None,
           tokens: int = 7, best: int = 0, tiles: list[dict[str, str]] | None = None,
           prizes: list[dict[str, str]] | None = None, sizes: list[dict[str, Any]] | None = None,
           taken_tokens: int = 0, bot: bool = False, connected: bool = True) -> dict[str, Any]:
    """A player map of the view."""
    return {
        "seat": seat,
        "name": name,
        "bot": bot,
        "connected": connected,
        "region": region,
        "team": sorted(team or [], reverse=True),
        "tower": tower or [],
        "skills": {"balance": 0, "base": 0, "mix": 0, "strength": 0, "width": 0,
                   **(skills or {})},
        "tokens": tokens,
        "best": best,
        "taken": {"tiles": tiles or [], "prizes": prizes or [], "sizes": sizes or [],
                  "tokens": taken_tokens},
    }


def _regions(castellers: dict[str, list[int]], pawns: dict[str, list[int]]) -> dict[str, Any]:
    return {
        r: {"castellers": sorted(castellers.get(r, []), reverse=True), "pawns": pawns.get(r, [])}
        for r in ("alt", "gir", "cen", "lle", "bcn", "tar", "ebr")
    }


def _festival(round_: int, region: str, town: str, size: int, done: bool = False) -> dict:
    return {"round": round_, "region": region, "town": town,
            "type": "I" if round_ <= 6 else "II", "size": size, "done": done}


def two_seat() -> dict[str, Any]:
    """Round 4 of a 2-seat normal game; Anna (seat 0) to play, she has moved already."""
    return {
        "room": "r-7f3a",
        "name": "Friday night",
        "variant": "normal",
        "seats": 2,
        "turn_seconds": 120,
        "status": "playing",
        "round": 4,
        "turn": 0,
        "first": 1,
        "done": ["move"],
        "deadline": NOW + 102,
        "bag": 118,
        "wheel": {"alt": "mix", "gir": "width", "bcn": "special", "tar": "strength",
                  "ebr": "special", "lle": "base", "cen": "balance", "all": "special"},
        "regions": _regions(
            {"alt": [10, 9, 7], "gir": [8, 3], "cen": [6, 5, 5], "lle": [9, 4],
             "bcn": [7, 6, 1], "tar": [10, 2, 2], "ebr": [5, 4]},
            {"gir": [0], "alt": [1]},
        ),
        "festivals": [
            _festival(3, "tar", "Valls", 6, done=True),
            _festival(4, "gir", "Girona", 3),
            _festival(5, "ebr", "Tortosa", 2),
            _festival(6, "cen", "Manresa", 9),
            _festival(7, "bcn", "Vilafranca del Penedès", 8),
            _festival(8, "alt", "Puigcerdà", 5),
            _festival(9, "lle", "Balaguer", 7),
            _festival(10, "tar", "Tarragona", 10),
        ],
        "performances": {
            "alt": {"tiles": ["lp04", "lp26"], "tokens": 0},
            "gir": {"tiles": ["lp12"], "tokens": 2},
            "cen": {"tiles": ["lp01", "lp19"], "tokens": 0},
            "lle": {"tiles": ["lp16", "lp30"], "tokens": 1},
            "bcn": {"tiles": ["lp08", "lp22"], "tokens": 0},
            "tar": {"tiles": [], "tokens": 0},
            "ebr": {"tiles": ["lp11", "lp27"], "tokens": 0},
        },
        "prizes": {"trophy": 11, "medal": 14, "ribbon": 14},
        "players": [
            player(0, "Anna", region="gir", team=[9, 9, 8, 7, 7, 7, 5, 5, 4, 3, 2, 1],
                   tower=[[7, 7, 7], [5, 5], [2]], skills={"balance": 1, "strength": 1},
                   tokens=5, best=8, tiles=[{"tile": "lp04", "region": "gir"}],
                   prizes=[{"prize": "trophy", "region": "tar"}],
                   sizes=[{"size": 6, "region": "tar"}], taken_tokens=1),
            player(1, "Bru", region="alt", team=[10, 9, 6, 6, 5, 2, 1], tower=[[6, 6], [2]],
                   skills={"mix": 1}, tokens=6, bot=True),
        ],
        "scores": None,
        "winners": None,
        "spectators": [],
    }


def four_seat() -> dict[str, Any]:
    """Round 5 of a 4-seat advanced game, Cai (seat 2) to play; festivals of R3–R4 done."""
    return {
        "room": "r-0001",
        "name": "Quatre",
        "variant": "advanced",
        "seats": 4,
        "turn_seconds": None,
        "status": "playing",
        "round": 5,
        "turn": 2,
        "first": 0,
        "done": ["recruit", "train"],
        "deadline": None,
        "bag": 54,
        "wheel": {"alt": "special", "gir": "mix", "bcn": "width", "tar": "special",
                  "ebr": "balance", "lle": "strength", "cen": "base", "none": "special"},
        "regions": _regions(
            {"alt": [10, 10, 9, 8, 1], "gir": [8, 8, 3, 2], "cen": [6, 5, 5, 1],
             "lle": [9, 4], "bcn": [7, 6, 6, 3, 1], "tar": [10, 2, 2], "ebr": [5, 4, 4]},
            {"bcn": [0, 2, 3], "cen": [1]},
        ),
        "festivals": [
            _festival(3, "tar", "Valls", 6, done=True),
            _festival(4, "gir", "Girona", 3, done=True),
            _festival(4, "lle", "Lleida", 8, done=True),
            _festival(5, "ebr", "Tortosa", 2),
            _festival(5, "bcn", "Barcelona", 7),
            _festival(6, "cen", "Manresa", 9),
            _festival(6, "alt", "La Seu d'Urgell", 4),
            _festival(7, "bcn", "Vilafranca del Penedès", 8),
            _festival(8, "gir", "Figueres", 1),
            _festival(8, "tar", "Tarragona", 10),
            _festival(9, "lle", "Balaguer", 6),
            _festival(9, "cen", "Vic", 5),
            _festival(10, "alt", "Puigcerdà", 3),
            _festival(10, "ebr", "Amposta", 7),
        ],
        "performances": {
            "alt": {"tiles": ["lp04", "lp26"], "tokens": 0},
            "gir": {"tiles": ["lp12", "lp19"], "tokens": 2},
            "cen": {"tiles": ["lp01"], "tokens": 0},
            "lle": {"tiles": ["lp16", "lp30"], "tokens": 1},
            "bcn": {"tiles": ["lp08", "lp32"], "tokens": 3},
            "tar": {"tiles": ["lp13"], "tokens": 0},
            "ebr": {"tiles": ["lp11", "lp27"], "tokens": 0},
        },
        "prizes": {"trophy": 10, "medal": 13, "ribbon": 14},
        "players": [
            player(0, "Anna", region="bcn", team=[9, 9, 8, 7, 7, 7, 6, 5, 5, 4, 3, 2, 1],
                   tower=[[7, 7, 7], [5, 5], [3], [1]], skills={"balance": 1, "width": 2},
                   tokens=3, best=8, prizes=[{"prize": "trophy", "region": "tar"}]),
            player(1, "Bru", region="cen", team=[10, 9, 6, 6, 5, 2, 1, 1], skills={"mix": 1},
                   tokens=6, bot=True),
            player(2, "Caterina", region="bcn",
                   team=[10, 10, 10, 10, 9, 8, 8, 8, 6, 6, 6, 4, 3, 3, 2],
                   tower=[[10, 10, 10, 10], [8, 8, 8], [6, 6], [3]], skills={"base": 1},
                   tokens=4, best=9, tiles=[{"tile": "lp02", "region": "gir"}],
                   prizes=[{"prize": "trophy", "region": "gir"},
                           {"prize": "medal", "region": "lle"}],
                   sizes=[{"size": 3, "region": "gir"}], taken_tokens=2),
            player(3, "Dolors", region="bcn", team=[8, 7, 7, 6, 4, 4, 2, 1], tokens=7,
                   connected=False),
        ],
        "scores": None,
        "winners": None,
        "spectators": [],
    }


def finished() -> dict[str, Any]:
    """A finished 3-seat game: Bru and Cai tie on total, Bru wins on best tower."""
    view = {
        "room": "r-0042",
        "name": "Diumenge",
        "variant": "normal",
        "seats": 3,
        "turn_seconds": 300,
        "status": "finished",
        "round": 10,
        "turn": None,
        "first": 1,
        "done": [],
        "deadline": None,
        "bag": 31,
        "wheel": {"alt": "width", "gir": "special", "bcn": "mix", "tar": "base",
                  "ebr": "special", "lle": "balance", "cen": "special", "all": "strength"},
        "regions": _regions(
            {"alt": [4, 1], "gir": [8], "cen": [6, 5], "lle": [], "bcn": [7, 3],
             "tar": [2, 2], "ebr": [5]},
            {"bcn": [0], "tar": [1], "lle": [2]},
        ),
        "festivals": [
            _festival(r, reg, town, size, done=True)
            for r, reg, town, size in [
                (3, "tar", "Valls", 6), (4, "gir", "Girona", 3), (5, "ebr", "Tortosa", 2),
                (5, "bcn", "Barcelona", 7), (6, "cen", "Manresa", 9),
                (6, "alt", "La Seu d'Urgell", 4), (7, "bcn", "Vilafranca del Penedès", 8),
                (8, "gir", "Figueres", 1), (9, "lle", "Balaguer", 6), (9, "cen", "Vic", 5),
                (10, "alt", "Puigcerdà", 3), (10, "ebr", "Amposta", 7),
            ]
        ],
        "performances": {r: {"tiles": [], "tokens": 0}
                         for r in ("alt", "gir", "cen", "lle", "bcn", "tar", "ebr")},
        "prizes": {"trophy": 4, "medal": 8, "ribbon": 14},
        "players": [
            player(0, "Anna", region="bcn", team=[9, 9, 8, 7, 7, 7, 5, 5, 4, 3, 2, 1],
                   tower=[[7, 7, 7], [5, 5], [2]], best=8, tokens=0),
            player(1, "Bru", region="tar", team=[10, 10, 10, 9, 9, 8, 6, 6, 5, 2, 1],
                   tower=[[10, 10, 10], [9, 9], [6, 6], [2], [1]],
                   skills={"balance": 2, "mix": 3}, best=12, tokens=1),
            player(2, "Cai", region="lle", team=[10, 9, 8, 8, 7, 6, 5, 4, 3], best=10, tokens=2),
        ],
        "scores": [
            {"seat": 0, "tower": 8, "diversity": 3, "prizes": 8, "sizes": 2,
             "performances": 9, "total": 30},
            {"seat": 1, "tower": 12, "diversity": 5, "prizes": 10, "sizes": 4,
             "performances": 3, "total": 34},
            {"seat": 2, "tower": 10, "diversity": 7, "prizes": 11, "sizes": 2,
             "performances": 4, "total": 34},
        ],
        "winners": [1],
        "spectators": [],
    }
    return view


def waiting() -> dict[str, Any]:
    """A room waiting for players: round 0, no game yet, one seat of three taken."""
    return {
        "room": "r-0100",
        "name": "Open table",
        "variant": "normal",
        "seats": 3,
        "turn_seconds": None,
        "status": "waiting",
        "round": 0,
        "turn": None,
        "first": None,
        "done": [],
        "deadline": None,
        "bag": 150,
        "wheel": {},
        "regions": {},
        "festivals": [],
        "performances": {},
        "prizes": {"trophy": 12, "medal": 14, "ribbon": 14},
        "players": [player(0, "Anna")],
        "scores": None,
        "winners": None,
        "spectators": [],
    }


def typed(view: dict[str, Any]) -> View:
    """``view`` as the client keeps it: parsed, as the session parses a pushed view."""
    return parse_view(view)


def with_names(view: dict[str, Any], names: dict[int, str]) -> dict[str, Any]:
    """A copy of ``view`` with some players renamed."""
    out = copy.deepcopy(view)
    for p in out["players"]:
        if p["seat"] in names:
            p["name"] = names[p["seat"]]
    return out


def renamed(view: View, names: dict[int, str]) -> View:
    """``view`` with some players renamed, the wire's checks bypassed: names with escape
    sequences, which no parsed view holds, for testing that the renderers still make every
    string from the server safe."""
    players = tuple(attrs.evolve(p, name=names[p.seat]) if p.seat in names else p
                    for p in view.players)
    return attrs.evolve(view, players=players)


# Events, as the server sends them in a `state` push ---------------------------------------


def action_event(seat: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "action", "seat": seat, "action": {"kind": kind, **fields}}


def festival_event(region: str, town: str, size: int,
                   results: list[tuple[int, int, str | None, bool]]) -> dict[str, Any]:
    return {
        "kind": "festival", "region": region, "town": town, "size": size,
        "results": [{"seat": s, "score": sc, "prize": p, "size_token": t}
                    for s, sc, p, t in results],
    }


def round_four_events() -> list[dict[str, Any]]:
    """What happened in the 2-seat game between Anna's last turn of round 3 and its view."""
    return [
        action_event(0, "end_turn"),
        festival_event("tar", "Valls", 6, [(0, 8, "trophy", True)]),
        {"kind": "round", "round": 4, "first": 1},
        {"kind": "turn", "seat": 1},
        action_event(1, "recruit", sizes=[6, 6]),
        action_event(1, "build", levels=[[6, 6], [2]]),
        action_event(1, "end_turn"),
        {"kind": "turn", "seat": 0},
        action_event(0, "move", region="gir"),
    ]
