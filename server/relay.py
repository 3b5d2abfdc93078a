"""What the nodes of a cluster tell each other on a Redis channel: one listening loop.

Accounts' pushes (``your_turn``, :mod:`server.cluster`) and quick matches (``matched``,
:mod:`server.matchmaking`) are published as JSON on a channel every node subscribes to;
:func:`listen` reads them until cancelled, gets over a failed read by subscribing again,
and logs a message that cannot be taken without stopping.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("castell.cluster")


async def listen(pubsub: Any, channel: str, what: str, take: Callable[[dict[str, Any]], None],
                 *, pause: float) -> None:
    """Hand each message published on ``channel`` to ``take`` (decoded from JSON); a read
    that fails waits ``pause`` seconds and subscribes again; ``what`` names the messages in
    the log. Closes ``pubsub`` when it ends."""
    try:
        while True:
            try:
                heard = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("listening for %s failed (%s); again", what, exc)
                await asyncio.sleep(pause)
                with contextlib.suppress(Exception):
                    await pubsub.subscribe(channel)
                continue
            if heard is None:
                continue
            try:
                take(json.loads(heard["data"]))
            except Exception as exc:
                log.warning("%s from another node could not be read: %s", what, exc)
    finally:
        with contextlib.suppress(Exception):
            await pubsub.aclose()
