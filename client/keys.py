"""This user's account keys, one per server, kept between runs (docs/security.md, "Accounts").

A key is the account: the client makes a random one (:func:`new_key`, 288 random bits) the
first time it connects to a server, sends it in every ``hello``, and keeps it in
``keys.json`` in the user's state folder, beside the seat tokens and as they are: readable by
the user alone (mode 0600, folder 0700), replaced atomically. The file maps a server address in
its normal form (:func:`client.seats.server_key`) to its key, and a key is found under every
spelling of the server's address (:func:`client.seats.same_server`).

``castell account export`` prints a key as a *recovery line* (:func:`recovery_line`);
``castell account import`` reads one back (:func:`parse_recovery_line`) on another machine,
which then signs in as the same account.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
from pathlib import Path

from client.seats import DIR_MODE, FILE_MODE, default_state_dir, same_server, server_key
from shared.errors import CastellError
from shared.wire import KEY_MAX, KEY_MIN, printable

#: The first word of a recovery line.
RECOVERY_MARK = "castell-account"


class KeyError_(CastellError):
    """Raised for a recovery line that cannot be read, or a server with no key here."""

    code = "bad_key"


def new_key() -> str:
    """A fresh account key: 48 URL-safe characters, 288 random bits."""
    return secrets.token_urlsafe(36)


def recovery_line(url: str, key: str) -> str:
    """The line that gives the account at ``url`` to whoever types it into ``castell account
    import``: keep it as secret as a password."""
    return f"{RECOVERY_MARK} {server_key(url)} {key}"


def parse_recovery_line(line: str) -> tuple[str, str]:
    """The server address and key of a recovery line (:class:`KeyError_` when it is none)."""
    words = line.split()
    if len(words) != 3 or words[0] != RECOVERY_MARK:
        raise KeyError_(f"not a recovery line: it reads `{RECOVERY_MARK} SERVER KEY`, as "
                        "`castell account export` prints it")
    _, url, key = words
    if not KEY_MIN <= len(key) <= KEY_MAX or not printable(key):
        raise KeyError_(f"the key of a recovery line is {KEY_MIN} to {KEY_MAX} characters")
    return server_key(url), key


class KeyStore:
    """``keys.json`` in ``folder`` (default: the user's state folder)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else default_state_dir()
        self.path = self.folder / "keys.json"

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): v for k, v in data.items() if isinstance(v, str)}

    def _save(self, data: dict[str, str]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".keys-", suffix=".json")
        try:
            os.fchmod(fd, FILE_MODE)  # a key is a password: never readable by others
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def get(self, url: str) -> str | None:
        """The key kept for the server at ``url`` (under any spelling of its address)."""
        data = self._load()
        key = server_key(url)
        if key in data:
            return data[key]
        return next((v for k, v in data.items() if same_server(k, url)), None)

    def key_for(self, url: str) -> str:
        """The key for the server at ``url``: the one kept, or a new one, kept from now on."""
        found = self.get(url)
        if found is not None:
            return found
        made = new_key()
        self.put(url, made)
        return made

    def put(self, url: str, key: str) -> None:
        """Keep ``key`` for the server at ``url`` (replacing the one kept, if any)."""
        data = {k: v for k, v in self._load().items() if not same_server(k, url)}
        data[server_key(url)] = key
        self._save(data)
