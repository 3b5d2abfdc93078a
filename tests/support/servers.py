"""A real server to test against, built here and nowhere else: in this process
(:func:`serving`, on a free port of 127.0.0.1 with the test settings; :func:`serving_in_thread`
for a test that is not a coroutine, such as one driving the client in a pty), or as a
``castell-server`` process of its own (:class:`ServerProcess`) where a test needs what only a
process gives: a kill -9, a SIGSTOP, a restart, its exit code and what it prints. Those are
forked from one that has imported the server already (:mod:`tests.support.forked`);
:func:`run_server_cli` runs the command itself, ``python -m server``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from server.app import CastellServer
from server.cluster.node import ClusterConfig
from server.config import ServerConfig
from server.runtime.timers import VirtualClock
from server.store import open_store
from server.store.base import Store
from tests.support import forked

ROOT = Path(__file__).resolve().parents[2]

#: The settings of an in-process test server: a free port, bots without delay that think in
#: a thread (the worker processes have their own tests: tests/test_thinking.py), no pings,
#: rate limits no test reaches (every test connects from one address: its web pages too),
#: and for the same
#: reason accounts of one network meet in rated play; quick closes.
TEST_CONFIG = ServerConfig(host="127.0.0.1", port=0, bot_delay=0.0, bot_workers=0,
                           ping_interval=None,
                           rate=1000.0, burst=1000.0, address_rate=1e6, address_burst=1e6,
                           room_chat_rate=1e6, web_rate=1e6, web_burst=1e6,
                           close_timeout=1.0,
                           accounts_per_address=1_000_000, accounts_per_network=1_000_000,
                           rated_one_network=True)


def with_config(**changes: Any) -> Callable[[ServerConfig], ServerConfig]:
    """A function that changes ``changes`` in a config (for overriding ``server_config``)."""
    return lambda config: attrs.evolve(config, **changes)


def server_url(server: CastellServer) -> str:
    return f"{server.config.scheme}://127.0.0.1:{server.port}"


def virtual_time(server: CastellServer) -> VirtualClock:
    """Put the rooms ``server`` makes from now on on a virtual clock, which the test moves
    on itself (:func:`run_out`): their turn timers and bots' delays wait no real second.
    The clock starts at the present time (the views' deadlines are plausible times)."""
    clock = VirtualClock(time.time())
    server.lobby.clock = clock
    server.lobby.scheduler = clock
    return clock


async def run_out(clock: VirtualClock, timeout: float = 10.0) -> float:
    """Once a room waits on ``clock`` (a turn timer armed; at most ``timeout`` real seconds
    for one to be), move the clock to the soonest deadline: that wait is over now (a turn
    timer fires). Returns the deadline."""
    async with asyncio.timeout(timeout):
        at = await clock.deadline()
    clock.advance_to(at)
    return at


@contextlib.asynccontextmanager
async def serving(store: Store | None = None, *, config: ServerConfig = TEST_CONFIG,
                  cluster: ClusterConfig | None = None,
                  **changes: Any) -> AsyncIterator[tuple[CastellServer, str]]:
    """A real server in this process on ``store`` (none given: the server's own SQLite
    database in memory, as every server given none has), as a node of ``cluster`` if given,
    its settings ``config`` changed by ``changes``; yields it and its URL, closes it
    afterwards."""
    server = CastellServer(attrs.evolve(config, **changes), store, cluster=cluster)
    await server.start()
    try:
        yield server, server_url(server)
    finally:
        await server.close()


@contextlib.contextmanager
def serving_in_thread(db: str | os.PathLike[str] | None = None, **changes: Any) -> Iterator[str]:
    """:func:`serving` (on the SQLite file ``db`` if given) in a thread of this process with
    an event loop of its own, for a test that is not a coroutine: it starts in a moment where
    a ``castell-server`` process takes a new interpreter. Yields the URL; the server closes
    on the way out, and what went wrong in its thread is raised here."""
    ready: concurrent.futures.Future[str] = concurrent.futures.Future()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    failed: list[BaseException] = []

    async def serve() -> None:
        async with contextlib.AsyncExitStack() as stack:
            store = None if db is None else await stack.enter_async_context(open_store(db))
            _, url = await stack.enter_async_context(serving(store, **changes))
            ready.set_result(url)
            await stop.wait()

    def run() -> None:
        try:
            loop.run_until_complete(serve())
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                failed.append(exc)
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="castell-server", daemon=True)
    thread.start()
    try:
        yield ready.result(timeout=20)
    finally:
        with contextlib.suppress(RuntimeError):  # (the loop ended already)
            loop.call_soon_threadsafe(stop.set)
        thread.join(20)
    assert not thread.is_alive(), "the server's thread did not end"
    if failed:
        raise failed[0]


_LISTENING = re.compile(r"listening on (wss?://\S+)")


def env() -> dict[str, str]:
    """The environment for a subprocess that imports this checkout's packages."""
    out = dict(os.environ)
    out["PYTHONPATH"] = str(ROOT) + os.pathsep + out.get("PYTHONPATH", "")
    return out


class ServerProcess:
    """``python -m server ARGS`` started on a free port; ``url`` is where it listens.

    The process is forked from one that has imported the server already
    (:mod:`tests.support.forked`): a process of its own in every way a test looks at, that
    skips the half second of CPU an interpreter takes to import the server."""

    def __init__(self, *args: str, port: int = 0, timeout: float = 20.0) -> None:
        self.proc = forked.start(
            # Tests play faster than any person: lift the message rate limit, as the
            # in-process test server does; and, as it does, let bots think in a thread of
            # the server (each worker process is one more interpreter to start; they have
            # their own tests, tests/test_thinking.py, which ask for them with --bot-workers).
            ["--port", str(port), "--rate", "1000",
             "--address-rate", "1000000", "--address-burst", "1000000", "--bot-workers", "0",
             "--accounts-per-address", "1000000", "--accounts-per-network", "1000000",
             "--rated-one-network",
             *args],
            cwd=ROOT, env=env(),
        )
        self.url = self._wait_listening(timeout)

    def _wait_listening(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                err = self.proc.stderr.read() if self.proc.stderr else ""
                raise RuntimeError(f"castell-server exited early: {err}")
            match = _LISTENING.search(line)
            if match:
                return match.group(1)
        self.kill()
        raise RuntimeError("castell-server did not start listening in time")

    def kill(self) -> None:
        """SIGKILL: the process gets no chance to clean up."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)

    def terminate(self, timeout: float = 15.0) -> int:
        """SIGTERM, as a service manager would; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def run_server_cli(*args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """``python -m server ARGS`` to completion (for subcommands and refusals)."""
    return subprocess.run([sys.executable, "-m", "server", *args], cwd=ROOT, env=env(),
                          capture_output=True, text=True, timeout=timeout)


@attrs.frozen
class Done:
    """How a run of ``castell-server`` ended: its exit code, what it printed and said."""

    returncode: int
    stdout: str
    stderr: str


def server_cli_here(*args: str) -> Done:
    """``castell-server ARGS`` run to completion by the command's own ``main`` in this
    process, its output captured: the same parsing, work and printing as
    :func:`run_server_cli`, without an interpreter started for it — for a subcommand
    (``export``, ``admin``) whose process is not what is tested. It runs an event loop of
    its own: from a coroutine, call it in a thread."""
    from server.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return Done(code, out.getvalue(), err.getvalue())
