"""The public view of a room (``docs/protocol.md``, "The view"), and back.

Owns what every connection in a room is shown: :class:`RoomStatus`, a room's life;
:func:`build_view` turns the room's public facts (:class:`RoomInfo`) and its game
(:class:`~shared.state.GameState`, or None before the start) into the ``view`` map of a
``state`` push, key for key; :func:`parse_view` checks a received view and
:func:`state_from_view` rebuilds from it a ``GameState`` good enough for
:func:`shared.engine.legal_actions`, so a client lists legal actions without re-implementing a
rule.

Secrets stay out by construction (§10): ``GameState`` holds no seed, the bag is shown only as
a count, and :class:`RoomInfo` has no place for a seat token.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Annotated, Any

import attrs

from shared.board import (
    CASTELLER_COUNT,
    PRIZES,
    REFILL_LEVEL,
    REGIONS,
    SKILLS,
    SPECIAL_TOKENS,
    TOWNS,
    wheel_segments,
    wheel_tile_index,
)
from shared.errors import ProtocolError
from shared.state import Festival, GameState, Player, Prizes, Row, Score, Skills, Taken
from shared.wire import (
    OMIT_NONE,
    PlayerName,
    RegionId,
    RoomId,
    RoomName,
    Seat,
    Seats,
    Size,
    TileId,
    TurnSeconds,
    VariantName,
    between,
    converter,
    field_error,
    one_of,
)

# What a room tells the view ------------------------------------------------------------------


class RoomStatus(StrEnum):
    """A room's life: seats being filled, a game under way, a game over. A ``StrEnum``, so a
    status is its plain name on the wire."""

    WAITING = "waiting"
    PLAYING = "playing"
    FINISHED = "finished"


#: A room status as the wire carries it (``view.status``, ``rooms[].status``).
RoomStatusName = Annotated[str, one_of(*RoomStatus)]


@attrs.frozen
class SeatInfo:
    """A taken seat as everyone may see it: who sits there, a bot or not, online or not."""

    seat: int
    name: str
    bot: bool = False
    connected: bool = True
    #: A rated room's player: the rating now, and (once the game is rated) the one before.
    rating: int | None = None
    rating_before: int | None = None
    #: Whether that rating is still provisional (None outside rated rooms).
    provisional: bool | None = None


def _seat_infos(value: Iterable[SeatInfo]) -> tuple[SeatInfo, ...]:
    return tuple(value)


def _names(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen
class RoomInfo:
    """The public facts of a room that the game state does not hold.

    ``players`` lists the taken seats. There is deliberately no field for a seat token or a
    seed: what is not here cannot leak into a view.
    """

    room: str
    name: str
    variant: str
    seats: int
    turn_seconds: int | None = None
    status: str = RoomStatus.WAITING.value  # a RoomStatus
    deadline: float | None = None  # Unix time the current turn times out
    players: tuple[SeatInfo, ...] = attrs.field(default=(), converter=_seat_infos)
    #: The names of the connections watching, in the order they came.
    spectators: tuple[str, ...] = attrs.field(default=(), converter=_names)
    #: A rated room whose end was not rated: why (server.features.ratings).
    unrated: str | None = None
    #: Whether the room is private (not listed; joined by its code, or a rematch's offer).
    private: bool = False


# The view, as typed classes -------------------------------------------------------------------

TurnStep = Annotated[str, one_of("move", "recruit", "train", "special")]
SkillTile = Annotated[str, one_of(*(s.value for s in SKILLS), "special")]
PrizeName = Annotated[str, one_of(*PRIZES)]


@attrs.frozen
class TakenTile:
    tile: TileId
    region: RegionId


@attrs.frozen
class TakenPrize:
    prize: PrizeName
    region: RegionId


@attrs.frozen
class TakenSize:
    size: Size
    region: RegionId


@attrs.frozen
class TakenView:
    """What a player took (§5, §6), by the region it belongs to (§9 diversity)."""

    tiles: tuple[TakenTile, ...]
    prizes: tuple[TakenPrize, ...]
    sizes: tuple[TakenSize, ...]
    tokens: int  # special action tokens taken from performance rows


@attrs.frozen
class PlayerView:
    """A player map of the view."""

    seat: Seat
    name: PlayerName
    bot: bool
    connected: bool
    region: RegionId | None
    team: tuple[Size, ...]  # every casteller owned, those in the tower included, largest first
    tower: tuple[tuple[Size, ...], ...]  # levels, bottom first
    skills: Skills
    tokens: int  # unspent special action tokens
    best: int  # best tower score (§5.2)
    taken: TakenView
    #: In a rated room (an addition, absent otherwise): the player's rating, and once the
    #: game's end has been rated, the rating before it.
    rating: int | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    rating_before: int | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    #: In a rated room (an addition): whether the rating is still provisional.
    provisional: bool | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class RegionView:
    castellers: tuple[Size, ...]  # largest first
    pawns: tuple[Seat, ...]


@attrs.frozen
class ScoreView:
    """A final score (§9): the five categories and their total."""

    seat: Seat
    tower: int
    diversity: int
    prizes: int
    sizes: int
    performances: int
    total: int


@attrs.frozen
class View:
    """The whole public view; ``build_view`` returns it unstructured, key for key."""

    room: RoomId
    name: RoomName
    variant: VariantName
    seats: Seats
    turn_seconds: TurnSeconds | None
    status: RoomStatusName
    round: int  # 0 before the start, then 1-10
    turn: Seat | None
    first: Seat | None
    done: tuple[TurnStep, ...]
    deadline: float | None
    bag: Annotated[int, between(0, CASTELLER_COUNT)]  # how many are in the bag — never which
    wheel: dict[str, SkillTile]  # segment -> tile this round; empty before the start
    regions: dict[RegionId, RegionView]  # board order; empty before the start
    festivals: tuple[Festival, ...]  # calendar order
    performances: dict[RegionId, Row]  # board order; empty before the start
    prizes: Prizes  # the supply left
    players: tuple[PlayerView, ...]  # by seat
    scores: tuple[ScoreView, ...] | None  # None until the end
    winners: tuple[Seat, ...] | None  # None until the end
    #: Who is watching, by name (an addition: absent from a version 1 server's view).
    spectators: tuple[PlayerName, ...] = ()
    #: A finished rated game that was not rated: why (an addition, absent otherwise).
    unrated: str | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    #: True for a private room (an addition, absent for a listed one).
    private: bool | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    #: The seats that resigned, in the order they did (an addition, absent while nobody has:
    #: docs/rules.md §10, "Resigning").
    resigned: tuple[Seat, ...] | None = attrs.field(default=None, metadata={OMIT_NONE: True})


# Building -------------------------------------------------------------------------------------


def _seat_info(room: RoomInfo) -> dict[int, SeatInfo]:
    return {info.seat: info for info in room.players}


def _taken(player: Player) -> TakenView:
    return TakenView(
        tiles=tuple(TakenTile(str(t.item), t.region) for t in player.tiles),
        prizes=tuple(TakenPrize(str(t.item), t.region) for t in player.prizes),
        sizes=tuple(TakenSize(int(t.item), t.region) for t in player.sizes),
        tokens=player.taken_tokens,
    )


def _player(player: Player, info: SeatInfo | None) -> PlayerView:
    return PlayerView(
        seat=player.seat,
        name=player.name,
        bot=info.bot if info else False,
        connected=info.connected if info else False,
        region=player.region,
        team=tuple(sorted(player.team, reverse=True)),
        tower=player.tower,
        skills=player.skills,
        tokens=player.tokens,
        best=player.best,
        taken=_taken(player),
        rating=info.rating if info else None,
        rating_before=info.rating_before if info else None,
        provisional=info.provisional if info else None,
    )


def _waiting_player(info: SeatInfo) -> PlayerView:
    # Before the start a seat holds no pieces yet.
    return PlayerView(
        seat=info.seat, name=info.name, bot=info.bot, connected=info.connected, region=None,
        team=(), tower=(), skills=Skills(), tokens=SPECIAL_TOKENS, best=0,
        taken=TakenView((), (), (), 0), rating=info.rating, rating_before=info.rating_before,
        provisional=info.provisional,
    )


def _score(score: Score) -> ScoreView:
    return ScoreView(score.seat, score.tower, score.diversity, score.prizes, score.sizes,
                     score.performances, score.total)


def _view(room: RoomInfo, **game: Any) -> View:
    # The room's own facts, and what its game (or the lack of one) shows.
    return View(
        room=room.room, name=room.name, variant=room.variant, seats=room.seats,
        turn_seconds=room.turn_seconds, status=room.status, deadline=room.deadline,
        spectators=room.spectators, unrated=room.unrated, private=room.private or None,
        **game,
    )


def make_view(room: RoomInfo, state: GameState | None) -> View:
    """The view of ``room`` playing ``state`` (None before the start), as a :class:`View`."""
    if state is None:
        return _view(
            room, round=0, turn=None, first=None, done=(), bag=CASTELLER_COUNT, wheel={},
            regions={}, festivals=(), performances={}, prizes=Prizes(),
            players=tuple(_waiting_player(i) for i in sorted(room.players, key=lambda i: i.seat)),
            scores=None, winners=None,
        )
    seats = _seat_info(room)
    pawns: dict[str, list[int]] = {r: [] for r in REGIONS}
    for p in state.players:
        if p.region is not None:
            pawns[p.region].append(p.seat)
    return _view(
        room,
        round=state.round,
        turn=state.turn,
        first=state.first,
        done=state.done,
        bag=len(state.bag),
        wheel=state.wheel_tiles(),
        regions={
            r: RegionView(tuple(sorted(c, reverse=True)), tuple(pawns[r]))
            for r, c in zip(REGIONS, state.regions, strict=True)
        },
        festivals=state.festivals,
        performances=dict(zip(REGIONS, state.rows, strict=True)),
        prizes=state.prizes,
        players=tuple(_player(p, seats.get(p.seat)) for p in state.players),
        scores=None if state.scores is None else tuple(map(_score, state.scores)),
        winners=state.winners,
        resigned=state.resigned or None,
    )


class ViewParts:
    """The parts of the last view :func:`build_view` wrote for one room, for the next one to
    reuse: a player's map while the player (a frozen object: an action that leaves a player
    as it was leaves the very same object) and its seat's facts are unchanged, the wheel, the
    festivals and the performances while the state's tuples they come from are the same.

    So the view after an action shares every map that the action did not change with the
    view before it: cheaper to write, to compare (:func:`shared.patch.diff` skips a shared
    map at once), and fewer objects for the collector. The maps are shared, so a view must
    be read only (the server only encodes and compares them; :func:`shared.patch.apply`
    copies what it changes).
    """

    __slots__ = ("festivals", "players", "regions", "rows", "wheel")

    def __init__(self) -> None:
        self.players: dict[int, tuple[Player, SeatInfo | None, dict[str, Any]]] = {}
        self.wheel: tuple[tuple[str, ...], int, str, dict[str, str]] | None = None
        self.festivals: tuple[tuple[Festival, ...], list[dict[str, Any]]] | None = None
        self.rows: tuple[tuple[Row, ...], dict[str, Any]] | None = None
        #: Each region's castellers and pawns, and the map made of them.
        self.regions: dict[str, tuple[tuple[int, ...], list[int], dict[str, Any]]] = {}


def build_view(room: RoomInfo, state: GameState | None,
               parts: ViewParts | None = None) -> dict[str, Any]:
    """The ``view`` map of a ``state`` push for ``room`` playing ``state``; with ``parts``,
    reusing the maps of the view built before them that are unchanged (:class:`ViewParts`).

    Before the start (``state`` None): round 0, no turn, no first player, an empty wheel,
    empty ``regions`` and ``performances``, no festivals, the whole bag (150), the full prize
    supply, and the taken seats as players with nothing yet but their 7 special tokens.

    It is ``converter.unstructure(make_view(room, state), View)``, key for key and type for
    type (lists where the classes hold tuples); a started game's view, built after every
    change, is written out directly, at a third of the cost of building the classes and
    unstructuring them.
    """
    if state is None:
        return converter.unstructure(make_view(room, state), View)
    seats = _seat_info(room)
    prizes = state.prizes
    if parts is None:
        parts = ViewParts()
    pawns: dict[str, list[int]] = {r: [] for r in REGIONS}
    for p in state.players:
        if p.region is not None:
            pawns[p.region].append(p.seat)
    regions: dict[str, Any] = {}
    for r, c in zip(REGIONS, state.regions, strict=True):
        known_region = parts.regions.get(r)
        if known_region is None or known_region[0] is not c or known_region[1] != pawns[r]:
            known_region = parts.regions[r] = (
                c, pawns[r], {"castellers": sorted(c, reverse=True), "pawns": pawns[r]})
        regions[r] = known_region[2]
    wheel = parts.wheel
    if (wheel is None or wheel[0] is not state.wheel or wheel[1] != state.round
            or wheel[2] != state.variant):
        wheel = parts.wheel = (state.wheel, state.round, state.variant, state.wheel_tiles())
    festivals = parts.festivals
    if festivals is None or festivals[0] is not state.festivals:
        festivals = parts.festivals = (state.festivals, [
            {"round": f.round, "region": f.region, "town": f.town, "type": f.type,
             "size": f.size, "done": f.done}
            for f in state.festivals
        ])
    rows = parts.rows
    if rows is None or rows[0] is not state.rows:
        rows = parts.rows = (state.rows, {
            r: {"tiles": list(row.tiles), "tokens": row.tokens}
            for r, row in zip(REGIONS, state.rows, strict=True)
        })
    players = []
    for p in state.players:
        info = seats.get(p.seat)
        known = parts.players.get(p.seat)
        if known is None or known[0] is not p or known[1] != info:
            known = parts.players[p.seat] = (p, info, _player_map(p, info))
        players.append(known[2])
    return {
        "room": room.room, "name": room.name, "variant": room.variant, "seats": room.seats,
        "turn_seconds": room.turn_seconds, "status": room.status,
        "round": state.round,
        "turn": state.turn,
        "first": state.first,
        "done": list(state.done),
        "deadline": room.deadline,
        "bag": len(state.bag),
        "wheel": wheel[3],
        "regions": regions,
        "festivals": festivals[1],
        "performances": rows[1],
        "prizes": {"trophy": prizes.trophy, "medal": prizes.medal, "ribbon": prizes.ribbon},
        "players": players,
        "scores": None if state.scores is None else [
            {"seat": s.seat, "tower": s.tower, "diversity": s.diversity, "prizes": s.prizes,
             "sizes": s.sizes, "performances": s.performances, "total": s.total}
            for s in state.scores
        ],
        "winners": None if state.winners is None else list(state.winners),
        "spectators": list(room.spectators),
        **({"unrated": room.unrated} if room.unrated is not None else {}),
        **({"private": True} if room.private else {}),
        **({"resigned": list(state.resigned)} if state.resigned else {}),
    }


def _player_map(player: Player, info: SeatInfo | None) -> dict[str, Any]:
    # The player map of build_view: what _player builds, written out as plain data.
    out = _player_fields(player, info)
    if info is not None and info.rating is not None:
        out["rating"] = info.rating
        if info.rating_before is not None:
            out["rating_before"] = info.rating_before
    if info is not None and info.provisional is not None:
        out["provisional"] = info.provisional
    return out


def _player_fields(player: Player, info: SeatInfo | None) -> dict[str, Any]:
    skills = player.skills
    return {
        "seat": player.seat,
        "name": player.name,
        "bot": info.bot if info else False,
        "connected": info.connected if info else False,
        "region": player.region,
        "team": sorted(player.team, reverse=True),
        "tower": [list(level) for level in player.tower],
        "skills": {"balance": skills.balance, "base": skills.base, "mix": skills.mix,
                   "strength": skills.strength, "width": skills.width},
        "tokens": player.tokens,
        "best": player.best,
        "taken": {
            "tiles": [{"tile": str(t.item), "region": t.region} for t in player.tiles],
            "prizes": [{"prize": str(t.item), "region": t.region} for t in player.prizes],
            "sizes": [{"size": int(t.item), "region": t.region} for t in player.sizes],
            "tokens": player.taken_tokens,
        },
    }


# Reading ----------------------------------------------------------------------------------------


def parse_view(view: Any) -> View:
    """The received ``view`` map as a :class:`View`, checked key by key.

    Raises :class:`ProtocolError` (``invalid_field``, ``field`` such as
    ``players[1].team[0]``) for a malformed view.
    """
    try:
        return converter.structure(view, View)
    except Exception as exc:
        error = field_error(exc)
        raise ProtocolError(
            f"view: {error.message}", code=error.code,
            field=f"view.{error.field}" if error.field else "view",
        ) from None


def _bad(field: str, what: str) -> ProtocolError:
    return ProtocolError(f"view.{field} {what}", code="invalid_field", field=f"view.{field}")


def _check_complete(v: View) -> None:
    # What the engine indexes must all be there: one player per seat, every region, every
    # segment, and the festival towns of the rules (§5).
    if v.round < 1:
        raise _bad("round", "is 0: the game has not started")
    if [p.seat for p in v.players] != list(range(v.seats)):
        raise _bad("players", f"must list seats 0 to {v.seats - 1} in order")
    for key in ("regions", "performances"):
        if list(getattr(v, key)) != list(REGIONS):
            raise _bad(key, "must map every region, in board order")
    if set(v.wheel) != set(wheel_segments(v.variant)):
        raise _bad("wheel", "must map every segment of the wheel")
    for i, f in enumerate(v.festivals):
        if TOWNS.get(f.region, {}).get(f.type) != f.town:
            raise _bad(f"festivals[{i}]", "names no festival town of the rules")
    seats = {"turn": v.turn, "first": v.first,
             **{f"winners[{i}]": s for i, s in enumerate(v.winners or ())},
             **{f"resigned[{i}]": s for i, s in enumerate(v.resigned or ())}}
    for key, seat in seats.items():
        if seat is not None and seat >= v.seats:
            raise _bad(key, f"must be a seat from 0 to {v.seats - 1}")


def state_from_view(view: Mapping[str, Any] | View) -> GameState:
    """A :class:`GameState` rebuilt from a view of a started game, for ``legal_actions``.

    The bag is a placeholder of the right length (its order is secret: every size in it is
    0); the wheel's ring is recovered from what each segment shows and the round;
    ``turns_taken`` is ``(turn − first) mod seats``. Raises :class:`ProtocolError` when the
    view is malformed or the game has not started.
    """
    v = view if isinstance(view, View) else parse_view(view)
    _check_complete(v)
    ring = [""] * 8
    for i, segment in enumerate(wheel_segments(v.variant)):
        ring[wheel_tile_index(i, v.round)] = v.wheel[segment]
    players = tuple(
        Player(
            seat=p.seat, name=p.name, region=p.region, team=p.team, tower=p.tower,
            skills=p.skills, tokens=p.tokens, best=p.best,
            tiles=tuple(Taken(t.tile, t.region) for t in p.taken.tiles),
            prizes=tuple(Taken(t.prize, t.region) for t in p.taken.prizes),
            sizes=tuple(Taken(t.size, t.region) for t in p.taken.sizes),
            taken_tokens=p.taken.tokens,
        )
        for p in v.players
    )
    return GameState(
        variant=v.variant,
        players=players,
        bag=(0,) * v.bag,
        regions=tuple(v.regions[r].castellers for r in REGIONS),
        refill=REFILL_LEVEL[v.seats],
        wheel=tuple(ring),
        festivals=v.festivals,
        rows=tuple(v.performances[r] for r in REGIONS),
        prizes=v.prizes,
        round=v.round,
        first=v.first if v.first is not None else 0,
        turn=v.turn,
        turns_taken=0 if v.turn is None or v.first is None else (v.turn - v.first) % v.seats,
        done=v.done,
        scores=None if v.scores is None else tuple(
            Score(s.seat, s.tower, s.diversity, s.prizes, s.sizes, s.performances)
            for s in v.scores
        ),
        winners=v.winners,
        resigned=tuple(v.resigned or ()),
    )

