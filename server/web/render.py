"""The pages' templates (Jinja2, ``templates/``) and their one stylesheet (``static/``).

Every template is autoescaped: a value a player typed (a name, a room's name) is written as
text whatever it holds, ``<script>`` and ``"`` included. Before that, every string a template
writes goes through :func:`shared.sanitize.safe` (the environment's ``finalize``), which
drops escape sequences, control characters and direction overrides, so that a page read in
a text browser is as clean as the terminal. Only the server's own SVG charts
(:mod:`server.web.svg`) are written as markup. An undefined name in a template is an error,
not an empty string (``StrictUndefined``): a page never silently loses a part.
"""

from __future__ import annotations

import hashlib
import time
from importlib import resources
from typing import Any, Final
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from shared.sanitize import safe


def _clean(value: Any) -> Any:
    """What a template writes: markup as it is, any other string made safe first."""
    if isinstance(value, Markup):
        return value
    if isinstance(value, str):
        return safe(value)
    return value


def path_part(value: object) -> str:
    """A value as one segment of a path: every character but letters, digits and ``_.-~``
    percent-encoded (a ``/`` in a name cannot reach another page)."""
    return quote(str(value), safe="")


def when(stamp: float | None) -> str:
    """A Unix time as the pages write it: ``2024-05-01 21:04 UTC`` (``—`` for none)."""
    if stamp is None:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stamp))


ENV: Final = Environment(
    loader=PackageLoader("server.web", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    finalize=_clean,
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.filters["q"] = path_part
ENV.filters["when"] = when

#: The stylesheet, and a digest of it for its address (``/style.css?v=…``): a browser keeps
#: it for a day, and a new one has a new address.
STYLE: Final = resources.files("server.web").joinpath("static/style.css").read_bytes()
STYLE_VERSION: Final = hashlib.sha256(STYLE).hexdigest()[:12]


def render(template: str, **context: Any) -> bytes:
    """The page ``template`` makes of ``context``, as UTF-8."""
    return ENV.get_template(template).render(style=STYLE_VERSION, **context).encode()
