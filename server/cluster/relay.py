"""What the nodes of a cluster tell each other on a Redis channel: one listening loop.

Accounts' pushes (``your_turn``, :mod:`server.cluster.node`) and quick matches (``matched``,
:mod:`server.features.matchmaking`) are published as JSON on a channel every node subscribes to;
:func:`listen` reads them until cancelled, gets over a failed read by subscribing again,
and logs a message that cannot be taken without stopping.

A channel keeps nothing: what is published while a node is not subscribed (its connection
cut, and not yet subscribed again) never reaches it. So what must not be lost is kept in
Redis besides, for the node to take (the quick match's inboxes), and ``listen`` says when it
is subscribed (again, after any cut, whether it subscribed itself or redis-py did on
reconnecting): the node then reads what it missed.
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
                 *, pause: float, subscribed: Callable[[], None] | None = None) -> None:
    """Hand each message published on ``channel`` to ``take`` (decoded from JSON); a read
    that fails waits ``pause`` seconds and subscribes again; ``what`` names the messages in
    the log; ``subscribed`` is called each time Redis confirms the subscription (the first
    and every one after a cut). Closes ``pubsub`` when it ends."""
    try:
        while True:
            try:
                heard = await pubsub.get_message(ignore_subscribe_messages=False, timeout=1.0)
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
            if heard.get("type") == "subscribe":
                if subscribed is not None:
                    subscribed()
                continue
            if heard.get("type") != "message":
                continue
            try:
                take(json.loads(heard["data"]))
            except Exception as exc:
                log.warning("%s from another node could not be read: %s", what, exc)
    finally:
        with contextlib.suppress(Exception):
            await pubsub.aclose()
