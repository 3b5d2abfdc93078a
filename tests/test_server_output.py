"""What ``castell-server`` says when it starts: one line, with the address a friend types."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from websockets.sync.client import connect as ws_connect
from websockets.typing import Subprotocol

from server.ops.lan import friend_urls, lan_addresses
from shared import messages as m
from shared.codec import decode, encode
from tests.support.servers import ROOT, env

pytestmark = pytest.mark.timeout(60)


@contextmanager
def _castell_server(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``castell-server ARGS`` on a free port, and the first line it printed."""
    proc = subprocess.Popen([sys.executable, "-m", "server", "--port", "0", "--db", ":memory:",
                             *args], cwd=ROOT, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc, proc.stdout.readline()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def _stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """SIGTERM; what the server wrote after its first line, on stdout and stderr."""
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    return out, err


def test_a_lan_server_says_once_where_it_listens_and_what_friends_type():
    addresses = lan_addresses()
    if not addresses:
        pytest.skip("this machine has no address but its loopback")
    with _castell_server("--host", "0.0.0.0", "--log-level", "info") as (proc, line):
        found = re.match(r"castell-server listening on ws://0\.0\.0\.0:(\d+) · friends join "
                         r"with: (.*)$", line)
        assert found, line
        port = int(found.group(1))
        friends = found.group(2).split(" or ")
        assert friends == [f"castell ws://{a}:{port}" for a in addresses]
        # what a friend is told to type reaches the server
        with ws_connect(friends[0].removeprefix("castell "),
                        subprotocols=[Subprotocol(m.SUBPROTOCOL)]) as ws:
            ws.send(encode(m.Hello(id=1, name="Pau")))
            assert isinstance(decode(ws.recv(5)), m.Welcome)
        out, err = _stop(proc)
    # said once: neither the server's log nor websockets' says it again
    assert "listening" not in out and "listening" not in err, (out, err)


def test_a_loopback_server_says_friends_cannot_reach_it_and_how_to_serve_a_lan():
    with _castell_server("--log-level", "debug") as (proc, line):
        found = re.match(r"castell-server listening on ws://127\.0\.0\.1:(\d+) · this "
                         r"machine only \(castell ws://127\.0\.0\.1:(\d+)\); --host "
                         r"0\.0\.0\.0 serves your LAN$", line)
        assert found and found.group(1) == found.group(2), line
        out, err = _stop(proc)
    assert "listening" not in out and "listening" not in err, (out, err)


def test_the_addresses_for_friends_follow_the_host_listened_on():
    assert friend_urls("ws", "127.0.0.1", 8765) == []
    assert friend_urls("ws", "localhost", 8765) == []
    assert friend_urls("wss", "192.168.1.5", 8765) == ["wss://192.168.1.5:8765"]
    assert friend_urls("ws", "0.0.0.0", 8765) == [f"ws://{a}:8765" for a in lan_addresses()]
    assert all(not a.startswith("127.") for a in lan_addresses())
