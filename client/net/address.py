"""Server addresses as players type them: ``ws://host:port``, ``wss://…``, or just ``host``."""

from __future__ import annotations

from urllib.parse import urlsplit

DEFAULT_PORT = 8765
DEFAULT_URL = f"ws://127.0.0.1:{DEFAULT_PORT}"


class AddressError(ValueError):
    """Raised when a typed server address cannot be a Castell server's address."""


def server_url(text: str) -> str:
    """The full websocket URL ``text`` means.

    ``192.168.1.5`` and ``192.168.1.5:9000`` get ``ws://`` and, without a port, Castell's
    (8765). An address typed with its scheme keeps the scheme's standard port when it names
    none (a ``wss://`` server behind a web server's 443). ``http(s)://`` is read as
    ``ws(s)://``, since people paste browser addresses.
    """
    t = text.strip()
    if not t:
        raise AddressError("an empty server address")
    bare = "://" not in t
    if bare:
        t = "ws://" + t
    scheme, _, rest = t.partition("://")
    scheme = {"http": "ws", "https": "wss"}.get(scheme.lower(), scheme.lower())
    if scheme not in ("ws", "wss"):
        raise AddressError(f"{text!r}: a Castell server address starts with ws:// or wss://")
    parts = urlsplit(f"{scheme}://{rest}")
    try:
        port = parts.port
    except ValueError as exc:
        raise AddressError(f"{text!r}: {exc}") from None
    if not parts.hostname:
        raise AddressError(f"{text!r} names no host")
    host = parts.hostname
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    path = parts.path if parts.path not in ("", "/") else ""
    if port is None and bare:
        port = DEFAULT_PORT
    return f"{scheme}://{host}{'' if port is None else f':{port}'}{path}"
