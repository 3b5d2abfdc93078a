"""The one error the persistence layer raises: :class:`StoreError`, with a code per cause.

It hangs under :class:`shared.errors.CastellError` like every refusal the project makes. The
server logs it and tells a client only ``internal_error``; the message is written for the
person running the server, so it names the database file and says what to do.
"""

from __future__ import annotations

from shared.errors import CastellError

#: Every ``code`` a :class:`StoreError` carries, with when it is raised.
CODES: dict[str, str] = {
    "cannot_open": "the database file cannot be opened or created (a directory, a missing "
    "folder, no permission), or the PostgreSQL server cannot be reached or refuses the login",
    "not_a_database": "the file is not an SQLite database at all",
    "not_castell_database": "the file is an SQLite database, but another program's (or the "
    "PostgreSQL schema holds another program's tables)",
    "corrupt_database": "SQLite reports the database damaged",
    "database_in_use": "another castell-server (or another program) holds the database",
    "schema_too_new": "a newer Castell wrote the database; this version cannot read it",
    "schema_too_old": "a read-only open found an older schema, which only a server that "
    "writes may upgrade",
    "read_only": "a write asked of a store opened read-only",
    "unsupported_backend": "the URL names a backend this version does not have",
    "store_closed": "the store was used before open() or after close()",
    "room_exists": "create_room with a room id that is already stored",
    "unknown_room": "the room named is not stored",
    "room_finished": "an action appended, or a result given, for a finished room",
    "duplicate_action": "append_action with a (room, seq) already stored",
    "action_out_of_order": "append_action with a seq lower than the room's last",
    "version_conflict": "a fenced write (expect_version) found another version stored: "
    "another server took the room over",
    "invalid_record": "a record that cannot be stored as given (a value out of range)",
    "store_failed": "any other database failure (disk full, I/O error)",
}


class StoreError(CastellError):
    """Raised when the store cannot do what it was asked; ``code`` is one of :data:`CODES`.

    ``path`` is the database the error is about, when there is one. Raising a StoreError never
    leaves anything half written: a refused write is rolled back, and a refused open leaves the
    file exactly as it was.
    """

    code = "store_failed"

    def __init__(self, message: str, *, code: str, path: str | None = None) -> None:
        assert code in CODES, code
        super().__init__(message, code=code)
        self.path = path


class VersionConflict(StoreError):
    """A fenced write found another version stored: another server holds the room now."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message, code="version_conflict", path=path)
