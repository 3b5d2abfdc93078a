"""How castell-server writes its log: one line per event, as text or as JSON.

``--log-format text`` (the default) writes ``TIME LEVEL LOGGER: MESSAGE``; ``--log-format
json`` writes one JSON object per line with the stable keys :data:`KEYS` (``room`` and
``conn`` only on lines about a room or a connection). The server never logs a seat token, an
account key or a private room's code (frames are never logged: :mod:`shared.logs`);
:class:`JsonFormatter` adds nothing but what the line says.
"""

from __future__ import annotations

import datetime
import json
import logging
import re
import sys
from typing import Any

#: Every key a JSON line may have, in this order; ``room``, ``conn``, ``error`` only when
#: the line has them.
KEYS = ("time", "level", "logger", "message", "room", "conn", "error")

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_ROOM = re.compile(r"\b(r[0-9a-f]{8})\b")
_CONN = re.compile(r"(?:^|<Connection |\b)(p\d+)\b")


def _ids(record: logging.LogRecord, message: str) -> tuple[str | None, str | None]:
    """The room id and connection id a line is about: from its arguments (a connection
    knows its room), else as they appear in its message."""
    room = conn = None
    args = record.args if isinstance(record.args, tuple) else ()
    for arg in args:
        ident = getattr(arg, "id", None)
        if conn is None and isinstance(ident, str) and ident.startswith("p") \
                and hasattr(arg, "ws"):
            conn = ident
            current = getattr(arg, "room", None)
            if room is None and current is not None:
                room = getattr(current, "id", None)
    if room is None:
        found = _ROOM.search(message)
        room = found.group(1) if found else None
    if conn is None:
        found = _CONN.search(message)
        conn = found.group(1) if found else None
    return room, conn


class JsonFormatter(logging.Formatter):
    """One JSON object per line (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        line: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC)
            .isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": message,
        }
        room, conn = _ids(record, message)
        if room is not None:
            line["room"] = room
        if conn is not None:
            line["conn"] = conn
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure(level: str, fmt: str) -> None:
    """Send the log to stderr at ``level``, as ``text`` or ``json`` lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper()))
