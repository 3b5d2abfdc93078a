"""Run a module with its event loop counted on demand: its tasks and its timer handles.

    python -m bench.loopstats OUT -m MODULE [ARGS...]
    python bench/loopstats.py OUT -m MODULE [ARGS...]   # MODULE from PYTHONPATH's checkout

The module runs in this process (as ``python -m MODULE ARGS`` would) on asyncio's own event
loop, made through an event-loop policy that also gives the loop a handler for SIGUSR1: on
each signal, the loop (in its own thread, between two callbacks) collects the garbage, then
writes one JSON line to ``OUT``: how many signals it has answered, its tasks
(``asyncio.all_tasks``) and the timer handles waiting in its queue (``loop._scheduled``,
cancelled ones left out). So a benchmark asks a server what its event loop holds without the
server's code knowing (the code before a change is counted as the code after it), and a
signal handler is no timer: the count holds nothing of its own.
"""

from __future__ import annotations

import asyncio
import gc
import json
import runpy
import signal
import sys
from pathlib import Path
from typing import Any


def counts(loop: asyncio.AbstractEventLoop) -> dict[str, int]:
    """The loop's tasks and live timer handles (asyncio's own loop)."""
    scheduled: list[Any] = getattr(loop, "_scheduled", [])
    return {"tasks": len(asyncio.all_tasks(loop)),
            "handles": sum(not handle.cancelled() for handle in scheduled)}


def _install(loop: asyncio.AbstractEventLoop, out: Path) -> None:
    answered = 0

    def report() -> None:
        nonlocal answered
        answered += 1
        gc.collect()
        line = json.dumps({"answered": answered, **counts(loop)})
        out.write_text(line + "\n")

    loop.add_signal_handler(signal.SIGUSR1, report)


class _Counted(asyncio.DefaultEventLoopPolicy):
    def __init__(self, out: Path) -> None:
        super().__init__()
        self.out = out

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        loop = super().new_event_loop()
        _install(loop, self.out)
        return loop


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[1] != "-m":
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    out, module, rest = Path(args[0]), args[2], args[3:]
    # Run as a file (so that another checkout's packages can be the ones on the path), this
    # folder comes first on the path: its bench modules must not stand for MODULE's own.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    asyncio.set_event_loop_policy(_Counted(out))
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
