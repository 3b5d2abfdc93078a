"""Logging that never records what travels in a frame.

At DEBUG level the websockets library logs the start and end of every frame it sends or
receives. Castell's frames carry seat tokens (``joined``, ``join_room``), so a server or a
client run with debug logging would write them to its log. :func:`frame_safe_logger` is the
logger both sides hand to websockets: it passes on everything but DEBUG records, so
connection events and errors are still logged while frame contents never are.
"""

from __future__ import annotations

import logging
from typing import Any


class _NoDebug(logging.LoggerAdapter[logging.Logger]):
    """A logger adapter that reports DEBUG as disabled, whatever the logging setup says."""

    def isEnabledFor(self, level: int) -> bool:
        return level > logging.DEBUG and self.logger.isEnabledFor(level)

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return msg, kwargs


def frame_safe_logger(name: str) -> logging.LoggerAdapter[logging.Logger]:
    """The logger ``name``, less its DEBUG records (which would hold frame contents)."""
    return _NoDebug(logging.getLogger(name), {})
