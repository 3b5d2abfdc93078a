"""The shape of the server's classes: none owns too much.

A class that grows past :data:`MOST_METHODS` methods holds more than one concern (the stores
were split by what they keep for this: games, accounts, ratings, moderation). Methods are
counted as written in the class body (functions and coroutines, properties and static
methods included; inherited ones not), by reading the source, not importing it.
"""

from __future__ import annotations

import ast
from pathlib import Path

#: The most methods a class in ``server/`` may define in its body.
MOST_METHODS = 30

SERVER = Path(__file__).resolve().parent.parent / "server"


def method_counts(folder: Path) -> dict[str, int]:
    """Every class under ``folder``, as ``path:Class``, with the methods its body defines."""
    counts = {}
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                name = f"{path.relative_to(folder.parent).as_posix()}:{node.name}"
                counts[name] = sum(
                    isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                    for item in node.body
                )
    return counts


def over(folder: Path) -> dict[str, int]:
    return {name: n for name, n in method_counts(folder).items() if n > MOST_METHODS}


def test_the_count_reads_methods_in_the_class_body_only(tmp_path: Path) -> None:
    package = tmp_path / "server"
    package.mkdir()
    body = "".join(f"    def m{i}(self): ...\n" for i in range(MOST_METHODS + 1))
    (package / "big.py").write_text(
        "class Big:\n" + body + "    async def a(self): ...\n    x = 1\n"
        "    class Inner:\n        def i(self): ...\n\n"
        "class Small(Big):\n    def one(self): ...\n",
        encoding="utf-8",
    )
    assert method_counts(package) == {
        "server/big.py:Big": MOST_METHODS + 2,
        "server/big.py:Inner": 1,
        "server/big.py:Small": 1,
    }
    assert over(package) == {"server/big.py:Big": MOST_METHODS + 2}


def test_no_store_class_has_more_than_30_methods() -> None:
    assert over(SERVER / "store") == {}


def test_the_stores_keep_one_concern_per_part() -> None:
    """Each backend's parts are composed into its store; the flat API stays whole."""
    from server.store.base import (
        AccountsStore,
        GamesStore,
        ModerationStore,
        RatingsStore,
        ReviewsStore,
        Store,
    )
    from server.store.postgres import PostgresStore
    from server.store.sqlite import SQLiteStore

    parts = (GamesStore, AccountsStore, RatingsStore, ModerationStore, ReviewsStore)
    for store in (SQLiteStore, PostgresStore):
        assert issubclass(store, Store)
        assert not store.__abstractmethods__
        for part in parts:
            assert issubclass(store, part)
    # No method of the interface is in two parts.
    names = [set(part.__abstractmethods__) for part in parts]
    assert sum(map(len, names)) == len(set().union(*names))


def test_no_server_class_has_more_than_30_methods() -> None:
    assert over(SERVER) == {}
