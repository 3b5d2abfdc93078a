"""This user's account keys, one per server, kept between runs (docs/security.md, "Accounts").

A key is the account: the client makes a random one (:func:`new_key`, 288 random bits) the
first time it connects to a server, sends it in every ``hello``, and keeps it in
``keys.json`` in the user's state folder, beside the seat tokens and as they are: readable by
the user alone (mode 0600, folder 0700), replaced atomically.

A server is known by its identity (``welcome.server_id``, asked before ``hello`` with
``identify``), not by the address typed to reach it: the file keeps each server's key under its
identity with the addresses it was reached at (``servers``), and a key not yet tied to an
identity under its address (``keys``: an imported key, or one kept by an older client, or for a
server that says no identity), moved under the identity the first time the server says it. A
key is found under every spelling of an address it was kept with
(:func:`client.local.seats.same_server`), and at a new address when the server there says it is the
same one *and* the new address reaches the same machine as a known one
(:func:`client.local.seats.same_machine`): an identity is only a claim, and a server elsewhere that
claimed another's would be handed that server's account.

``castell account export`` prints a key as a *recovery line* (:func:`recovery_line`);
``castell account import`` reads one back (:func:`parse_recovery_line`) on another machine,
which then signs in as the same account. An import never silently replaces a key kept for
that server: it is refused unless asked, and the key replaced is kept aside, in
``replaced-keys.txt``, as a recovery line.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
import time
from pathlib import Path

import attrs

from client.local.seats import (
    DIR_MODE,
    FILE_MODE,
    default_state_dir,
    same_machine,
    same_server,
    server_key,
)
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


@attrs.frozen
class Kept:
    """A key kept here: for the server of identity ``server`` (None: not known yet), and the
    addresses it was kept or used at."""

    key: str
    server: str | None
    addresses: tuple[str, ...]


class KeyStore:
    """``keys.json`` in ``folder`` (default: the user's state folder)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else default_state_dir()
        self.path = self.folder / "keys.json"
        self.aside = self.folder / "replaced-keys.txt"

    def _load(self) -> list[Kept]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(data, dict):
            return []
        if data.get("version") != 2:  # an older file: address -> key
            return [Kept(v, None, (str(k),)) for k, v in data.items() if isinstance(v, str)]
        out: list[Kept] = []
        servers = data.get("servers")
        for server, entry in (servers.items() if isinstance(servers, dict) else ()):
            if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                found = entry.get("addresses")
                addresses = tuple(str(a) for a in found) if isinstance(found, list) else ()
                out.append(Kept(entry["key"], str(server), addresses))
        by_address = data.get("keys")
        for address, key in (by_address.items() if isinstance(by_address, dict) else ()):
            if isinstance(key, str):
                out.append(Kept(key, None, (str(address),)))
        return out

    def _save(self, kept: list[Kept]) -> None:
        data = {
            "version": 2,
            "servers": {k.server: {"key": k.key, "addresses": list(k.addresses)}
                        for k in kept if k.server is not None},
            "keys": {k.addresses[0]: k.key for k in kept if k.server is None and k.addresses},
        }
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

    @staticmethod
    def _at(kept: list[Kept], url: str) -> Kept | None:
        """The key kept with an address that names the server at ``url``: one tied to an
        identity first (it was confirmed there), then one kept by address."""
        for k in sorted(kept, key=lambda k: k.server is None):
            if any(same_server(a, url) for a in k.addresses):
                return k
        return None

    def get(self, url: str) -> str | None:
        """The key kept for the server at ``url`` (under any spelling of an address it was
        kept or used at), without asking the server."""
        found = self._at(self._load(), url)
        return found.key if found is not None else None

    def find(self, url: str, server: str | None) -> str | None:
        """The key to sign in with at ``url``, whose server says it is ``server`` (None: it
        says no identity): the one kept for that server, if ``url`` is an address it was used
        at or reaches the same machine as one; else the one kept for ``url``; else None. Kept
        from now on under ``server``, with ``url`` among its addresses."""
        kept = self._load()
        address = server_key(url)
        mine = next((k for k in kept if server is not None and k.server == server), None)
        if mine is not None and any(same_machine(a, url) for a in mine.addresses):
            if address not in mine.addresses:
                self._save([*(k for k in kept if k is not mine),
                            attrs.evolve(mine, addresses=(*mine.addresses, address))])
            return mine.key
        here = self._at(kept, url)
        if here is None or here.server not in (None, server):
            return None
        if server is not None and here.server is None and mine is None:
            # The server says who it is: the key is its, at this address and the others.
            addresses = tuple(dict.fromkeys((*here.addresses, address)))
            self._save([*(k for k in kept if k is not here), Kept(here.key, server, addresses)])
        return here.key

    def key_for(self, url: str, server: str | None = None) -> str:
        """:meth:`find`'s key, or a new one, kept from now on (under ``server``)."""
        found = self.find(url, server)
        if found is not None:
            return found
        made = new_key()
        kept = self._load()
        address = server_key(url)
        if server is not None and all(k.server != server for k in kept):
            self._save([*kept, Kept(made, server, (address,))])
        else:  # a server that says no identity, or whose key is kept for other addresses
            self._save([*(k for k in kept if not (k.server is None and any(
                same_server(a, url) for a in k.addresses))), Kept(made, None, (address,))])
        return made

    def put(self, url: str, key: str, *, replace: bool = False) -> Kept | None:
        """Keep ``key`` for the server at ``url``, by that address until the server says who
        it is. A different key kept for that server is replaced only when ``replace`` says so
        (:class:`KeyError_` otherwise); it is then returned, after being written aside
        (:attr:`aside`)."""
        kept = self._load()
        old = self._at(kept, url)
        if old is not None and old.key == key:
            return None
        if old is not None and not replace:
            raise KeyError_(f"a key for {server_key(url)} is kept here already: it is an "
                            "account of its own. `castell account import --replace` replaces "
                            "it (the key replaced is kept aside)")
        if old is not None:
            self._keep_aside(url, old)
            kept = [k for k in kept if k is not old]
            if old.server is not None:  # the same server: the new key is its
                self._save([*kept, attrs.evolve(old, key=key)])
                return old
        self._save([*kept, Kept(key, None, (server_key(url),))])
        return old

    def _keep_aside(self, url: str, old: Kept) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        fd = os.open(self.aside, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            when = time.strftime("%Y-%m-%d %H:%M:%S")
            f.write(f"# replaced by an import on {when}\n{recovery_line(url, old.key)}\n")
            f.flush()
            os.fsync(f.fileno())
