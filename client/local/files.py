"""Small JSON files of the user's state folder (the lessons' progress, the record against
the bots), written the way the seats file is: atomically, readable by the user alone."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from client.local.seats import DIR_MODE, FILE_MODE


def write_json(folder: Path, name: str, data: Any) -> None:
    """``data`` as the file ``name`` in ``folder``, replaced atomically, readable by the user
    alone; raises ``OSError`` when it cannot be written."""
    folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}-", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, ensure_ascii=False)
        os.replace(tmp, folder / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; an empty one when it is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
