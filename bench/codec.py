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
"""

from __future__ import annotations

import argparse
import json
import statistics

import msgpack

from bench.common import best_of, machine, room_info, sample_game, table
from shared import messages as m
from shared.actions import Build
from shared.codec import decode, decode_request, encode, encode_state, event_to_wire
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench codec",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200,
                        help="calls per timing of a push (ten times that for an action)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(report(measure(max(1, min(args.number, 100_000)), args.seed)))


if __name__ == "__main__":
    main()
