"""What a web request is answered with, as plain data: a :class:`Page`, its headers, and the
refusals a page raises (:class:`NotFound`).

Every page carries the same guard headers (:data:`GUARDS`): a Content-Security-Policy that
allows no script at all, only this server's own stylesheet and inline images, and no
framing; no sniffing of types; no referrer sent to other sites. The protocol edge turns a
page into its HTTP response (:func:`server.edge.admission.http_response`).
"""

from __future__ import annotations

from typing import Final

import attrs

HTML: Final = "text/html; charset=utf-8"

#: The headers of every answer (docs/security.md, "Web pages").
GUARDS: Final = (
    ("Content-Security-Policy",
     "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
     "base-uri 'none'; frame-ancestors 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("X-Frame-Options", "DENY"),
)


class NotFound(Exception):
    """Raised when a page names nothing this server shows: no such room, game, player or
    tournament — or a private one, which is answered exactly as one that does not exist."""


@attrs.frozen
class Page:
    """One answer: its status, body and type, how long a browser may keep it (``cache``:
    a Cache-Control value), and any other headers (a redirect's Location, a download's
    Content-Disposition, a refusal's Retry-After)."""

    status: int
    body: bytes
    content_type: str = HTML
    cache: str = "no-cache"
    headers: tuple[tuple[str, str], ...] = ()

    def all_headers(self) -> list[tuple[str, str]]:
        """Every header of the answer but its length and date (the edge adds those)."""
        return [("Content-Type", self.content_type), ("Cache-Control", self.cache),
                *GUARDS, *self.headers]


def redirect(location: str) -> Page:
    """See ``location`` (a path of this server) instead."""
    return Page(303, b"", content_type="text/plain; charset=utf-8",
                headers=(("Location", location),))
