"""The addresses a friend can type to reach this server, for the line it prints at start.

A server listening on every interface (``0.0.0.0``) is reached at this machine's LAN
addresses, not at ``0.0.0.0``; one listening on the loopback is reached from this machine
only. :func:`friend_urls` says which, from the standard library alone: the address the
machine would send from (no packet is sent) and those its host name resolves to.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket

#: Hosts that mean "every interface of this machine".
EVERY_INTERFACE = ("0.0.0.0", "::", "")
#: Where a datagram socket is pointed to learn the address this machine sends from
#: (TEST-NET-1: nothing is sent, and nothing there would answer).
_PROBE = ("192.0.2.1", 9)


def _usable(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return ip.version == 4 and not (ip.is_loopback or ip.is_unspecified or ip.is_link_local)


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses other than the loopback, the one it sends from first."""
    found: list[str] = []
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(_PROBE)  # a datagram socket's connect sends nothing: it picks a route
        found.append(s.getsockname()[0])
    with contextlib.suppress(OSError):
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(str(info[4][0]))
    return list(dict.fromkeys(a for a in found if _usable(a)))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def friend_urls(scheme: str, host: str, port: int) -> list[str]:
    """The ``ws://HOST:PORT`` addresses another machine can join at; empty when the server
    listens on the loopback only (or on every interface of a machine with no LAN address)."""
    if is_loopback(host):
        return []
    hosts = lan_addresses() if host in EVERY_INTERFACE else [host]
    return [f"{scheme}://{h}:{port}" for h in hosts]


def listening_line(scheme: str, host: str, port: int) -> str:
    """The one line ``castell-server`` prints once it listens: where, and what to give
    friends (``castell ws://192.168.1.5:8765``)."""
    shown = f"[{host}]" if ":" in host else host
    line = f"castell-server listening on {scheme}://{shown}:{port}"
    urls = friend_urls(scheme, host, port)
    if urls:
        return f"{line} · friends join with: " + " or ".join(f"castell {u}" for u in urls)
    if is_loopback(host):
        return (f"{line} · this machine only (castell {scheme}://{shown}:{port}); "
                "--host 0.0.0.0 serves your LAN")
    return f"{line} · no LAN address found: friends use this machine's address"
