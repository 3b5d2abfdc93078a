"""Castell next to Colyseus (Node) and the bare websockets server, under the same load.

    python -m bench peer [--rooms 100,500] [--seconds 10] [--warmup 2] [--think 1.0]
                         [--sat-rooms 50] [--sat-seconds SECONDS] [--repeat 2]
                         [--patch-rate 0]

Needs Node (``node`` on the PATH) and the Colyseus packages pinned in
``bench/peers/colyseus/package.json``: run ``npm install`` in that folder once.

For each room count, three servers each take the load of ``python -m bench server``'s paced
runs, each in its own process: ``bare`` and ``castell`` exactly as there (:mod:`bench.load`:
rooms of four clients driven from this process), and ``colyseus``: ``node server.js`` in
``bench/peers/colyseus``, one room type whose schema state is about the size of a mid-game
Castell view and whose ``act`` message moves a pawn, scores and ends the turn, driven by
``node load.js`` there (the Colyseus client SDK) with the same pacing: in each room the player
to act waits a think time (0.5–1.5× ``--think``), acts, and waits for its reply and for the new
state at every member; every member gets every push. Then a saturated case: ``--sat-rooms``
rooms acting as fast as replies come.

Runs alternate among the three servers (``--repeat`` rounds, the order turned by one each
time) so that drift in the machine's load hits all alike; each figure is the median over the
repeats, and each is also given as a ratio to the bare server's in the same runs.

``--patch-rate``: 0 (the default) has the Colyseus room send its patch right after each
action (``broadcastPatch()``), one push per action to every member as castell and the bare
server send; a number of milliseconds leaves the patches to Colyseus's own timer (its default
is 50), which batches several actions into one patch in the saturated case and delays every
broadcast by up to that long.

Figures: the action round trip (send → reply) p50 and p99, the broadcast latency (send → the
new state at the room's last member) p50 and p99, actions per second, the server's CPU time
per action (from ``/proc``: the server process's own, for Colyseus the ``node server.js``
process's), the server's and the load generator's CPU, bytes per action (what the four members
of a room receive per action, replies and pushes: frame payloads, counted at each client's
websocket) and the server's resident memory per room. The load generators differ — Python's
websockets client for bare and castell, Node's for Colyseus — so the round trips include
different client costs; the server CPU per action does not.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import Any

from bench.common import ROOT, cpu_seconds, machine, ratio, rss_kib, table
from bench.load import WAIT, Result, ServerProcess, run, started
from bench.server import CAPACITY, FIGURES, MIN_SECONDS

#: The Colyseus peer: its package.json (pinned versions), server.js and load.js.
PEER = ROOT / "bench" / "peers" / "colyseus"
#: The packages whose installed versions each report names (the last two come with the others).
PACKAGES = ("@colyseus/core", "@colyseus/ws-transport", "@colyseus/schema", "@colyseus/sdk",
            "ws", "msgpackr")
KINDS = ("bare", "castell", "colyseus")


def missing() -> str | None:
    """What this benchmark needs that this machine lacks (and how to get it), or None."""
    if shutil.which("node") is None:
        return ("python -m bench peer needs Node: `node` is not on the PATH (install Node 20 or "
                "later with npm, then run `npm install` in bench/peers/colyseus)")
    absent = [name for name in PACKAGES[:4]
              if not (PEER / "node_modules" / name / "package.json").exists()]
    if absent:
        return (f"python -m bench peer needs the Colyseus packages ({', '.join(absent)} not "
                f"installed): run `npm install` in bench/peers/colyseus")
    return None


def versions() -> str:
    """Node's version and the installed versions of the Colyseus packages."""
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=30)
    out = [f"node {node.stdout.strip()}"]
    for name in PACKAGES:
        with contextlib.suppress(OSError, ValueError, KeyError):
            found = json.loads((PEER / "node_modules" / name / "package.json").read_text())
            out.append(f"{name} {found['version']}")
    return ", ".join(out)


@contextlib.contextmanager
def colyseus(patch_rate: int) -> Iterator[ServerProcess]:
    """Start ``node server.js`` and stop it (SIGTERM, then SIGKILL) on the way out."""
    command = ["node", "server.js", "--host", "127.0.0.1", "--port", "0",
               "--patch-rate", str(patch_rate)]
    with started("colyseus", command, PEER) as server:
        yield server


def run_colyseus(rooms: int, *, seconds: float, warmup: float, think: float, seed: int = 1,
                 patch_rate: int = 0) -> Result:
    """One bounded run of ``node load.js`` against a fresh ``node server.js``. The server's
    CPU is read from ``/proc`` when the load generator says its window opens and closes."""
    # setting up is bounded by load.js's own timeouts; this bounds the whole, whatever happens
    bound = 60 + rooms * 0.2 + warmup + seconds + 2 * think + WAIT
    with colyseus(patch_rate) as server, tempfile.TemporaryFile(mode="w+") as out:
        command = ["node", "load.js", "--url", server.url, "--rooms", str(rooms),
                   "--seconds", str(seconds), "--warmup", str(warmup), "--think", str(think),
                   "--seed", str(seed), "--samples"]
        load = subprocess.Popen(command, cwd=PEER, stdout=out, stderr=subprocess.PIPE,
                                text=True)
        timer = threading.Timer(bound, load.kill)
        timer.start()
        cpu0 = cpu1 = 0.0
        rss = 0
        said: list[str] = []
        try:
            assert load.stderr is not None
            for line in load.stderr:
                if line.strip() == "measuring":
                    cpu0 = cpu_seconds(server.pid)
                elif line.strip() == "measured":
                    cpu1, rss = cpu_seconds(server.pid), rss_kib(server.pid)
                else:
                    said.append(line)
            code = load.wait()
        finally:
            timer.cancel()
            if load.poll() is None:
                load.kill()
                load.wait()
        out.seek(0)
        lines = out.read().strip().splitlines()
        if code != 0 or not lines:
            server.log.seek(0)
            raise RuntimeError(f"node load.js failed ({code}): {''.join(said)[-2000:]}\n"
                               f"server: {server.log.read()[-2000:]}")
        found = json.loads(lines[-1])
    return Result("colyseus", rooms, seconds, think,
                  [ms / 1e3 for ms in found["rtt_ms"]],
                  [ms / 1e3 for ms in found["broadcast_ms"]],
                  found["errors"], found["timeouts"], 0, cpu1 - cpu0, found["load_cpu"],
                  found["received"], rss)


def rounds(rooms: int, repeat: int, patch_rate: int, **kwargs: Any) -> dict[str, list[Result]]:
    """``repeat`` runs of each server, alternating: bare, castell, colyseus; then castell,
    colyseus, bare; and so on."""
    out: dict[str, list[Result]] = {kind: [] for kind in KINDS}
    for i in range(repeat):
        for kind in KINDS[i % 3:] + KINDS[:i % 3]:
            if kind == "colyseus":
                out[kind].append(run_colyseus(rooms, seed=1 + i, patch_rate=patch_rate,
                                              **kwargs))
            else:
                out[kind].append(run(kind, rooms, seed=1 + i, **kwargs))
    return out


def _median(results: list[Result], figure: Callable[[Result], float]) -> float:
    return statistics.median(figure(r) for r in results)


def report(title: str, results: dict[str, list[Result]],
           figures: list[tuple[str, Callable[[Result], float], str]] = FIGURES) -> str:
    rows = [["", *KINDS, "castell ÷ bare", "colyseus ÷ bare"]]
    for name, figure, unit in figures:
        bare, ours, theirs = (_median(results[kind], figure) for kind in KINDS)
        fmt = "{:,.0f}" if unit in ("", "µs", "%", "/s", " B") else "{:.2f}"
        if unit == " KiB":
            fmt = "{:,.1f}"
        rows.append([name, *(fmt.format(v) + unit for v in (bare, ours, theirs)),
                     ratio(ours, bare), ratio(theirs, bare)])
    counted = {kind: [r.actions for r in rs] for kind, rs in results.items()}
    problems = ", ".join(f"{kind} {sum(r.errors for r in rs)}/{sum(r.timeouts for r in rs)}"
                         for kind, rs in results.items())
    return "\n".join([
        title,
        table(rows),
        f"actions counted per run: {counted}; refused/timed out: {problems}",
    ])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench peer",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", default="100,500",
                        help="room counts of the paced runs, comma-separated (4 clients each)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds first")
    parser.add_argument("--think", type=float, default=1.0,
                        help="mean seconds between a room's actions in the paced runs")
    parser.add_argument("--sat-rooms", type=int, default=50,
                        help="rooms of the saturated run (0: none)")
    parser.add_argument("--sat-seconds", type=float, default=None,
                        help="measured seconds of each saturated run (default: --seconds)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each server per case")
    parser.add_argument("--patch-rate", type=int, default=0, metavar="MS",
                        help="the Colyseus room's patch rate: 0 patches after each action "
                             "(one push per action, as castell's); else Colyseus's timer, "
                             "every MS milliseconds (its default is 50)")
    args = parser.parse_args(argv)
    why = missing()
    if why is not None:
        raise SystemExit(why)
    rooms = [max(1, min(int(n), 2000)) for n in args.rooms.split(",") if n.strip()]
    seconds = max(MIN_SECONDS, min(args.seconds, 300.0))
    sat_seconds = seconds if args.sat_seconds is None else \
        max(MIN_SECONDS, min(args.sat_seconds, 300.0))
    repeat = max(1, min(args.repeat, 10))
    warmup = max(0.0, min(args.warmup, 60.0))
    patch_rate = max(0, min(args.patch_rate, 1000))
    print(f"castell, Colyseus and the bare server under the same load — {machine()}")
    print(f"Colyseus: {versions()}; its room patches "
          + ("after each action" if patch_rate == 0 else f"every {patch_rate} ms"))
    print("bytes/action is what the four members of a room receive per action, replies and "
          "pushes; the load of bare and castell comes from Python, Colyseus's from Node")
    for n in rooms:
        results = rounds(n, repeat, patch_rate, seconds=seconds, warmup=warmup,
                         think=args.think)
        print(f"\n(load average now {os.getloadavg()[0]:.1f})")
        print(report(f"{n} rooms × 4 clients, about one action per room every {args.think:g} s, "
                     f"{seconds:g} s measured after {warmup:g} s, median of {repeat}", results))
    if args.sat_rooms:
        n = max(1, min(args.sat_rooms, 2000))
        results = rounds(n, repeat, patch_rate, seconds=sat_seconds, warmup=warmup, think=0.0)
        print(f"\n(load average now {os.getloadavg()[0]:.1f})")
        print(report(f"saturated: {n} rooms × 4 clients acting as fast as replies come, "
                     f"{sat_seconds:g} s measured, median of {repeat}", results,
                     [*FIGURES, CAPACITY]))


if __name__ == "__main__":
    main()
