"""TLS for the client: the ``ssl.SSLContext`` a ``wss://`` connection is verified with.

``ws://`` needs none. ``wss://`` trusts the system's certificate authorities, plus a PEM file
the player names (``--cafile``: a friend's self-signed certificate). ``--insecure`` turns
verification off — anyone between the player and the server could then read and change the
game — so it is said loudly, every time.
"""

from __future__ import annotations

import ssl
import sys
from collections.abc import Callable
from urllib.parse import urlsplit

INSECURE_WARNING = (
    "WARNING: --insecure: the server's certificate is NOT checked. Anyone on the way can "
    "read and change your game. Use --cafile PEM with the server's certificate instead."
)


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def client_ssl_context(url: str, cafile: str | None = None, insecure: bool = False, *,
                       warn: Callable[[str], None] = _stderr) -> ssl.SSLContext | None:
    """The TLS context to connect to ``url`` with, or None for a plain ``ws://`` URL.

    Raises ``ValueError`` for a URL that is neither ``ws://`` nor ``wss://``, and
    ``OSError``/``ssl.SSLError`` for a ``cafile`` that cannot be read as certificates.
    """
    scheme = urlsplit(url).scheme.lower()
    if scheme == "ws":
        return None
    if scheme != "wss":
        raise ValueError(f"{url!r} is not a ws:// or wss:// address")
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if cafile is not None:
        context.load_verify_locations(cafile=cafile)
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        warn(INSECURE_WARNING)
    return context
