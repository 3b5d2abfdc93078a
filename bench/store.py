"""What durability costs: the time of one ``append_action``, by SQLite ``synchronous`` setting.

    python -m bench.store [--count N] [--dir DIR] [--writers 50] [--writer-seconds 3]

Three stores take the same actions, interleaved in rounds so that drift in the machine's load
hits them alike: ``:memory:`` (the baseline: the same code and thread hop, no disk), a file with
``synchronous=NORMAL`` (survives a killed process, may lose the last actions on a power cut)
and a file with ``synchronous=FULL`` (what the server uses: an fsync per acknowledged action).
Prints mean, p50 and p99 per action and the ratios. Give ``--dir`` a folder on the disk the
server will use: on a RAM-backed /tmp an fsync costs nothing and FULL looks free.

Then group commit, on the store alone: ``--writers`` rooms append at once on a FULL file,
each waiting for its acknowledgement before its next action, with group commit on and off;
the figure is acknowledged appends per second (the server's own CPU per action is left out:
``python -m bench server`` measures the two together, in its durable case).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from server.store import ActionRecord, RoomRecord, SQLiteStore

MAX_COUNT = 5000
ROUNDS = 10
WARMUP = 5


def filesystem_of(folder: Path) -> str:
    """The filesystem type holding ``folder`` (Linux; "?" elsewhere)."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return "?"
    best, kind = "", "?"
    resolved = str(folder.resolve())
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1]
        inside = resolved == point or resolved.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, fields[2]
    return kind


def percentile(sorted_values: list[float], fraction: float) -> float:
    index = min(len(sorted_values) - 1, round(fraction * (len(sorted_values) - 1)))
    return sorted_values[index]


async def measure(count: int, folder: Path) -> dict[str, list[float]]:
    stores = {
        "memory": SQLiteStore(":memory:", thread=True),
        "NORMAL": SQLiteStore(folder / "normal.sqlite3", synchronous="NORMAL"),
        "FULL": SQLiteStore(folder / "full.sqlite3", synchronous="FULL"),
    }
    times: dict[str, list[float]] = {name: [] for name in stores}
    room = RoomRecord("bench", "Bench", 4, "normal", None, False, None, seed=1)
    payload = b"\x82\xa4kind\xa4move\xa6region\xa3bcn"
    for store in stores.values():
        await store.open()
        await store.create_room(room)
    try:
        seq = 0
        per_round = -(-(count + WARMUP) // ROUNDS)
        for _ in range(ROUNDS):
            for name, store in stores.items():
                for offset in range(per_round):
                    action = ActionRecord("bench", seq + offset, 0, payload, 0.0, seq + offset)
                    start = time.perf_counter()
                    await store.append_action(action)
                    times[name].append(time.perf_counter() - start)
            seq += per_round
    finally:
        for store in stores.values():
            await store.close()
    return {name: values[WARMUP : WARMUP + count] for name, values in times.items()}


async def concurrent(folder: Path, writers: int, seconds: float, group_commit: bool,
                     run: int = 0) -> float:
    """Acknowledged appends per second on a FULL file when ``writers`` rooms each append
    an action, wait for its acknowledgement and append the next, for ``seconds``."""
    store = SQLiteStore(folder / f"writers-{group_commit}-{run}.sqlite3", synchronous="FULL",
                        group_commit=group_commit)
    payload = b"\x82\xa4kind\xa4move\xa6region\xa3bcn"
    done = 0
    async with store:
        for w in range(writers):
            await store.create_room(RoomRecord(f"w{w}", "Bench", 4, "normal", None, False,
                                               None, seed=1))
        stop = time.perf_counter() + seconds

        async def writer(room: str) -> None:
            nonlocal done
            seq = 0
            while time.perf_counter() < stop:
                await store.append_action(ActionRecord(room, seq, 0, payload, 0.0, seq + 1))
                seq += 1
                done += 1

        started = time.perf_counter()
        await asyncio.gather(*(writer(f"w{w}") for w in range(writers)))
        elapsed = time.perf_counter() - started
    return done / elapsed


def concurrent_report(folder: Path, writers: int, seconds: float, repeat: int = 3) -> str:
    """Group commit on and off, alternating, ``repeat`` runs each: the median rates."""
    rates: dict[bool, list[float]] = {True: [], False: []}
    for i in range(repeat):
        for on in ((True, False) if i % 2 == 0 else (False, True)):
            rates[on].append(asyncio.run(concurrent(folder, writers, seconds, on, i)))
    on, off = statistics.median(rates[True]), statistics.median(rates[False])
    return "\n".join([
        f"{writers} rooms appending at once on a FULL file, each waiting for its ack, "
        f"{seconds:g} s, median of {repeat} (the store alone, no server):",
        f"  group commit on   {on:>9,.0f} acknowledged appends/s",
        f"  group commit off  {off:>9,.0f} acknowledged appends/s   (on ÷ off {on / off:.1f}×)",
    ])


def report(times: dict[str, list[float]]) -> str:
    base = statistics.fmean(times["memory"])
    lines = [f"{'':18}{'mean':>10}{'p50':>10}{'p99':>10}{'× memory':>11}"]
    for name, values in times.items():
        ordered = sorted(values)
        mean = statistics.fmean(values)
        label = "memory (baseline)" if name == "memory" else f"file, {name}"
        lines.append(
            f"{label:18}{mean * 1e6:>8.0f}µs{percentile(ordered, 0.5) * 1e6:>8.0f}µs"
            f"{percentile(ordered, 0.99) * 1e6:>8.0f}µs{mean / base:>10.1f}×"
        )
    full, normal = statistics.fmean(times["FULL"]), statistics.fmean(times["NORMAL"])
    lines.append(f"FULL costs {full / normal:.1f}× NORMAL per acknowledged action")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.store", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--count", type=int, default=500, help=f"actions per store (at most {MAX_COUNT})"
    )
    parser.add_argument("--dir", type=Path, default=None, help="folder for the database files")
    parser.add_argument("--writers", type=int, default=50,
                        help="rooms appending at once in the group commit case (0: none)")
    parser.add_argument("--writer-seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    count = max(1, min(args.count, MAX_COUNT))
    writers = max(0, min(args.writers, 1000))
    with tempfile.TemporaryDirectory(prefix="castell-bench-", dir=args.dir) as tmp:
        folder = Path(tmp)
        print(
            f"append_action, {count} actions per store, files in {folder} "
            f"({filesystem_of(folder)})"
        )
        print(report(asyncio.run(measure(count, folder))))
        if writers:
            print(concurrent_report(folder, writers,
                                    max(0.2, min(args.writer_seconds, 60.0))))


if __name__ == "__main__":
    main()
