"""The full-screen renderer's output as text: a view drawn by ``client.screens.render.render`` on a
recording console without colours, the way the render tests read it."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from rich.console import Console

from client.screens.render import render
from shared.view import View
from tests.support.sample_views import NOW


def screen(view: View, me: int | None = None, events: Sequence[Any] = (), *, width: int = 100,
           now: float = NOW, max_event_lines: int = 4, **options: Any) -> str:
    """The text ``render`` puts on a ``width``-column console for seat ``me`` at ``now``."""
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(render(view, me, events, now=now, width=width,
                         max_event_lines=max_event_lines, **options))
    return console.export_text()
