"""The event loop a server runs on, and the stopping of a part's background tasks
(:func:`stop_tasks`); the garbage collector's policy is :mod:`server.runtime.collector`.

``--loop asyncio`` (the default) runs on asyncio's own loop; ``--loop uvloop`` runs on
uvloop, for a host who installed it (``pip install uvloop``). Measured side by side on both
loops (BENCHMARKS.md), uvloop makes the bare websockets baseline cheaper but not this server,
whose CPU goes to its own work: so it is not the default and not a dependency.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from shared.errors import CastellError

T = TypeVar("T")

#: The choices of ``--loop``.
LOOPS = ("asyncio", "uvloop")


def loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The factory of the loop ``choice`` names (None: asyncio's own).

    Raises :class:`CastellError` for ``uvloop`` when it is not installed."""
    if choice not in LOOPS:
        raise CastellError(f"unknown event loop {choice!r}: choose one of {', '.join(LOOPS)}")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        raise CastellError("--loop uvloop: uvloop is not installed (pip install uvloop)") \
            from None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, T], choice: str = "asyncio") -> T:
    """Run ``main`` to its end on the loop ``choice`` names (see :func:`loop_factory`)."""
    with asyncio.Runner(loop_factory=loop_factory(choice)) as runner:
        return runner.run(main)


def loop_name() -> str:
    """The name of the running loop's kind, for the start-up log: uvloop or asyncio."""
    return "uvloop" if type(asyncio.get_running_loop()).__module__.startswith("uvloop") \
        else "asyncio"


#: Seconds between two cancellations of a task that is still running (:func:`stop_tasks`).
CANCEL_AGAIN_AFTER = 0.1


async def stop_tasks(tasks: Iterable[asyncio.Task[Any]], *,
                     again_after: float = CANCEL_AGAIN_AFTER) -> None:
    """Cancel ``tasks`` and return once every one has ended; how each ended (cancelled,
    failed) is no concern here. A cancellation can be lost on its way: the Redis client
    swallows one that comes while a command waits for its reply (the command returns, the
    task goes on to its next wait). So a task still running is cancelled again every
    ``again_after`` seconds: a closer never waits on one for ever. If the caller is
    cancelled meanwhile, the tasks are still waited for, then the cancellation goes on."""
    every = list(tasks)
    pending = {task for task in every if not task.done()}
    interrupted = False
    while pending:
        for task in pending:
            task.cancel()
        try:
            _, pending = await asyncio.wait(pending, timeout=again_after)
        except asyncio.CancelledError:
            interrupted = True
    for task in every:
        if not task.cancelled():
            task.exception()  # retrieved: a failure at the end is not reported as unseen
    if interrupted:
        raise asyncio.CancelledError
