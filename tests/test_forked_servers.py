"""The tests' forked server processes (tests/support/forked.py) answer as the processes they
stand for: the exit code the server gave, whichever thread asks; and one a test left running
neither holds the test process's exit nor outlives it."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from tests.support import forked
from tests.support.servers import ROOT, env


def test_the_exit_code_is_the_servers_whichever_thread_reads_it():
    # a server refusing its arguments exits 2; another thread polls it all the while (the
    # status comes once over a pipe: read twice at once, half of it read as 255)
    for _ in range(8):
        proc = forked.start(["--keyfile", "key.pem"], env=env(), cwd=ROOT)
        stop = threading.Event()

        def poll(proc: forked.Forked = proc, stop: threading.Event = stop) -> None:
            while not stop.is_set():
                proc.poll()

        poller = threading.Thread(target=poll)
        poller.start()
        try:
            code = proc.wait(20)
        finally:
            stop.set()
            poller.join(20)
        assert (code, proc.returncode) == (2, 2)
        assert "--keyfile needs --certfile" in proc.stderr.read()


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_a_server_left_running_is_killed_when_the_test_process_exits():
    code = ("from tests.support.servers import ServerProcess\n"
            "server = ServerProcess('--db', ':memory:')\n"
            "print(server.proc.pid, flush=True)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 20
    while not _gone(pid):  # the kill is sent at exit; the kernel ends the process at once
        assert time.monotonic() < deadline, "the server outlived the test process"
        time.sleep(0.01)
