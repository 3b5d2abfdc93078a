"""Packed patches: a ``patch`` push in fewer bytes (docs/protocol.md, "`p`").

A connection that says ``packed`` at ``hello`` (with ``patches``) gets each view patch as a
``p`` push instead of a ``patch``: the same changes and events, told shorter.

* The envelope is ``{"type": "p", "b": base, "v": version, "c": changes, "e": events}``: one
  letter a field, and no room (a connection is in one room at a time: the patch is of the
  room it is in).
* Every map key, and every item of a change's path that is a map key, that stands in
  :data:`KEYS` is sent as the negative number ``-1 - i``, its place ``i`` in that table
  (``"kind"`` is -1, ``"seat"`` -2, ...); a key not in the table stays a string. List indices
  in a path are never negative, so a path item says by its sign alone which it is. The table
  is in order of use (the first 32 fit a MessagePack byte), and only ever grows at its end.

Nothing else changes: values are as in ``patch`` (a string value is never a code), and
unpacking gives back exactly the ``patch`` push's changes and events (:func:`unpack`; a
property test holds it over random games). The server packs a push once for every member
that takes it packed. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

import msgpack

from shared.errors import ProtocolError

#: The push's type on the wire.
TYPE: Final = "p"

#: The keys sent as numbers: key ``KEYS[i]`` is sent as ``-1 - i``. Never reorder; only add
#: at the end (docs/protocol.md lists them).
KEYS: Final[tuple[str, ...]] = (
    "kind", "seat", "regions", "done", "action", "players", "region", "pawns", "wheel",
    "castellers", "cen", "tokens", "team", "bcn", "tar", "lle", "effect", "gir", "ebr",
    "alt", "sizes", "round", "turn", "performances", "size", "choice", "tile", "first",
    "festivals", "town", "results", "skills", "all", "tower", "diversity", "prizes", "total",
    "bag", "drawn", "scores", "winners", "width", "base", "strength", "balance", "mix",
    "status", "deadline", "best", "bot", "connected", "medal", "name", "ribbon", "room",
    "seats", "spectators", "taken", "tiles", "trophy", "turn_seconds", "type", "variant",
)

_CODE: Final[dict[str, int]] = {key: -1 - i for i, key in enumerate(KEYS)}


def _pack(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        code = _CODE.get
        return {code(k, k): (_pack(v) if type(v) is dict or type(v) is list else v)
                for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_pack(v) if type(v) is dict or type(v) is list else v for v in value]
    return value


def pack_change(change: list[Any]) -> list[Any]:
    """One change of :mod:`shared.patch` packed: its path's keys and its value's map keys as
    codes where the table has them."""
    code = _CODE.get
    path = [code(item, item) if type(item) is str else item for item in change[:-1]]
    path.append(_pack(change[-1]))
    return path


def encode(base: int, version: int, changes: list[Any], events: tuple[dict[str, Any], ...]
           ) -> bytes:
    """The bytes of a ``p`` push: the ``patch`` push from ``base`` to ``version`` with
    ``changes`` (:func:`shared.patch.diff`) and ``events`` (wire maps), packed."""
    return msgpack.packb({"type": TYPE, "b": base, "v": version,
                          "c": [pack_change(c) for c in changes],
                          "e": [_pack(e) for e in events]}, use_bin_type=True)


def _key(item: Any, where: str) -> Any:
    if type(item) is int and item < 0:
        if -item > len(KEYS):
            raise ProtocolError(f"{where}: {item} is no key of the table", code="invalid_field",
                                field=where)
        return KEYS[-1 - item]
    return item


def _unpack(value: Any, where: str) -> Any:
    kind = type(value)
    if kind is dict:
        out = {}
        for k, v in value.items():
            key = _key(k, where)
            if type(key) is not str:
                raise ProtocolError(f"{where}: map keys must be strings or key codes",
                                    code="invalid_field", field=where)
            out[key] = _unpack(v, where)
        return out
    if kind is list:
        return [_unpack(v, where) for v in value]
    return value


def unpack(payload: dict[Any, Any]) -> tuple[int, int, list[list[Any]], list[dict[str, Any]]]:
    """A ``p`` push's map (read with number keys allowed) as the ``patch`` push it stands for:
    ``(base, version, changes, events)`` with every code a key again.

    Raises :class:`ProtocolError` (``invalid_field``, naming the field) when a field is
    missing or of the wrong kind, or a code is not in the table."""
    base, version = payload.get("b"), payload.get("v")
    changes, events = payload.get("c"), payload.get("e")
    for name, number in (("b", base), ("v", version)):
        if type(number) is not int or not 0 <= number < 2**53:
            raise ProtocolError(f"{name} must be a version (0 to 2^53 - 1)",
                                code="invalid_field", field=name)
    if type(changes) is not list or any(type(c) is not list or not c for c in changes):
        raise ProtocolError("c must be a list of changes", code="invalid_field", field="c")
    if type(events) is not list or any(type(e) is not dict for e in events):
        raise ProtocolError("e must be a list of maps", code="invalid_field", field="e")
    unpacked = [[*(_key(item, "c") for item in c[:-1]), _unpack(c[-1], "c")] for c in changes]
    assert isinstance(base, int) and isinstance(version, int)
    return base, version, unpacked, [_unpack(e, "e") for e in events]
