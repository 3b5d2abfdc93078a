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

import functools
import hashlib
import time
from importlib import resources
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from markupsafe import Markup

from shared.sanitize import safe

if TYPE_CHECKING:
    from jinja2 import Environment


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


@functools.cache
def environment() -> Environment:
    """The templates' environment, made when the first page is: a server most of whose
    starts serve no page (a test's, a bench's) does not import Jinja2 for nothing."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("server.web", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        finalize=_clean,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["q"] = path_part
    env.filters["when"] = when
    return env


#: The stylesheet, and a digest of it for its address (``/style.css?v=…``): a browser keeps
#: it for a day, and a new one has a new address.
STYLE: Final = resources.files("server.web").joinpath("static/style.css").read_bytes()
STYLE_VERSION: Final = hashlib.sha256(STYLE).hexdigest()[:12]


def render(template: str, **context: Any) -> bytes:
    """The page ``template`` makes of ``context``, as UTF-8."""
    return environment().get_template(template).render(style=STYLE_VERSION, **context).encode()
