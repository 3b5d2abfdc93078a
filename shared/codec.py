"""Messages to bytes and back: MessagePack framing with hard limits.

Owns the binary side of ``docs/protocol.md``: :func:`encode` turns a message into the bytes of
one frame; :func:`decode`, :func:`decode_request` and :func:`decode_server` turn a frame back
into a checked message. Whatever arrives, decoding either returns a message or raises one
:class:`~shared.errors.ProtocolError` — never anything else — so a server can always answer.
Also :func:`event_to_wire` (engine events as wire maps), :func:`encode_state` and
:func:`encode_patch`, and the stored form of one action: :func:`pack_action` and
:func:`unpack_action`.

Limits, checked before any field is looked at (a breach is ``bad_message``):

* a frame is at most :data:`MAX_FRAME` bytes;
* a string or binary value at most :data:`MAX_STR_BYTES` bytes, an array at most
  :data:`MAX_ARRAY` items, a map at most :data:`MAX_MAP` pairs, and no extension types;
* containers nest at most :data:`MAX_DEPTH` deep, and every map key is a string;
* exactly one MessagePack value per frame, with no trailing bytes.

Those are the protocol's defaults; a server may set its own with :class:`FrameLimits`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import attrs
import msgpack

from shared import packed
from shared.actions import Recorded, action_fields
from shared.errors import ProtocolError
from shared.messages import (
    Message,
    Patch,
    Request,
    ServerMessage,
    StatePush,
    from_wire,
    recorded_from_fields,
    to_wire,
)
from shared.wire import converter

MAX_FRAME: Final = 64 * 1024
MAX_STR_BYTES: Final = 4096
MAX_ARRAY: Final = 1024
MAX_MAP: Final = 64
#: The deepest nesting a frame may have: a state push (map) → events (list) → an event (map)
#: → its action (map) → levels (list) → a level (list) is 6 deep; the view's deepest is 6 too.
MAX_DEPTH: Final = 10


@attrs.frozen
class FrameLimits:
    """The limits one frame must keep (see the module docstring); the defaults are the
    protocol's. Lowering one below its default may refuse messages the protocol allows."""

    frame: int = MAX_FRAME
    string: int = MAX_STR_BYTES
    array: int = MAX_ARRAY
    map: int = MAX_MAP
    depth: int = MAX_DEPTH


#: The protocol's limits.
DEFAULT_LIMITS: Final = FrameLimits()


def encode(message: Message) -> bytes:
    """The bytes of one frame holding ``message``."""
    return msgpack.packb(to_wire(message), use_bin_type=True)


def _refuse_ext(code: int, data: bytes) -> Any:
    raise ValueError("extension types are not used")


def unpack(data: Any, *, max_size: int | None = None,
           limits: FrameLimits = DEFAULT_LIMITS, number_keys: bool = False) -> Any:
    """The one MessagePack value in ``data``, within ``limits`` (``max_size``, when given,
    replaces ``limits.frame``). With ``number_keys``, a map key may be an integer too (a
    ``p`` push's key codes, :mod:`shared.packed`).

    Raises :class:`ProtocolError` (``bad_message``, ``re`` None) for anything that is not one
    well-formed value within the limits, including a text (``str``) frame.
    """
    if max_size is None:
        max_size = limits.frame
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ProtocolError("frames must be binary MessagePack", code="bad_message")
    if len(data) > max_size:
        raise ProtocolError(f"a frame may hold at most {max_size} bytes", code="bad_message")
    options = _UNPACK.get((limits, number_keys))
    if options is None:
        options = _UNPACK[limits, number_keys] = {
            "raw": False, "strict_map_key": not number_keys, "use_list": True,
            "max_str_len": limits.string, "max_bin_len": limits.string,
            "max_array_len": limits.array, "max_map_len": limits.map, "max_ext_len": 0,
            "ext_hook": _refuse_ext,
        }
    try:
        value = msgpack.unpackb(data, **options)
    except msgpack.ExtraData:
        raise ProtocolError("the frame holds bytes after its message",
                            code="bad_message") from None
    except Exception:  # msgpack's own errors, and whatever a hostile frame provokes in it
        raise ProtocolError("the frame is not one valid MessagePack value",
                            code="bad_message") from None
    _guard(value, limits.depth, number_keys)
    return value


#: The unpacker's settings for each set of limits (with or without number keys): one frame
#: is read by ``msgpack.unpackb``, which refuses what follows its one value (ExtraData).
_UNPACK: dict[tuple[FrameLimits, bool], dict[str, Any]] = {}


def _guard(value: Any, max_depth: int, number_keys: bool = False) -> None:
    # Depth and key check without recursion: a hostile frame cannot exhaust the stack.
    # Only containers go on the stack (a scalar needs no check), in the order they are met,
    # so the first breach found is the one a walk over every value would find; a view holds
    # mostly scalars, and skipping them halves the time a client takes to check a push.
    if type(value) is not dict and type(value) is not list:
        return
    stack: list[tuple[Any, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        if depth > max_depth:
            raise ProtocolError(f"a frame may nest at most {max_depth} deep", code="bad_message")
        depth += 1
        if type(item) is list:
            for sub in item:
                if type(sub) is dict or type(sub) is list:
                    push((sub, depth))
            continue
        for key, sub in item.items():
            if type(key) is not str and not (number_keys and type(key) is int):
                raise ProtocolError("map keys must be strings", code="bad_message")
            if type(sub) is dict or type(sub) is list:
                push((sub, depth))


def decode(data: Any, *, max_size: int | None = None,
           limits: FrameLimits = DEFAULT_LIMITS) -> Message:
    """The message in one frame, from either side (see :func:`shared.messages.from_wire`)."""
    return from_wire(unpack(data, max_size=max_size, limits=limits))


def decode_request(data: Any, *, max_size: int | None = None,
                   limits: FrameLimits = DEFAULT_LIMITS) -> Request:
    """The client request in one frame; a server-side type is ``unknown_type``."""
    value = unpack(data, max_size=max_size, limits=limits)
    return from_wire(value, sender="client")  # type: ignore[return-value]


def decode_server(data: Any, *, max_size: int | None = None,
                  limits: FrameLimits = DEFAULT_LIMITS,
                  packed_room: str | None = None) -> ServerMessage:
    """The reply or push in one frame, as a client reads it; a request type is
    ``unknown_type``.

    A client that asked for packed patches gives ``packed_room``, the room it is in: a ``p``
    push then comes back as the :class:`~shared.messages.Patch` it stands for, of that room
    (:mod:`shared.packed`); every other frame is read as without it."""
    if packed_room is None:
        value = unpack(data, max_size=max_size, limits=limits)
        return from_wire(value, sender="server")  # type: ignore[return-value]
    value = unpack(data, max_size=max_size, limits=limits, number_keys=True)
    if type(value) is dict and value.get("type") == packed.TYPE:
        base, version, changes, events = packed.unpack(value)
        value = {"type": Patch.TYPE, "room": packed_room, "base": base, "version": version,
                 "changes": changes, "events": events}
    else:
        _guard(value, limits.depth)  # any other frame: its keys strings, as always
    return from_wire(value, sender="server")  # type: ignore[return-value]


def event_to_wire(event: Any) -> dict[str, Any]:
    """An event of :mod:`shared.events` (an attrs class with a ``KIND``) as its wire map:
    ``{"kind": KIND, ...fields}``; a :class:`~shared.state.Score` inside becomes
    ``{seat, tower, diversity, prizes, sizes, performances, total}``. A map passes as is."""
    if isinstance(event, dict):
        return event
    return {"kind": event.KIND, **converter.unstructure(event)}


def encode_state(room: str, version: int, view: dict[str, Any], events: Iterable[Any]) -> bytes:
    """The bytes of a ``state`` push: ``view`` at ``version``, with ``events`` (objects of
    :mod:`shared.events` or wire maps) since the previous push.

    The same bytes as ``encode(StatePush(...))``, made faster: a view from
    :func:`shared.view.build_view` and the events' wire maps are plain data already, so they
    are packed as they are instead of being walked again by the converter (which, on a
    mid-game view, cost several times the packing). Whatever is not plain data goes the
    converter's way, as before.
    """
    wire = tuple(event_to_wire(e) for e in events)
    try:
        return msgpack.packb(
            {"type": StatePush.TYPE, "room": room, "version": version, "view": view,
             "events": wire},
            use_bin_type=True,
        )
    except TypeError:  # something msgpack cannot pack as it is: let the converter do it
        return encode(StatePush(room, version, view, wire))


def encode_patch(room: str, base: int, version: int, changes: list[Any],
                 events: Iterable[Any]) -> bytes:
    """The bytes of a ``patch`` push: the view at ``version`` as ``changes`` (plain data, from
    :func:`shared.patch.diff`) to the view at ``base``, with ``events`` as in
    :func:`encode_state` (and packed the same fast way)."""
    wire = tuple(event_to_wire(e) for e in events)
    try:
        return msgpack.packb(
            {"type": Patch.TYPE, "room": room, "base": base, "version": version,
             "changes": changes, "events": wire},
            use_bin_type=True,
        )
    except TypeError:
        return encode(Patch(room, base, version, changes, wire))


def pack_action(action: Recorded) -> bytes:
    """The bytes an action (or a resignation) is stored as: the MessagePack map of its wire
    fields, :func:`~shared.actions.action_fields` (``{"kind": "move", "region": "ebr"}``,
    ``{"kind": "resign", "ends": false}``) — no ``type``, no ``id``: a stored action is not a
    request."""
    return msgpack.packb(action_fields(action), use_bin_type=True)


def unpack_action(data: Any) -> Recorded:
    """The action (or resignation) :func:`pack_action` stored as ``data``, checked as the wire
    checks one (:func:`~shared.messages.recorded_from_fields`) within the frame limits.

    Raises :class:`ProtocolError` for anything else: ``bad_message`` when ``data`` is not one
    MessagePack value, ``invalid_field`` (naming the field) when it is not a valid action.
    """
    return recorded_from_fields(unpack(data))
