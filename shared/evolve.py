"""A frozen attrs instance with some fields changed: ``attrs.evolve``, made cheaper.

``attrs.evolve`` walks every field of the class on every call (its alias, whether it is an
init argument, a ``getattr``) before calling the class. The engine changes its states a few
times an action (docs/rules.md §4: every action is a new state), so :func:`evolve` builds,
once per class, a function that passes every field to the class's own ``__init__`` in order
(``changes`` where given, the instance's value otherwise): the same instance
``attrs.evolve`` makes — the class's converters and validators still run — at a fraction of
the cost. A name that is no field of the class is refused as ``attrs.evolve`` refuses it
(``TypeError``). Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import attrs

T = TypeVar("T")

_MAKERS: dict[type, Callable[[Any, dict[str, Any]], Any]] = {}


def evolve(inst: T, /, **changes: Any) -> T:
    """``inst`` with ``changes``, as ``attrs.evolve(inst, **changes)`` makes it."""
    make = _MAKERS.get(type(inst))
    if make is None:
        make = _MAKERS[type(inst)] = _maker(type(inst))
    made: T = make(inst, changes)
    return made


def _maker(cls: type) -> Callable[[Any, dict[str, Any]], Any]:
    fields = [f for f in attrs.fields(cls) if f.init]
    if any(f.kw_only for f in fields) or any(f.alias != f.name.lstrip("_") for f in fields):
        # (a shape this module does not write for: attrs' own way)
        return lambda inst, changes: attrs.evolve(inst, **changes)
    names = frozenset(f.alias for f in fields)
    args = ", ".join(f"c[{f.alias!r}] if {f.alias!r} in c else i.{f.name}" for f in fields)
    source = (f"def make(i, c):\n"
              f"    if not c.keys() <= names:\n"
              f"        unknown(c)\n"
              f"    return cls({args})\n")

    def unknown(changes: dict[str, Any]) -> None:
        wrong = sorted(set(changes) - names)
        raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument "
                        f"{wrong[0]!r}")

    scope: dict[str, Any] = {"cls": cls, "names": names, "unknown": unknown}
    exec(source, scope)  # code made from the class's own field names, nothing else
    make: Callable[[Any, dict[str, Any]], Any] = scope["make"]
    return make
