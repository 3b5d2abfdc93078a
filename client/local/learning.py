"""How far the player got in ``castell learn``: ``learn.json`` in the user's state folder.

The lesson under way (by its key, :class:`client.learn.lessons.Lesson`), the lessons done, and
whether ``castell play`` has offered the lessons yet (it asks once, ever). Kept like the seats
and settings beside it: readable by the user alone, replaced atomically; an unreadable file
counts as no progress, and a progress that cannot be written is no reason to stop the lesson.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from client.local.files import read_json, write_json
from client.local.seats import default_state_dir

FILE = "learn.json"


class LearnProgress:
    """``learn.json`` in ``folder`` (default: the user's state folder)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else default_state_dir()
        self.path = self.folder / FILE
        data = read_json(self.path)
        current = data.get("lesson")
        self.current: str | None = current if isinstance(current, str) else None
        done = data.get("done")
        self.done: list[str] = [k for k in done if isinstance(k, str)] \
            if isinstance(done, list) else []
        self.offered = data.get("offered") is True

    @property
    def started(self) -> bool:
        """Whether the player ever began the lessons."""
        return self.current is not None or bool(self.done)

    def _save(self) -> None:
        with contextlib.suppress(OSError):
            write_json(self.folder, FILE, {"lesson": self.current, "done": self.done,
                                           "offered": self.offered})

    def at(self, key: str) -> None:
        """The player is at the lesson ``key``."""
        self.current = key
        self._save()

    def did(self, key: str) -> None:
        """The player did the lesson ``key``."""
        if key not in self.done:
            self.done.append(key)
        self._save()

    def offer_made(self) -> None:
        """``castell play`` asked whether to take the lessons: it asks no more."""
        self.offered = True
        self._save()

    def resume_at(self, keys: Sequence[str]) -> int:
        """Where to take the lessons ``keys`` up: the lesson under way unless it is done, else
        the next not done after it (from the start again once all are done)."""
        at = keys.index(self.current) if self.current in keys else 0
        for step in range(len(keys)):
            index = (at + step) % len(keys)
            if keys[index] not in self.done:
                return index
        return 0
