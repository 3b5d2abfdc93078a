"""Run the real ``castell-server`` as a subprocess, as a user would, for end-to-end tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_LISTENING = re.compile(r"listening on (wss?://\S+)")


def env() -> dict[str, str]:
    """The environment for a subprocess that imports this checkout's packages."""
    out = dict(os.environ)
    out["PYTHONPATH"] = str(ROOT) + os.pathsep + out.get("PYTHONPATH", "")
    return out


class ServerProcess:
    """``python -m server ARGS`` started on a free port; ``url`` is where it listens."""

    def __init__(self, *args: str, timeout: float = 20.0) -> None:
        self.proc = subprocess.Popen(
            # Tests play faster than any person: lift the message rate limit, as the
            # in-process test server does.
            [sys.executable, "-m", "server", "--port", "0", "--rate", "1000", *args],
            cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
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
