"""The pages' charts, drawn on the server as SVG: a game's score race and a player's rating.

Each chart is one ``<svg>`` element to put inline in a page, sized by its ``viewBox`` so that
it takes the width it is given (a phone's or a desktop's). It holds numbers only — axis
labels and lines — never a name: the legend is the page's HTML, where the names are escaped
like every other value, and a line's colour is its seat's class (``s0`` … ``s3``), which the
stylesheet colours as the rest of the page does. No script, no external reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from markupsafe import Markup, escape

#: The drawing's size in its own units (it scales to the page).
WIDTH: Final = 640
HEIGHT: Final = 240
#: Room for the axes' labels: left, right, top, bottom.
MARGINS: Final = (40, 12, 10, 26)


def _step(top: float) -> int:
    """A round step between the y axis's grid lines for values up to ``top``."""
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500):
        if top / step <= 6:
            return step
    return 1000


def _frame(label: str, body: list[str]) -> Markup:
    head = (f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
            f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
            f"<title>{escape(label)}</title>")
    return Markup(head + "".join(body) + "</svg>")


class _Axes:
    """Where a value lands in the plot: x from 0 to ``xs``, y from ``low`` to ``high``."""

    def __init__(self, xs: float, low: float, high: float) -> None:
        left, right, top, bottom = MARGINS
        self.x0, self.x1 = left, WIDTH - right
        self.y0, self.y1 = HEIGHT - bottom, top
        self.xs = max(xs, 1.0)
        self.low, self.high = low, high if high > low else low + 1

    def x(self, value: float) -> float:
        return round(self.x0 + (self.x1 - self.x0) * value / self.xs, 1)

    def y(self, value: float) -> float:
        span = self.high - self.low
        return round(self.y0 - (self.y0 - self.y1) * (value - self.low) / span, 1)

    def grid(self) -> list[str]:
        """Horizontal grid lines with their values, the x axis last."""
        step = _step(self.high - self.low)
        out = []
        value = self.low - self.low % step
        while value <= self.high:
            if value >= self.low:
                y = self.y(value)
                out.append(f'<line class="gridline" x1="{self.x0}" y1="{y}" x2="{self.x1}" '
                           f'y2="{y}"/><text class="tick" x="{self.x0 - 6}" y="{y + 4}" '
                           f'text-anchor="end">{int(value)}</text>')
            value += step
        out.append(f'<line class="axis" x1="{self.x0}" y1="{self.y0}" x2="{self.x1}" '
                   f'y2="{self.y0}"/>')
        return out

    def line(self, values: Sequence[float], css: str, xs: Sequence[float] | None = None,
             ) -> str:
        where = xs if xs is not None else range(len(values))
        points = " ".join(f"{self.x(x)},{self.y(v)}" for x, v in zip(where, values,
                                                                       strict=True))
        return f'<polyline class="{css}" fill="none" points="{points}"/>'


def score_race(series: Sequence[Sequence[int]], round_starts: Sequence[int],
               mark: int | None = None) -> Markup:
    """Each seat's score (``series[seat]``: one value per step of the game, §9 as counted
    on what the seat holds then), the rounds' first steps marked ``R1`` … and, with
    ``mark``, the step a replay stands at."""
    steps = max((len(s) for s in series), default=1) - 1
    top = max((max(s) for s in series if s), default=0)
    axes = _Axes(steps, 0, max(10, top))
    body = axes.grid()
    for number, start in enumerate(round_starts, 1):
        x = axes.x(start)
        body.append(f'<line class="round" x1="{x}" y1="{axes.y1}" x2="{x}" y2="{axes.y0}"/>'
                    f'<text class="tick" x="{x + 3}" y="{HEIGHT - 8}">R{number}</text>')
    if mark is not None:
        x = axes.x(mark)
        body.append(f'<line class="now" x1="{x}" y1="{axes.y1}" x2="{x}" y2="{axes.y0}"/>')
    body.extend(axes.line(values, f"race s{seat}") for seat, values in enumerate(series))
    return _frame("The score race: each player's score (§9) after every action, by round",
                  body)


def rating_history(ratings: Sequence[int]) -> Markup:
    """A rating before its first rated game and after each one, oldest first."""
    low, high = min(ratings, default=1500), max(ratings, default=1500)
    pad = max(10, (high - low) // 10)
    axes = _Axes(len(ratings) - 1, low - pad, high + pad)
    body = axes.grid()
    if len(ratings) > 1:
        body.append(axes.line(ratings, "rating"))
    body.extend(f'<circle class="rating" cx="{axes.x(i)}" cy="{axes.y(r)}" r="3"/>'
                for i, r in enumerate(ratings))
    return _frame("The rating after each rated game, oldest first", body)
