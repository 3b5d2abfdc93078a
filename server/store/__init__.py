"""Persistence for the game server: rooms, seats, actions and results, durably stored.

A game is its seed, its room settings and its list of actions; this package stores exactly
those, so that the server can rebuild every unfinished game by replay after a restart. Two
backends: one SQLite file (the default, :mod:`server.store.sqlite`), or a PostgreSQL database
that several server nodes share (:mod:`server.store.postgres`, loaded only when asked for).

    store = open_store(default_db_path())       # or "sqlite:///srv/castell.sqlite3", ":memory:"
    async with store:
        await store.create_room(RoomRecord(...))
        await store.append_action(ActionRecord(...))   # durable when it returns

:func:`open_store` picks the backend from a path or URL; the interface is
:class:`~server.store.base.Store`, its errors :class:`~server.store.errors.StoreError`.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from server.store.base import (
    STATUSES,
    ActionRecord,
    GameRecord,
    RoomRecord,
    SeatRecord,
    Store,
    hash_token,
    token_matches,
)
from server.store.errors import CODES, StoreError

if TYPE_CHECKING:
    from server.store.sqlite import MEMORY as MEMORY
    from server.store.sqlite import SQLiteStore, default_db_path


def __getattr__(name: str) -> Any:
    """The SQLite backend, loaded on first use: a module that only needs the records
    (:mod:`server.store.base`, e.g. the sans-I/O room) does not load a backend."""
    if name in ("MEMORY", "SQLiteStore", "default_db_path"):
        from server.store import sqlite

        return getattr(sqlite, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "CODES",
    "STATUSES",
    "ActionRecord",
    "GameRecord",
    "RoomRecord",
    "SQLiteStore",
    "SeatRecord",
    "Store",
    "StoreError",
    "default_db_path",
    "hash_token",
    "open_store",
    "token_matches",
]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", re.DOTALL)


def open_store(url_or_path: str | os.PathLike[str], **options: Any) -> Store:
    """A store for ``url_or_path``, not yet opened (``await store.open()`` or ``async with``).

    * a plain path, ``~/castell.sqlite3`` or ``C:\\games\\castell.sqlite3`` → SQLite;
    * ``sqlite:///srv/castell.sqlite3`` → SQLite at ``/srv/castell.sqlite3`` (the URL's path);
    * ``:memory:`` or ``sqlite:///:memory:`` → a throwaway SQLite database;
    * ``postgresql://USER@HOST:PORT/DATABASE?schema=NAME`` (or ``postgres://``) → PostgreSQL,
      the tables in schema NAME (default ``castell``); needs the ``cluster`` extra (asyncpg).

    ``options`` go to the backend (for SQLite: ``synchronous``, ``busy_timeout``; for
    PostgreSQL: ``pool_size``, ``connect_timeout``; for both: ``group_commit``).
    """
    from server.store.sqlite import MEMORY, SQLiteStore

    text = os.fspath(url_or_path)
    match = _SCHEME.match(text)
    if match is None:
        return SQLiteStore(text, **options)
    scheme, rest = match.group(1).lower(), match.group(2)
    if scheme == "sqlite":
        if rest in ("", "/", MEMORY, "/" + MEMORY):
            return SQLiteStore(MEMORY, **options)
        if not rest.startswith("/"):
            raise StoreError(
                f"{text}: a SQLite URL is sqlite:///PATH (three slashes, then the path)",
                code="unsupported_backend",
            )
        return SQLiteStore(rest, **options)
    if scheme in ("postgresql", "postgres"):
        # Imported here so that a server on SQLite never loads the PostgreSQL backend.
        from server.store.postgres import PostgresStore

        return PostgresStore(text, **options)
    raise StoreError(
        f"{text}: unknown database kind {scheme!r}; give a file path, sqlite:///PATH or "
        "postgresql://HOST/DATABASE",
        code="unsupported_backend",
    )
