"""The host's console as tests reach it: a short directory for its Unix socket (a socket's
path is at most 107 bytes), and a command sent straight to the console's socket as
``castell-server admin`` sends it."""

from __future__ import annotations

import asyncio
from typing import Any

from server.ops.admin import ask


async def console(sock: str, command: str, **args: object) -> Any:
    """A command sent straight to the console (as the CLI sends it), for speed; its result."""
    reply = await asyncio.to_thread(ask, sock, command, **args)
    assert reply["ok"], reply
    return reply["result"]
