"""Every benchmark runs at a tiny size, so the scripts don't rot; nothing here checks a time.

What is checked is what must hold at any speed: each prints its figures with its baseline,
the load generator only plays legal actions (no refusal, no timeout), and ``python -m bench``
dispatches.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys

import pytest

from bench import __main__ as bench_main
from bench import peer
from bench.load import next_action
from shared.actions import Action, action_fields
from shared.engine import legal_actions
from shared.state import GameState
from shared.view import build_view
from tests.support.games import final, game, play_out
from tests.support.rooms import room_info
from tests.support.servers import ROOT


@pytest.mark.parametrize(("seed", "variant"), [(1, "normal"), (2, "advanced")])
def test_the_load_generator_picks_only_legal_actions(seed, variant):
    # next_action reads a raw view; every pick must be among legal_actions of the real state.
    start = game(4, seed=seed, variant=variant)
    room = room_info(start)
    picked = set()

    def load_generator(state: GameState, seat: int, rng: random.Random) -> Action:
        fields = next_action(build_view(room, state), seat, rng)
        legal = [a for a in legal_actions(state, seat) if action_fields(a) == fields]
        assert legal, f"{fields} is not legal in round {state.round}"
        picked.add(fields["kind"])
        return legal[0]

    assert final(play_out(start, random.Random(seed), load_generator)).over
    assert picked == {"move", "recruit", "train", "end_turn"}


@pytest.mark.parametrize(("name", "argv", "expect"), [
    ("engine", ["--seconds", "0.2"], "attrs.evolve"),
    ("codec", ["--number", "2", "--games", "1"], "patch, index edits"),
    ("store", ["--count", "5", "--writers", "4", "--writer-seconds", "0.2"], "on ÷ off"),
    ("solver", ["--runs", "1"], "baseline"),
    ("memory", ["--connections", "8", "--settle", "0"], "castell ÷ bare"),
    ("idle", ["--games", "6", "--actions", "3", "--connections", "8", "--settle", "0"],
     "one server holding 6 idle correspondence games"),
    ("cluster", ["--count", "3"], "cluster node"),
    ("bots", ["--games", "2", "--seats", "2", "--jobs", "1"], "baseline: a random bot"),
    ("matchmaking", ["--players", "6", "--seats", "3", "--rated"], "grouping alone (baseline)"),
    ("lobby", ["--rooms", "12", "--calls", "3"], "1 (12 rooms)"),
    ("mygames", ["--games", "3", "--turns", "2", "--calls", "2"], "3 × 2 turns"),
    ("botshare", ["--rooms", "2", "--turns", "1", "--think", "0.05", "--workers", "1",
                  "--bot-delay", "0"], "the hog's rooms' bots"),
    ("review", ["--games", "1", "--seats", "2", "--samples", "1", "--candidates", "1"],
     "baseline: the hard bot deciding once per turn"),
    ("web", ["--rooms", "4", "--played", "2", "--seconds", "0.2", "--fetchers", "2",
             "--page-rate", "20", "--repeat", "1", "--startup", "0.3"],
     "actions refused, timed out: [(0, 0), (0, 0), (0, 0), (0, 0)]"),
])
def test_a_benchmark_prints_its_figures_and_baseline(name, argv, expect, capsys):
    bench_main.run(name, argv)
    assert expect in capsys.readouterr().out


def test_the_server_benchmark_drives_both_servers_without_a_refusal(capsys, tmp_path):
    profile = tmp_path / "castell.prof"
    # A tiny load: every case runs, each a tenth of a second or two (a room acts every
    # 0.02 s in the paced runs); the server processes are most of the time. The bare
    # server is bench.bare_sansio (--bare sansio): bench.bare, the default, has its runs in
    # the scale curve's test below, so each baseline is driven once.
    bench_main.run("server", ["--rooms", "1,2", "--seconds", "0.1", "--warmup", "0",
                              "--think", "0.02", "--sat-rooms", "2", "--sat-seconds", "0.1",
                              "--bot-rooms", "2", "--bot-seconds", "0.2",
                              "--durable-rooms", "2", "--durable-seconds", "0.1",
                              "--repeat", "1", "--bare", "sansio", "--profile", str(profile)])
    out = capsys.readouterr().out
    assert "the bare server of the paced and saturated runs: bench.bare_sansio" in out
    # the bots case: rooms of one client and three hard bots, next to rooms without bots
    assert "bots: 2 rooms, one client and three hard bots each" in out
    assert "refused or timed out: {'no bots': 0, 'hard bots': 0}" in out
    assert out.count("castell ÷ bare") == 3  # the paced tables and the saturated one
    # the load generator's own checks (every reply, every push, in order) held for the
    # sans-I/O baseline as for castell
    assert out.count("refused 0, timed out 0 (bare 0/0)") == 3
    bare_actions = re.search(r"\nactions/s +([\d,]+) ", out)
    assert bare_actions and int(bare_actions[1].replace(",", "")) > 0, out
    # however short the runs, each table's castell run counted actions
    counted = re.findall(r"actions counted per castell run: \[(\d+)\]", out)
    assert len(counted) == 3 and all(int(n) > 0 for n in counted), counted
    # what the members of a room receive per action, patched views and all
    assert out.count("bytes/action") == 5  # the note, every table and the scale curve
    # the scale curve: the paced runs side by side, memory per room included
    assert "scale: castell's paced runs side by side" in out
    curve = out.split("scale: castell's paced runs side by side", 1)[1].splitlines()[2:4]
    assert [row.split()[0] for row in curve] == ["1", "2"] and all("KiB" in r for r in curve)
    # the durable case: a SQLite file and the tests' PostgreSQL, group commit on and off,
    # every action acknowledged once stored, none refused
    for case in ("file", "postgresql"):
        assert f"{case}, group commit on " in out and f"{case}, group commit off " in out
    assert "'file, group commit on': 0, 'file, group commit off': 0, 'postgresql, group " \
           "commit on': 0, 'postgresql, group commit off': 0" in out
    # the profiled run's summary charges CPU time to our code by path
    assert profile.exists() and "ours: server/" in out and "server/app.py" in out


def test_the_scale_curve_merges_the_load_of_its_processes(capsys):
    # two load processes share each point's rooms (3 rooms: 2 and 1), both servers at each
    bench_main.run("scale", ["--rooms", "2,3", "--load-procs", "2", "--seconds", "0.3",
                             "--warmup", "0", "--think", "0.02"])
    out = capsys.readouterr().out
    assert "the load from 2 processes" in out
    table = out.split("median of the runs", 1)[1].splitlines()[2:6]
    rows = [row.split() for row in table]
    assert [cells[:2] if cells[1] == "bare" else cells[:1] for cells in rows] == \
        [["2", "bare"], ["castell"], ["3", "bare"], ["castell"]]
    for cells in rows:  # every run counted actions (the column after asked/s), none refused
        actions = cells[3] if cells[1] == "bare" else cells[2]
        assert int(actions.replace(",", "")) > 0 and "0/0" in cells, cells
    assert "one castell process fills one core at about" in out


#: Why the Colyseus comparison cannot run here (no Node, or no `npm install` done), or None.
PEER_MISSING = peer.missing()


@pytest.mark.skipif(PEER_MISSING is not None, reason=f"{PEER_MISSING}")
def test_the_peer_benchmark_drives_bare_castell_and_colyseus_alike():
    # A tiny load through `python -m bench peer`: two rooms paced (a room acts every 0.02 s)
    # and two saturated, one run of each server; the six server processes are most of it.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bench", "peer", "--rooms", "2",
                           "--seconds", "0.5", "--warmup", "0", "--think", "0.02",
                           "--sat-rooms", "2", "--repeat", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # the versions that ran, read off the installed packages
    assert "@colyseus/core 0." in out and "@colyseus/sdk 0." in out
    # the paced table and the saturated one, three servers side by side, none refused
    assert out.count("colyseus ÷ bare") == 2
    assert out.count("refused/timed out: bare 0/0, castell 0/0, colyseus 0/0") == 2
    for row in ("rtt p99", "actions/s", "server CPU/action", "bytes/action"):
        assert out.count(f"\n{row}  ") == 2, row  # a table row (the note says one space)
    # however short the runs, every server's run counted actions
    counted = re.findall(r"actions counted per run: \{'bare': \[(\d+)\], 'castell': "
                         r"\[(\d+)\], 'colyseus': \[(\d+)\]\}", out)
    assert len(counted) == 3 and all(int(n) > 0 for run in counted for n in run), counted
    # Colyseus's patches reached every member: bytes were counted for its actions
    saturated = out.split("saturated:", 1)[1]
    colyseus_bytes = re.search(r"\nbytes/action +\S+ B +\S+ B +([\d,]+) B", saturated)
    assert colyseus_bytes and int(colyseus_bytes[1].replace(",", "")) > 0


def test_the_peer_benchmark_says_what_to_install_without_node(tmp_path):
    # PATH holds an empty folder: no node, whatever this machine has
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "bench", "peer", "--rooms", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "needs Node" in done.stderr and "npm install` in bench/peers/colyseus" in \
        done.stderr, done.stderr
    assert not done.stdout


def test_python_m_bench_dispatches():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bench", "engine", "--seconds", "0.1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "games/s" in done.stdout
    usage = subprocess.run([sys.executable, "-m", "bench", "nothing"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "usage" in usage.stderr
