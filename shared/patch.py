"""View patches: what changed between two views of a room, and applying it (``docs/protocol.md``,
"`patch`").

A patch is a list of *changes*, each one list: the *path* to a value of the view (map keys
and list indices, outermost first) followed by the value found there now::

    [["turn", 2], ["players", 1, "team", [10, 9, 7]], ["festivals", 3, "done", true]]

Applying a change sets the value at its path; a change with no path (one item) replaces the
whole view. :func:`diff` writes, for two views:

* a map with the same keys: a change per key that changed (recursively);
* a map whose keys differ (``wheel`` or ``regions`` when a game starts): the whole map;
* a list of maps or lists of the same length: a change per item that changed (recursively);
* any other list that changed (a ``team``, ``pawns``, ``done``; or a list whose length
  changed): the whole list. These lists are short and mostly change length (a recruit, a
  step of the turn), which index edits could not say anyway: ``python -m bench codec``
  measures both ways over random games, and finds the same bytes; whole lists are the
  simpler to apply (:data:`INDEX_EDITS` switches);
* any other value that changed: the value.

So applying ``diff(old, new)`` to ``old`` gives exactly ``new`` (a property test holds it over
random games). Pure: no I/O, and :func:`apply` never changes the view it is given (it copies
the maps and lists along each path), so a view already handed out stays as it was.
"""

from __future__ import annotations

from typing import Any, Final

from shared.errors import ProtocolError

#: One change: path items, then the value.
Change = list[Any]

#: Whether a list of plain values of unchanged length is patched item by item (index edits)
#: rather than sent whole; measured no smaller (see the module docstring).
INDEX_EDITS: Final = False


def diff(old: Any, new: Any, *, index_edits: bool = INDEX_EDITS) -> list[Change]:
    """The changes that turn view ``old`` into view ``new`` (empty when they are equal)."""
    out: list[Change] = []
    _diff(old, new, [], out, index_edits)
    return out


def _diff(old: Any, new: Any, path: list[Any], out: list[Change], index_edits: bool) -> None:
    if old is new or (old == new and type(old) is type(new)):
        return
    if type(old) is dict and type(new) is dict and old.keys() == new.keys():
        for key, value in new.items():
            before = old[key]
            if before is value:  # a map or list shared by both views (ViewParts)
                continue
            if before != value or type(before) is not type(value):
                path.append(key)
                _diff(before, value, path, out, index_edits)
                path.pop()
        return
    if type(old) is list and type(new) is list and len(old) == len(new) and (
            index_edits or any(type(v) is dict or type(v) is list for v in new)):
        for index, (before, value) in enumerate(zip(old, new, strict=True)):
            if before is value:
                continue
            if before != value or type(before) is not type(value):
                path.append(index)
                _diff(before, value, path, out, index_edits)
                path.pop()
        return
    out.append([*path, new])


def apply(view: Any, changes: Any) -> Any:
    """``view`` with ``changes`` applied: a new view; ``view`` itself is left as it was.

    Raises :class:`ProtocolError` (``invalid_field``, field ``changes``) when a change is not
    a list, or its path names no value of the view (a key a map lacks, an index out of a
    list's range, a step into a value that is neither): the patch does not fit the view, and
    the client must ask for the whole view again (``resync``).
    """
    if type(changes) is not list:
        raise _unfit("changes must be a list")
    root = view
    copied: set[int] = set()  # the containers this call made, safe to change in place
    for number, change in enumerate(changes):
        if type(change) is not list or not change:
            raise _unfit(f"change {number} must be a list holding a path and a value")
        *path, value = change
        if not path:
            root = value
            copied = set()
            continue
        if id(root) not in copied:
            root = _copy(root, number)
            copied.add(id(root))
        node = root
        for depth, key in enumerate(path):
            last = depth == len(path) - 1
            if type(node) is dict:
                if type(key) is not str or key not in node:
                    raise _unfit(f"change {number}: the view has no key {key!r} there")
            elif type(node) is list:
                if type(key) is not int or not 0 <= key < len(node):
                    raise _unfit(f"change {number}: index {key!r} is out of the list")
            else:
                raise _unfit(f"change {number}: its path goes through a plain value")
            if last:
                node[key] = value
                break
            child = node[key]
            if id(child) not in copied:
                child = _copy(child, number)
                copied.add(id(child))
                node[key] = child
            node = child
    return root


def _copy(node: Any, number: int) -> Any:
    if type(node) is dict:
        return dict(node)
    if type(node) is list:
        return list(node)
    raise _unfit(f"change {number}: its path goes through a plain value")


def _unfit(message: str) -> ProtocolError:
    return ProtocolError(f"the patch does not fit the view: {message}", code="invalid_field",
                         field="changes")
