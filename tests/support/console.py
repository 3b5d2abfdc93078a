"""The host's console as tests reach it: a command sent straight to the console's socket as
``castell-server admin`` sends it, and ``castell-server admin`` itself run in this process.

(A short directory for the console's Unix socket is the ``short_dir`` fixture: a socket's path
is at most 107 bytes.)
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from typing import Any

import attrs

from server.cli import main
from server.ops.admin import ask


async def console(sock: str, command: str, **args: object) -> Any:
    """A command sent straight to the console (as the CLI sends it), for speed; its result."""
    reply = await asyncio.to_thread(ask, sock, command, **args)
    assert reply["ok"], reply
    return reply["result"]


@attrs.frozen
class Done:
    """What a run of ``castell-server admin`` ended with, printed and said."""

    returncode: int
    stdout: str
    stderr: str


def admin_run(sock: str, *args: str) -> Done:
    """``castell-server admin --socket SOCK ARGS`` run by the command's own ``main`` in this
    process: the same parsing, request and printing, without starting an interpreter for each
    command (the command as a process of its own: tests/test_host_tools.py)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["admin", "--socket", sock, *args])
    return Done(code, out.getvalue(), err.getvalue())


async def admin(sock: str, *args: str) -> str:
    """``castell-server admin --socket SOCK ARGS`` (:func:`admin_run`, off the event loop),
    which must succeed; what it printed."""
    done = await asyncio.to_thread(admin_run, sock, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout
