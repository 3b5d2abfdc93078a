"""The player's settings kept between runs: ``settings.json`` in the user's state folder.

Whether ``end`` asks before ending a turn in which the player could still move, recruit or
train (``warn off`` / ``warn on``), and whether the terminal bell rings when one of the
player's games reaches their turn (``bell off`` / ``bell on``). An unreadable file counts as the
defaults; the file is replaced atomically, like the seats file beside it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from client.local.seats import DIR_MODE, FILE_MODE


class Settings:
    """``settings.json`` in ``folder``; with no folder, the settings live for this run only."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._values: dict[str, Any] = self._load()

    def _load(self) -> dict[str, Any]:
        if self.folder is None:
            return {}
        try:
            data = json.loads((self.folder / "settings.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self) -> None:
        if self.folder is None:
            return
        with contextlib.suppress(OSError):  # a setting not kept is no reason to stop playing
            self.folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".settings-", suffix=".json")
            try:
                os.fchmod(fd, FILE_MODE)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(self._values, f, indent=1)
                os.replace(tmp, self.folder / "settings.json")
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise

    @property
    def warn_end(self) -> bool:
        """Whether ``end`` asks first when actions are still available (default: yes)."""
        return self._values.get("warn_end", True) is not False

    @warn_end.setter
    def warn_end(self, on: bool) -> None:
        self._values["warn_end"] = bool(on)
        self._save()

    @property
    def bell(self) -> bool:
        """Whether ``your_turn`` rings the terminal bell (default: yes)."""
        return self._values.get("bell", True) is not False

    @bell.setter
    def bell(self, on: bool) -> None:
        self._values["bell"] = bool(on)
        self._save()
