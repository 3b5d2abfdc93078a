"""The host's console as tests reach it: a command sent straight to the console's socket as
``castell-server admin`` sends it, and ``castell-server admin`` itself run in this process.

(A short directory for the console's Unix socket is the ``short_dir`` fixture: a socket's path
is at most 107 bytes.)
"""

from __future__ import annotations

import asyncio
from typing import Any

from server.ops.admin import ask
from tests.support.servers import Done, server_cli_here


async def console(sock: str, command: str, **args: object) -> Any:
    """A command sent straight to the console (as the CLI sends it), for speed; its result."""
    reply = await asyncio.to_thread(ask, sock, command, **args)
    assert reply["ok"], reply
    return reply["result"]


def admin_run(sock: str, *args: str) -> Done:
    """``castell-server admin --socket SOCK ARGS`` run by the command's own ``main`` in this
    process (:func:`tests.support.servers.server_cli_here`): the same parsing, request and
    printing, without starting an interpreter for each command (the command as a process
    of its own: tests/test_host_tools.py)."""
    return server_cli_here("admin", "--socket", sock, *args)


async def admin(sock: str, *args: str) -> str:
    """``castell-server admin --socket SOCK ARGS`` (:func:`admin_run`, off the event loop),
    which must succeed; what it printed."""
    done = await asyncio.to_thread(admin_run, sock, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout
