"""The client's end-to-end tests: the real ``castell`` in a pseudo-terminal whose screen is kept
by a terminal emulator (pyte), so that tests read what a player would see rather than the
escape sequences that drew it; a real ``castell-server`` subprocess where one is needed; and
``castell`` run in this process on standard input that is no terminal (:func:`castell_here`),
for what its command line does rather than its process."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pexpect
import pyte
import pytest

from client.cli import main
from client.local.learning import LearnProgress
from tests.support.servers import ROOT, ServerProcess

COLUMNS, ROWS = 100, 40
#: What prompt_toolkit writes at the end of each redraw (it hides the cursor while drawing).
SHOW_CURSOR = "\x1b[?25h"


def client_env(state: Path) -> dict[str, str]:
    """The environment of a client under test: this checkout, private state and data folders
    (``castell play`` keeps its games in the data folder). The player was asked already
    whether to take the lessons before a first ``castell play`` (that question has its own
    tests: tests/test_learn.py)."""
    LearnProgress(state / "castell").offer_made()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    env.update(PYTHONPATH=str(ROOT), TERM="xterm-256color", XDG_STATE_HOME=str(state),
               XDG_DATA_HOME=str(state / "data"),
               PYTHONUNBUFFERED="1")
    return env


def castell_here(monkeypatch: pytest.MonkeyPatch, state: Path, *args: str,
                 stdin: str = "") -> int:
    """``castell ARGS`` run in this process (:func:`client.cli.main`, all the command does
    but start an interpreter), its state and data folders those :func:`client_env` gives a
    process, ``stdin`` its standard input (no terminal: it plays ``--plain``; and it is 80
    columns wide, as a process writing to a pipe takes it to be); its exit code
    (what it printed is the test's, ``capsys``). Not for ``castell play``'s games, whose
    embedded server quiets this process's logging for good."""
    assert args[:1] != ("play",) or {"--games", "--export", "--help"} & set(args), args
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.setenv("XDG_DATA_HOME", str(state / "data"))
    for name, size in (("COLUMNS", "80"), ("LINES", "24")):  # what a pipe gets
        monkeypatch.setenv(name, size)
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return main(list(args))


@contextmanager
def castell_server(*args: str, port: int = 0, db: str = ":memory:"
                   ) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """A ``castell-server`` subprocess (bots without delay, warnings only); yields its URL and
    its process, and stops it as a service manager would."""
    with ServerProcess("--db", db, "--bot-delay", "0", "--log-level", "warning", *args,
                       port=port) as server:
        yield server.url, server.proc
        with suppress(subprocess.TimeoutExpired):  # then killed
            server.terminate(5)


class BellScreen(pyte.Screen):
    """A pyte screen that counts the terminal bells it was sent."""

    bells = 0

    def bell(self, *args: object) -> None:
        self.bells += 1


class Terminal:
    """``castell`` running in a pty (COLUMNS × ROWS unless told), its screen emulated."""

    def __init__(self, args: list[str], state: Path, *, columns: int = COLUMNS,
                 rows: int = ROWS) -> None:
        self.child = pexpect.spawn(sys.executable, ["-m", "client", *args], cwd=str(ROOT),
                                   env=client_env(state), dimensions=(rows, columns),
                                   encoding="utf-8", codec_errors="replace")
        self.screen = BellScreen(columns, rows)
        self.stream = pyte.Stream(self.screen)
        #: Redraws read to their end (prompt_toolkit shows the cursor at the end of each).
        self.redraws = 0
        self._tail = ""  # the end of what was read last (a mark may come in two reads)

    def pump(self, seconds: float = 0.05) -> None:
        """Feed the screen what the client writes within ``seconds``."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0 or not self._read(left):
                return

    def _read(self, timeout: float) -> bool:
        """Feed the screen what the client wrote, waiting up to ``timeout`` seconds for the
        first of it; whether anything came."""
        try:
            data = self.child.read_nonblocking(65536, timeout=timeout)
        except (pexpect.TIMEOUT, pexpect.EOF):
            return False
        self.stream.feed(data)
        read = self._tail + data
        self.redraws += read.count(SHOW_CURSOR)
        self._tail = read[-(len(SHOW_CURSOR) - 1):]
        return True

    def settle(self, quiet: float = 0.15, limit: float = 3.0) -> None:
        """Pump until the client has written nothing for ``quiet`` seconds (to see that
        something does not happen, or the last of several redraws)."""
        end = time.monotonic() + limit
        while time.monotonic() < end and self._read(quiet):
            pass

    def _whole(self, quiet: float = 0.15, limit: float = 3.0) -> None:
        """Pump until the screen is whole, not a redraw read halfway (its top new, its
        bottom old). prompt_toolkit hides the cursor while it draws and shows it again at
        the end of each redraw; a screen that never shows it (the replay viewer) is whole
        once the client has written nothing for ``quiet`` seconds."""
        end = time.monotonic() + limit
        while self.screen.cursor.hidden and time.monotonic() < end and self._read(quiet):
            pass

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def wait_for(self, pattern: str, timeout: float = 10.0) -> re.Match[str]:
        """Pump until ``pattern`` (a regex) shows on the whole screen; fail with the screen."""
        end = time.monotonic() + timeout
        while True:
            self._read(0.05)
            if re.search(pattern, self.text()):
                self._whole()
                found = re.search(pattern, self.text())
                if found:
                    return found
            if time.monotonic() > end or not self.child.isalive():
                self.pump(0.2)
                raise AssertionError(f"{pattern!r} never showed; the screen:\n{self.text()}")

    def type(self, keys: str) -> None:
        self.child.send(keys)

    def type_drawn(self, keys: str, timeout: float = 10.0) -> None:
        """Type ``keys`` and pump until the client has redrawn the screen after them."""
        seen = self.redraws
        self.type(keys)
        end = time.monotonic() + timeout
        while self.redraws == seen:
            if time.monotonic() > end or not self.child.isalive():
                raise AssertionError(f"no redraw after {keys!r}; the screen:\n{self.text()}")
            self._read(0.05)

    def input_line(self) -> str:
        """The prompt line (the last line of the screen that starts with the prompt)."""
        return next(line for line in reversed(self.lines()) if line.startswith(">"))

    def quit(self, keys: str = "quit\r", timeout: float = 10.0) -> None:
        """Quit, answering yes when a game under way asks first; wait for the end."""
        self.type(keys)
        if self.child.expect([r"quit now\?", pexpect.EOF], timeout=timeout) == 0:
            self.type("y\r")
            self.child.expect(pexpect.EOF, timeout=timeout)

    def close(self) -> int | None:
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close()
        return self.child.exitstatus
