"""``castell-server`` processes forked from one that has imported the server already.

Starting ``python -m server`` costs about half a second of CPU, nearly all of it importing
(attrs building some 250 classes), and the suite starts dozens of them. So each pytest worker
keeps one process that has imported the server (multiprocessing's fork server, preloading
:mod:`tests.support.forked_preload`) and forks it for each
:class:`~tests.support.servers.ServerProcess`.

What is forked is a real process of its own: its own pid, memory, sockets, signals and exit
code (a kill -9 kills it, SIGSTOP stops it, SIGTERM lets it shut down). It runs
``server.cli.main`` — what ``python -m server`` runs — with the same arguments, environment
and working directory, its stdout and stderr on pipes the test reads. What it does not go
through is the interpreter's start and ``-m``'s look-up of the module: the tests that run the
command itself (tests/test_server_output.py, :func:`~tests.support.servers.run_server_cli`)
still start ``python -m server``. Where it differs: it shares the fork server's hash seed
and the interpreter's flags of the pytest worker, and what fails before ``server.cli.main``
runs (reading its arguments from the fork server) is written to the fork server's stderr.
A server a test leaves running is killed when the test's process exits.

:func:`start` gives a :class:`Forked`, which answers as much of :class:`subprocess.Popen` as
the tests use.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import multiprocessing.process
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from multiprocessing import reduction
from pathlib import Path
from typing import IO, Any

_lock = threading.Lock()
_context: multiprocessing.context.ForkServerContext | None = None


def _forkserver() -> multiprocessing.context.ForkServerContext:
    """This process's fork server, told once to import the server before it forks."""
    global _context
    with _lock:
        if _context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["tests.support.forked_preload"])
            _context = context
        return _context


class _PassedFd:
    """A file descriptor of this process handed to the forked one (the fork server passes it
    over its socket, as multiprocessing does for a pipe's connection)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> tuple[Any, ...]:
        return (_taken, (reduction.DupFd(self.fd),))


def _taken(duplicate: Any) -> int:
    return int(duplicate.detach())


def _serve(args: Sequence[str], env: Mapping[str, str], cwd: str, out: int, err: int) -> None:
    """In the forked process: stdout and stderr onto the test's pipes, the test's environment
    and directory, then ``python -m server ARGS``."""
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.close(out)
    os.close(err)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    from server.cli import main

    sys.argv = [str(Path(cwd) / "server" / "__main__.py"), *args]
    sys.exit(main(list(args)))


#: The forked servers still running, killed when this process exits (a test that failed
#: before it stopped its server must not leave it behind, nor hold pytest's exit).
_running: set[Forked] = set()


@atexit.register
def _kill_left() -> None:
    for left in list(_running):
        with contextlib.suppress(OSError):
            left.kill()


class Forked:
    """A forked server process, answering as :class:`subprocess.Popen` does: ``pid``,
    ``stdout`` and ``stderr`` (text), ``poll``, ``wait``, ``send_signal``, ``kill``.

    Its exit status comes once, over a pipe from the fork server; two threads reading it
    at once could each find half of it (one the code, the other nothing, read as 255), so
    it is read under a lock."""

    def __init__(self, process: Any, stdout: IO[str], stderr: IO[str]) -> None:
        self._process = process
        self._lock = threading.Lock()
        self.pid: int = process.pid
        self.stdout = stdout
        self.stderr = stderr
        _running.add(self)

    @property
    def returncode(self) -> int | None:
        with self._lock:
            code = self._process.exitcode
        if code is None:
            return None
        _running.discard(self)
        return int(code)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        multiprocessing.connection.wait([self._process.sentinel], timeout)
        code = self.returncode
        if code is None:
            raise subprocess.TimeoutExpired(["castell-server"], timeout or 0.0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def start(args: Sequence[str], *, env: Mapping[str, str], cwd: Path) -> Forked:
    """``python -m server ARGS`` in ``cwd`` with ``env``, forked from the fork server."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        process = _forkserver().Process(
            target=_serve, name="castell-server",
            args=(list(args), dict(env), str(cwd), _PassedFd(out_w), _PassedFd(err_w)))
        process.start()
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    # Not multiprocessing's child to look after: it would read the exit status from any
    # thread that starts a process (a race, above), and wait for the server, however long,
    # when this process exits.
    multiprocessing.process._children.discard(process)  # type: ignore[attr-defined]
    return Forked(process, open(out_r, encoding="utf-8"), open(err_r, encoding="utf-8"))
