"""The web pages in a real browser, for ``docs/screens``: headless Chromium's screenshots of
the front page, a game in play and a finished game's replay, at a phone's width (390 px)
and a desktop's (1280 px).

    python -m tests.support.capture_web [--out docs/screens] [--no-review]

A real server in this process, on a SQLite file of its own, is given something to show:
rated games stored for six accounts (the leaderboard); a finished four-seat game, Anna
against three bots, played over the protocol with the ``normal`` bot's choices in her seat,
and its review, computed by the server at a small budget (``--no-review``: none, quicker);
a game in play, stopped at Anna's turn in round 5, with a spectator; rooms waiting for
players; an open tournament. Then the system's Chromium loads each page (nothing but this
server's own pages and stylesheet) and saves what it shows as a PNG.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
from pathlib import Path
from typing import Final

from client.net.net import GameClient
from server.app import CastellServer
from server.ops.export import record_file
from server.store import open_store
from shared import messages as m
from tests.support.servers import ROOT, serving
from tests.support.web import bot_room, play_seat, seed_ratings

#: The names Chromium goes by in the systems' packages, in the order they are looked for.
BROWSERS: Final = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Each screen: its file's name, what it shows, its width and height in pixels.
PHONE: Final = 390
DESKTOP: Final = 1280
SCREENS: Final = (
    ("web-home-desktop", "home", DESKTOP, 1300),
    ("web-home-phone", "home", PHONE, 2300),
    ("web-live-desktop", "live", DESKTOP, 1900),
    ("web-live-phone", "live", PHONE, 3000),
    ("web-replay-desktop", "replay", DESKTOP, 3200),
    ("web-replay-phone", "replay", PHONE, 2600),
)


def browser() -> str | None:
    """The path of the system's Chromium, or None where there is none."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found is not None:
            return found
    return None


async def shoot(chromium: str, address: str, out: Path, width: int, height: int) -> None:
    """One screenshot of the page at ``address``, ``width`` × ``height`` CSS pixels."""
    with tempfile.TemporaryDirectory() as profile:
        proc = await asyncio.create_subprocess_exec(
            chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}",
            "--force-device-scale-factor=1", f"--window-size={width},{height}",
            "--virtual-time-budget=4000", f"--screenshot={out}", address,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        async with asyncio.timeout(120):
            code = await proc.wait()
    if code != 0 or not out.exists():
        raise RuntimeError(f"chromium could not take {out.name} (exit {code})")


async def stage(url: str, server: CastellServer, keys: dict[str, str], review: bool,
                ) -> dict[str, str]:
    """Games, rooms and players to show (``keys``: the accounts' keys, by name); the path
    of each page to take."""
    rng = random.Random(7)
    anna = await GameClient.connect(url)
    await anna.hello("Anna", keys["Anna"])
    done = await bot_room(anna, "Friday night", ["normal", "normal", "easy"])
    await play_seat(anna, done.seat, rng, timeout=300)
    if review:  # as a player's `review` asks it, computed by the server and kept
        record = await server.store.load(done.room)
        assert record is not None
        await server.reviews.review(record_file(record), share="capture",
                                    progress=lambda _done, _total: None)
    await anna.request(m.LeaveRoom)
    live = await bot_room(anna, "Dimecres al vespre", ["normal", "normal", "easy"],
                          turn_seconds=120)
    await play_seat(anna, live.seat, rng, until_round=5, timeout=300)
    watchers = []
    for name in ("Biel", "Carme", "Dani", "Elna"):
        client = await GameClient.connect(url)
        await client.hello(name, keys[name])
        watchers.append(client)
    await watchers[0].request(m.JoinRoom, room=live.room, as_="spectator")
    await watchers[1].request(m.CreateRoom, name="Dilluns, partida tranquil·la", seats=3,
                              turn_seconds=300)
    await watchers[2].request(m.CreateRoom, name="Quick one", seats=2, turn_seconds=60)
    made = await watchers[3].request(m.TournamentCreate, name="Festa Major", rounds=3,
                                     seats=2, turn_seconds=120)
    await watchers[2].request(m.TournamentJoin, tournament=made.tournament)
    return {"home": "/", "live": f"/rooms/{live.room}",
            "replay": f"/games/{done.room}?step=120"}


async def capture(out: Path, *, review: bool = True) -> list[Path]:
    """Take every screen of :data:`SCREENS` into ``out``; the files written."""
    chromium = browser()
    if chromium is None:
        raise RuntimeError("no Chromium here: install the system's chromium package")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as where:
        folder = Path(where)
        store = open_store(str(folder / "web.sqlite3"))
        await store.open()
        keys = await seed_ratings(store, {"Anna": [1, 1, 2, 1, 1, 2], "Biel": [1, 2, 1, 1, 2],
                                   "Carme": [2, 1, 2, 2, 1], "Dani": [1, 1, 1, 2, 1, 1],
                                   "Elna": [2, 2, 1, 2, 2]})
        await store.close()
        async with serving(open_store(str(folder / "web.sqlite3")),
                           web_name="Castell a la fresca", web_join="wss://castell.example.org",
                           review_samples=1, review_candidates=2) as (server, url):
            paths = await stage(url, server, keys, review)
            address = url.replace("ws://", "http://")
            written = []
            for name, page, width, height in SCREENS:
                target = out / f"{name}.png"
                await shoot(chromium, address + paths[page], target, width, height)
                written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.capture_web",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screens",
                        help="where the PNG files go (default docs/screens)")
    parser.add_argument("--no-review", action="store_true",
                        help="compute no review of the finished game (quicker)")
    args = parser.parse_args(argv)
    for path in asyncio.run(capture(args.out, review=not args.no_review)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
