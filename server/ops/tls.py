"""TLS for the server: the ``ssl.SSLContext`` that makes it serve ``wss://``.

A server given a certificate (``castell-server --certfile PEM [--keyfile PEM]``) speaks only
TLS on its port: TLS 1.2 at least, the library's default ciphers, no client certificates.
"""

from __future__ import annotations

import ssl

from server.config import ServerConfig


def server_ssl_context(config: ServerConfig) -> ssl.SSLContext | None:
    """The context to serve with, or None when ``config`` names no certificate.

    Raises ``OSError`` when a file cannot be read and ``ssl.SSLError`` when it holds no usable
    certificate or key (or a key that does not match the certificate).
    """
    if config.certfile is None:
        if config.keyfile is not None:
            raise ValueError("a key file needs a certificate file (--certfile) too")
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(config.certfile, config.keyfile)
    return context
