"""What the wire costs: encoding and decoding a mid-game ``state`` push and an action, and the
push's size, next to the standard library's ``json`` on the same data.

    python -m bench codec [--number N] [--seed S]

The push is that of a seeded 4-seat game in round 5 (towers standing, teams grown) with the
events of one move; the action is a ``build`` of a five-level tower (the largest action).

* ``encode`` is what the server does once per change: ``shared.codec.encode_state`` (and
  ``encode`` for the action), against ``json.dumps`` of the same wire map (compact
  separators) — and ``build_view``, which comes before it, is timed too;
* ``decode`` is what a reader does: ``shared.codec.decode`` (limits, depth check, the
  message's class; the view is checked separately by ``parse_view``, also timed) and
  ``decode_request`` for the action, against ``json.loads`` of the JSON text;
* sizes are of the MessagePack frame and of the compact JSON text.

Then what view patches save (``--games`` random 4-seat games played to the end): the mean
size of the whole ``state`` push of each change against its ``patch`` push, with lists of
plain values sent whole (what the server does) and as index edits, and the time
``shared.patch.diff`` takes (once per change of a room).
"""

from __future__ import annotations

import argparse
import json
import statistics

import msgpack

from bench.common import best_of, machine, room_info, sample_game, table
from shared import messages as m
from shared.actions import Build
from shared.codec import decode, decode_request, encode, encode_patch, encode_state, event_to_wire
from shared.patch import diff
from shared.view import build_view, parse_view

TOWER = ((9, 9, 9, 9, 9), (8, 8, 7, 7), (6, 6, 6), (4, 4), (2,))
VERSION = 187


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def measure(number: int, seed: int, rounds: int = 5) -> dict[str, list[float]]:
    """Seconds per call of each operation, one value per round (ours and json interleaved)."""
    state, events = sample_game(4, seed)
    info = room_info(state)
    view = build_view(info, state)
    push = m.to_wire(m.StatePush(info.room, VERSION, view, tuple(map(event_to_wire, events))))
    push_bytes = encode_state(info.room, VERSION, view, events)
    push_json = _dumps(push)
    action = m.ActionRequest(id=41, action=Build(TOWER))
    action_bytes = encode(action)
    action_json = _dumps(m.to_wire(action))
    assert json.loads(push_json) == msgpack.unpackb(push_bytes), "json and msgpack disagree"

    ops = {
        "build_view": lambda: build_view(info, state),
        "push encode": lambda: encode_state(info.room, VERSION, view, events),
        "push encode json": lambda: _dumps(push),
        "push decode": lambda: decode(push_bytes),
        "push decode json": lambda: json.loads(push_json),
        "parse_view": lambda: parse_view(view),
        "action encode": lambda: encode(action),
        "action encode json": lambda: _dumps(m.to_wire(action)),
        "action decode": lambda: decode_request(action_bytes),
        "action decode json": lambda: json.loads(action_json),
    }
    times: dict[str, list[float]] = {name: [] for name in ops}
    for _ in range(rounds):
        for name, op in ops.items():
            scale = 10 if name.startswith("action") else 1
            times[name].append(best_of(op, number * scale, repeat=3))
    times["sizes"] = [len(push_bytes), len(push_json.encode()), len(action_bytes),
                      len(action_json.encode())]
    return times


def report(times: dict[str, list[float]]) -> str:
    def us(name: str) -> float:
        return statistics.median(times[name]) * 1e6

    rows = [["", "ours µs", "json µs", "ours ÷ json"]]
    for what in ("push encode", "push decode", "action encode", "action decode"):
        ours, base = us(what), us(f"{what} json")
        rows.append([what, f"{ours:.1f}", f"{base:.1f}", f"{ours / base:.2f}×"])
    push_mp, push_js, act_mp, act_js = times["sizes"]
    rows.append(["push size (bytes)", f"{push_mp:.0f}", f"{push_js:.0f}",
                 f"{push_mp / push_js:.2f}×"])
    rows.append(["action size (bytes)", f"{act_mp:.0f}", f"{act_js:.0f}",
                 f"{act_mp / act_js:.2f}×"])
    change = us("build_view") + us("push encode")
    return "\n".join([
        f"codec: a 4-seat round-5 state push and a build action — {machine()}",
        table(rows),
        f"also: build_view {us('build_view'):.1f} µs, so one change costs the server "
        f"{change:.1f} µs to show (build_view + encode_state, once for the whole room); "
        f"parse_view (a client's full check of the view) {us('parse_view'):.1f} µs",
    ])


def patch_sizes(games: int, seed: int) -> dict[str, float]:
    """Mean bytes per change of the whole push and of the patch push (whole lists, index
    edits) over ``games`` random games, and the mean µs of one ``diff``."""
    import random
    import time

    from shared import engine
    from shared.legal import legal_actions

    sizes = {"whole": 0, "patch": 0, "patch, index edits": 0}
    changes, spent = 0, 0.0
    for number in range(games):
        rng = random.Random(seed + number)
        state = engine.new_game(["A", "B", "C", "D"], "normal", seed + number)
        old = build_view(room_info(state), state)
        while not state.over:
            assert state.turn is not None
            state, events = engine.apply(state, state.turn,
                                         rng.choice(legal_actions(state, state.turn)))
            new = build_view(room_info(state), state)
            start = time.perf_counter()
            patch = diff(old, new)
            spent += time.perf_counter() - start
            sizes["whole"] += len(encode_state("r1f2e3d4c", 2, new, events))
            sizes["patch"] += len(encode_patch("r1f2e3d4c", 1, 2, patch, events))
            sizes["patch, index edits"] += len(encode_patch(
                "r1f2e3d4c", 1, 2, diff(old, new, index_edits=True), events))
            changes += 1
            old = new
    return {**{k: v / changes for k, v in sizes.items()}, "diff µs": spent / changes * 1e6}


def patch_report(games: int, figures: dict[str, float]) -> str:
    rows = [["push of one change", "bytes", "÷ whole"]]
    for name in ("whole", "patch", "patch, index edits"):
        rows.append([name, f"{figures[name]:.0f}", f"{figures[name] / figures['whole']:.3f}×"])
    return "\n".join([
        f"\nview patches: mean over every change of {games} random 4-seat games",
        table(rows),
        f"diff (once per change of a room): {figures['diff µs']:.1f} µs",
    ])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench codec",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200,
                        help="calls per timing of a push (ten times that for an action)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--games", type=int, default=5,
                        help="random games whose every change is patched")
    args = parser.parse_args(argv)
    print(report(measure(max(1, min(args.number, 100_000)), args.seed)))
    games = max(1, min(args.games, 1000))
    print(patch_report(games, patch_sizes(games, args.seed)))


if __name__ == "__main__":
    main()
