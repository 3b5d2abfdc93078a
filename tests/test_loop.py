"""The server's event loop (server/runtime/loop.py, ``--loop``): asyncio's own unless uvloop is
asked
for, a plain refusal when uvloop is asked for and missing; and a server plays on either.
A part's background tasks are stopped (``stop_tasks``) even when one lost its cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import subprocess
import sys

import pytest

from client.net.net import GameClient
from server.cli import build_parser
from server.runtime.loop import loop_factory, stop_tasks
from shared import messages as m
from shared.errors import CastellError
from tests.support.servers import ROOT, ServerProcess, env

HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None


async def _plays(url: str) -> None:
    client = await GameClient.connect(url)
    try:
        await client.hello("Ada")
        joined = await client.request(m.CreateRoom, name="loop", seats=2)
        assert isinstance(joined, m.Joined) and joined.seat == 0
    finally:
        await client.close()


@pytest.mark.parametrize("choice", ["asyncio", "uvloop"])
async def test_a_server_plays_on_the_loop_it_was_told(choice):
    if choice == "uvloop" and not HAVE_UVLOOP:
        pytest.skip("uvloop is not installed here (it is no dependency of castell)")
    with ServerProcess("--db", ":memory:", "--loop", choice, "--log-level", "info") as server:
        await _plays(server.url)
        server.terminate()
        assert f"running on the {choice} event loop" in server.stderr()


def test_insisting_on_uvloop_where_it_is_missing_is_refused_plainly():
    # uvloop made unimportable in a real server process, as on a machine without the extra
    code = ("import sys; sys.modules['uvloop'] = None; from server.cli import main; "
            "sys.exit(main(['--port', '0', '--db', ':memory:', '--loop', 'uvloop']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env(),
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "castell-server: --loop uvloop: uvloop is not installed" in done.stderr
    assert "Traceback" not in done.stderr


def test_asyncio_is_the_default_and_uvloop_only_when_asked_for():
    assert build_parser().parse_args([]).loop == "asyncio"
    assert loop_factory("asyncio") is None
    with pytest.raises(CastellError, match="unknown event loop"):
        loop_factory("trio")
    if HAVE_UVLOOP:
        factory = loop_factory("uvloop")
        assert factory is not None
        loop = factory()
        try:
            assert not isinstance(loop, asyncio.SelectorEventLoop)
        finally:
            loop.close()


async def deaf() -> None:
    """A task that loses its first cancellation, as one whose Redis command swallowed it
    does: it goes on to its next wait."""
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.Event().wait()
    await asyncio.Event().wait()


async def test_stopping_tasks_cancels_again_one_that_lost_its_cancellation():
    tasks = [asyncio.create_task(deaf()), asyncio.create_task(asyncio.Event().wait())]
    await asyncio.sleep(0)  # both are waiting
    async with asyncio.timeout(5):
        await stop_tasks(tasks, again_after=0.01)
    assert all(task.cancelled() for task in tasks)


async def test_a_stopper_cancelled_meanwhile_still_waits_for_the_tasks_then_stops_too():
    task = asyncio.create_task(deaf())
    await asyncio.sleep(0)
    stopper = asyncio.create_task(stop_tasks([task], again_after=0.01))
    await asyncio.sleep(0)  # the stopper waits for the task
    stopper.cancel()
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(5):
            await stopper
    assert task.cancelled() and stopper.cancelled()
