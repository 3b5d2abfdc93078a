"""The wire's value types and the one converter that checks them.

Owns what every message and the public view share on the wire:

* :func:`printable` — which text a person may send (names, room names, chat);
* constrained types: ``Annotated[base, Check(...)]`` aliases such as :data:`Seats` or
  :data:`RegionId`, each carrying the test a value must pass and the words for its failure;
* :data:`converter` — a ``cattrs`` converter that structures untrusted wire data strictly
  (an int is an int and never a bool, a list is a list and never a string, unknown keys are
  refused, ``as_`` travels as ``as``) and unstructures attrs classes back into plain maps.
  :func:`make_converter` registers every hook it has — the state classes a view shows and the
  action classes with their limits (:data:`ACTION_FIELD_TYPES`) included — so what it accepts
  never depends on which modules were imported;
* :func:`field_error` — turning whatever the converter raised into one
  :class:`~shared.errors.ProtocolError` that names the field to blame.

Nothing here does I/O; bytes are :mod:`shared.codec`'s business.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Annotated, Any, Final, get_args, get_origin

import attrs
import cattrs
from cattrs import cols
from cattrs.errors import (
    AttributeValidationNote,
    BaseValidationError,
    ForbiddenExtraKeysError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from shared.actions import ACTION_TYPES, EFFECT_FIELD, RECORDED_TYPES
from shared.board import (
    MAX_RANK,
    MAX_SEATS,
    MIN_SEATS,
    PRIZE_SUPPLY,
    REGIONS,
    ROUNDS,
    SKILLS,
    TILES,
    Variant,
)
from shared.errors import ProtocolError
from shared.state import Festival, Prizes, Row, Score, Skills

# Printable text ---------------------------------------------------------------------------

#: Unicode categories a person's text may not contain: control characters (C0 with ESC, DEL,
#: C1 with CSI), lone surrogates, and the line/paragraph separators.
_UNPRINTABLE_CATEGORIES: Final = frozenset({"Cc", "Cs", "Zl", "Zp"})
#: Bidirectional formatting characters, which can make text display other than it reads.
_BIDI_CONTROLS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def printable(text: str) -> bool:
    """True when ``text`` holds no character that could disturb a terminal or a reader.

    Refused: every control character (C0 including tab, newline and ESC; DEL; C1 including
    CSI), lone surrogates, line and paragraph separators, and the bidirectional overrides,
    embeddings, isolates and marks. Everything else — letters of any script, accents,
    punctuation, spaces, emoji — is printable.
    """
    return all(
        ch not in _BIDI_CONTROLS and unicodedata.category(ch) not in _UNPRINTABLE_CATEGORIES
        for ch in text
    )


# Checks and constrained types -------------------------------------------------------------


class Invalid(ValueError):
    """Raised by a check when a value has the right type but the wrong content."""


@attrs.frozen
class Check:
    """What a value must satisfy once structured: ``test``, and ``says`` when it fails.

    Used as ``Annotated`` metadata: ``Annotated[int, between(2, 4)]``.
    """

    test: Callable[[Any], bool]
    says: str


def between(lo: int, hi: int) -> Check:
    """An integer from ``lo`` to ``hi`` inclusive."""
    return Check(lambda v: lo <= v <= hi, f"must be from {lo} to {hi}")


def one_of(*values: str) -> Check:
    """One of the given strings."""
    allowed = frozenset(values)
    return Check(lambda v: v in allowed, "must be one of " + ", ".join(values))


def text(lo: int, hi: int) -> Check:
    """``lo`` to ``hi`` printable characters (code points, see :func:`printable`)."""
    return Check(
        lambda v: lo <= len(v) <= hi and printable(v),
        f"must be {lo} to {hi} printable characters",
    )


def length(lo: int, hi: int) -> Check:
    """A list of ``lo`` to ``hi`` items."""
    return Check(lambda v: lo <= len(v) <= hi, f"must hold {lo} to {hi} items")


# The limits of docs/protocol.md, named once.
ID_LIMIT: Final = 2**31  # message ids: 0 <= id < 2^31
VERSION_LIMIT: Final = 2**53  # room versions: integers a JSON reader holds exactly
PLAYER_NAME_MAX: Final = 24
ROOM_NAME_MAX: Final = 40
CHAT_MAX: Final = 200
ROOM_ID_MAX: Final = 64  # room ids and private-room codes
TOKEN_MAX: Final = 128  # seat tokens
HISTORY_MAX: Final = 500  # history entries in one reply
URL_MAX: Final = 256  # a server node's address (``moved``, ``rooms.nodes``)
NODES_MAX: Final = 64  # node addresses in one ``rooms`` reply
TURN_SECONDS_MIN: Final = 10
#: Seven days: a correspondence game gives each turn hours or days.
TURN_SECONDS_MAX: Final = 7 * 24 * 3600
KEY_MIN: Final = 32  # an account's key (``hello.key``)
KEY_MAX: Final = 128
GAMES_MAX: Final = 100  # entries in one ``games`` reply
RECRUIT_MAX: Final = 2  # §4: up to two castellers
#: A tower has at most 13 levels: 10 sizes, plus up to 3 levels standing on the same size
#: (strength rank 3, §7).
MAX_LEVELS: Final = 13
#: A level holds at most 30 castellers: 15 of a size exist and a mixed level spans two
#: adjacent sizes (§1, §7).
MAX_LEVEL_WIDTH: Final = 30

MessageId = Annotated[int, between(0, ID_LIMIT - 1)]
Version = Annotated[int, between(0, VERSION_LIMIT - 1)]
Seat = Annotated[int, between(0, MAX_SEATS - 1)]
Seats = Annotated[int, between(MIN_SEATS, MAX_SEATS)]
SeatCount = Annotated[int, between(0, MAX_SEATS)]
Size = Annotated[int, between(1, 10)]
TurnSeconds = Annotated[int, between(TURN_SECONDS_MIN, TURN_SECONDS_MAX)]
PlayerName = Annotated[str, text(1, PLAYER_NAME_MAX)]
RoomName = Annotated[str, text(1, ROOM_NAME_MAX)]
ChatText = Annotated[str, text(1, CHAT_MAX)]
RoomId = Annotated[str, text(1, ROOM_ID_MAX)]
Token = Annotated[str, text(1, TOKEN_MAX)]
NodeUrl = Annotated[str, text(1, URL_MAX)]
HistoryLimit = Annotated[int, between(1, HISTORY_MAX)]
#: An action's place in a game's record (``record.from``, ``record.next``), 0 first.
ActionIndex = Annotated[int, between(0, ID_LIMIT - 1)]
NodeUrls = Annotated[tuple[NodeUrl, ...], length(0, NODES_MAX)]
AccountKey = Annotated[str, text(KEY_MIN, KEY_MAX)]
GamesLimit = Annotated[int, between(1, GAMES_MAX)]
GameFilter = Annotated[str, one_of("playing", "finished")]
VariantName = Annotated[str, one_of(*Variant)]
BotLevel = Annotated[str, one_of("easy", "normal", "hard", "random", "greedy")]
JoinAs = Annotated[str, one_of("player", "spectator")]
RegionId = Annotated[str, one_of(*REGIONS)]
TileId = Annotated[str, one_of(*TILES)]
Effect = Annotated[str, one_of(*EFFECT_FIELD)]
TrainChoice = Annotated[str, one_of("region", "all")]
ActionKind = Annotated[str, one_of(*ACTION_TYPES)]
#: The kind of an entry of a game's list of actions: an action's, or ``resign``.
RecordedKind = Annotated[str, one_of(*RECORDED_TYPES)]
RecruitSizes = Annotated[tuple[Size, ...], length(1, RECRUIT_MAX)]
Level = Annotated[tuple[Size, ...], length(1, MAX_LEVEL_WIDTH)]
Levels = Annotated[tuple[Level, ...], length(1, MAX_LEVELS)]

#: Metadata key: an attrs field whose value is left off the wire when it is None.
OMIT_NONE: Final = "castell_omit_none"


# The converter ------------------------------------------------------------------------------


def _strict(kind: type | tuple[type, ...], says: str) -> Callable[[Any, Any], Any]:
    """Accept exactly ``kind`` (``type(v) is``, so a bool is never an int)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)

    def hook(value: Any, _: Any) -> Any:
        if type(value) not in kinds:
            raise Invalid(says)
        return value

    return hook


def _string(value: Any, _: Any) -> str:
    # Off the wire every string is a plain str; a StrEnum member handed over in the same
    # process (a RoomStatus, a Variant) is read as its plain string.
    if not isinstance(value, str):
        raise Invalid("must be a string")
    return str.__str__(value)


def _number(value: Any, _: Any) -> float:
    if type(value) not in (int, float):
        raise Invalid("must be a number")
    return float(value)


def _is_checked(t: Any) -> bool:
    return get_origin(t) is Annotated and any(isinstance(m, Check) for m in t.__metadata__)


def _checked_factory(t: Any, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    base = get_args(t)[0]
    base_hook = conv.get_structure_hook(base)
    checks = [m for m in t.__metadata__ if isinstance(m, Check)]

    def hook(value: Any, _: Any) -> Any:
        out = base_hook(value, base)
        for check in checks:
            if not check.test(out):
                raise Invalid(check.says)
        return out

    return hook


def _sequence_factory(t: Any, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    # cattrs would happily iterate a string or a map into a list; the wire wants an array.
    inner = (
        cols.homogenous_tuple_structure_factory(t, conv)
        if get_origin(t) is tuple
        else cols.list_structure_factory(t, conv)
    )

    def hook(value: Any, _: Any) -> Any:
        if type(value) not in (list, tuple):
            raise Invalid("must be a list")
        return inner(value, t)

    return hook


def _mapping_factory(t: Any, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    inner = cols.mapping_structure_factory(t, conv)

    def hook(value: Any, _: Any) -> Any:
        if type(value) is not dict:
            raise Invalid("must be a map")
        return inner(value, t)

    return hook


def _wire_names(cl: type) -> dict[str, Any]:
    # A trailing underscore dodges a Python keyword (`as_`); the wire uses the bare word.
    return {a.name: override(rename=a.name[:-1]) for a in attrs.fields(cl) if a.name.endswith("_")}


def _as_type(conv: cattrs.Converter, t: Any) -> Callable[[Any, Any], Any]:
    # cattrs passes a hook the field's declared type; some hooks (Optional's) dispatch on it.
    hook = conv.get_structure_hook(t)
    return lambda value, _: hook(value, t)


def map_structure_hook(
    cl: type, conv: cattrs.Converter, **field_types: Any
) -> Callable[[Any, Any], Any]:
    """A strict hook structuring attrs class ``cl`` from a wire map.

    Unknown keys are refused, ``as_`` is read from ``as``, and ``field_types`` may give a
    field a stricter type than its annotation (``region=RegionId``).
    """
    overrides = _wire_names(cl)
    for name, t in field_types.items():
        overrides[name] = override(
            rename=overrides[name].rename if name in overrides else None,
            struct_hook=_as_type(conv, t),
        )
    inner: Callable[[Any, Any], Any] = make_dict_structure_fn(
        cl, conv, _cattrs_forbid_extra_keys=True, _cattrs_detailed_validation=True, **overrides
    )

    def hook(value: Any, _: Any) -> Any:
        if type(value) is not dict:
            raise Invalid("must be a map")
        return inner(value, cl)

    return hook


def _attrs_structure_factory(cl: type, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    return map_structure_hook(cl, conv)


def _attrs_unstructure_factory(cl: type, conv: cattrs.Converter) -> Callable[[Any], Any]:
    overrides = _wire_names(cl)
    for a in attrs.fields(cl):
        if a.metadata.get(OMIT_NONE):
            overrides[a.name] = override(
                rename=overrides[a.name].rename if a.name in overrides else None,
                omit_if_default=True,
            )
    return make_dict_unstructure_fn(cl, conv, **overrides)


def _unstructure_score(score: Score) -> dict[str, int]:
    # §9: the five categories, and their total, which Score computes.
    return {
        "seat": score.seat, "tower": score.tower, "diversity": score.diversity,
        "prizes": score.prizes, "sizes": score.sizes, "performances": score.performances,
        "total": score.total,
    }


def _has_own_form(t: Any) -> bool:
    """True for a class whose wire map is not its fields one for one (an action request
    carries its action flat beside its ``id``): it says itself how to read and write that map,
    with a classmethod ``structure_wire(value)`` and a method ``unstructure_wire()``. The
    converter finds them on the class, so no other module registers a hook for it."""
    return isinstance(t, type) and callable(getattr(t, "structure_wire", None))


def _own_structure_factory(t: Any, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    return lambda value, _: t.structure_wire(value)


def _own_unstructure_factory(t: Any, conv: cattrs.Converter) -> Callable[[Any], Any]:
    return lambda message: message.unstructure_wire()


#: The wire type of each field an action class may have (:mod:`shared.actions` declares them
#: with plain types; the limits live here, with the rest of the schema).
ACTION_FIELD_TYPES: Final[dict[str, Any]] = {
    "region": RegionId,
    "size": Size,
    "tile": TileId,
    "effect": Effect,
    "choice": TrainChoice,
    "sizes": RecruitSizes,
    "levels": Levels,
    "ends": bool,
}


def _action_hook(cls: type, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    return map_structure_hook(cls, conv, **{
        a.name: ACTION_FIELD_TYPES[a.name] if a.default is attrs.NOTHING
        else ACTION_FIELD_TYPES[a.name] | None
        for a in attrs.fields(cls)
    })


def _register_state_hooks(conv: cattrs.Converter) -> None:
    # The state classes a view shows are read with the limits of the rules.
    conv.register_structure_hook(Festival, map_structure_hook(
        Festival, conv, round=Annotated[int, between(1, ROUNDS)], region=RegionId,
        type=Annotated[str, one_of("I", "II")], size=Size,
    ))
    conv.register_structure_hook(Row, map_structure_hook(Row, conv, tiles=tuple[TileId, ...]))
    conv.register_structure_hook(Skills, map_structure_hook(
        Skills, conv, **{s.value: Annotated[int, between(0, MAX_RANK)] for s in SKILLS}
    ))
    conv.register_structure_hook(Prizes, map_structure_hook(
        Prizes, conv, **{p.value: Annotated[int, between(0, n)] for p, n in PRIZE_SUPPLY.items()}
    ))


def make_converter() -> cattrs.Converter:
    """A fresh strict converter (see the module docstring), complete when it is returned.

    Every hook is registered here: the generic rules, the state classes a view shows, the
    action classes and the classes of their own wire form (see ``_has_own_form``). What it accepts
    therefore never depends on which modules were imported before.
    """
    conv = cattrs.Converter(detailed_validation=True, forbid_extra_keys=True)
    conv.register_structure_hook(int, _strict(int, "must be an integer"))
    conv.register_structure_hook(str, _string)
    conv.register_structure_hook(bool, _strict(bool, "must be true or false"))
    conv.register_structure_hook(float, _number)
    conv.register_structure_hook_factory(cols.is_sequence, _sequence_factory)
    conv.register_structure_hook_factory(cols.is_mapping, _mapping_factory)
    conv.register_structure_hook_factory(attrs.has, _attrs_structure_factory)
    conv.register_structure_hook_factory(_is_checked, _checked_factory)
    # Registered after attrs.has, so consulted before it.
    conv.register_structure_hook_factory(_has_own_form, _own_structure_factory)
    conv.register_unstructure_hook_factory(attrs.has, _attrs_unstructure_factory)
    conv.register_unstructure_hook_factory(_has_own_form, _own_unstructure_factory)
    conv.register_unstructure_hook(Score, _unstructure_score)
    _register_state_hooks(conv)
    for cls in RECORDED_TYPES.values():
        conv.register_structure_hook(cls, _action_hook(cls, conv))
    return conv


#: The converter every message, event and view goes through.
converter: Final = make_converter()


# Failures -------------------------------------------------------------------------------------


def _locate(exc: BaseException) -> tuple[list[str | int], str]:
    """The path to the first bad value under ``exc`` and what is wrong with it."""
    path: list[str | int] = []
    while isinstance(exc, BaseValidationError):
        # Fields are checked in declaration order; blame the first failure.
        sub = exc.exceptions[0]
        for note in getattr(sub, "__notes__", ()):
            if isinstance(note, AttributeValidationNote):
                path.append(note.name.removesuffix("_"))
                break
            if isinstance(note, IterableValidationNote):
                path.append(note.index)
                break
        exc = sub
    if isinstance(exc, ForbiddenExtraKeysError):
        path.append(sorted(map(str, exc.extra_fields))[0])
        return path, "is not a field of this message"
    if isinstance(exc, KeyError):
        return path, "is missing"
    if isinstance(exc, Invalid):
        return path, str(exc)
    return path, "is not valid"


def _render(path: list[str | int]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        if not (part.isidentifier() and part.isascii() and len(part) <= 40):
            part = repr(part[:40])  # an unknown key is the sender's text: quote it, briefly
        out += f".{part}" if out else part
    return out


def field_error(exc: BaseException, *, re: int | None = None) -> ProtocolError:
    """The :class:`ProtocolError` (``invalid_field``) for a failure of :data:`converter`.

    A :class:`ProtocolError` raised by a hook (a check across fields) is kept as it is.
    """
    if isinstance(exc, ProtocolError):
        exc.re = re
        return exc
    path, what = _locate(exc)
    field = _render(path) or None
    message = f"{field} {what}" if field else f"the message {what}"
    return ProtocolError(message, code="invalid_field", field=field, re=re)
