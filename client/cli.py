"""``castell``: join a server, play a game against bots, or replay a recorded game.

    castell [ws://HOST:PORT] [--name NAME] [--plain] [--no-color] [--cafile PEM] [--insecure]
    castell play [--resume | --new] [--seats N] [--variant normal|advanced] [--bots ...] ...
    castell play --games | --export [ROOM] [--output FILE]
    castell replay FILE [--plain]
    castell learn [--restart] [--name NAME] [--plain] [--no-color]
    castell review FILE [--plain] [--seed N] [--samples N] [--candidates N]
    castell account export [URL] | castell account import [--replace] LINE
    castell games [URL]
    castell quick [URL] [--seats 2,3,4] [--rated] [--bots-after SECONDS]

``castell learn`` plays the guided first game (:mod:`client.modes.learn`), which a first
``castell play`` offers once; ``castell play`` keeps the player's record against the bots
(:mod:`client.control.results`).

The screen is full-screen (:mod:`client.screens.app`) on a terminal, and line by line
(:mod:`client.screens.plain`) with ``--plain`` or when standard input or output is not a terminal.
A player who leaves a game under way is told, once the screen closes, that the seat is kept
and which command brings them back.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from client.net.address import DEFAULT_URL, AddressError, server_url
from shared.wire import PLAYER_NAME_MAX

if TYPE_CHECKING:  # imported lazily at run time: `castell --help` stays instant
    from prompt_toolkit.history import History

    from client.control.controller import Controller
    from client.control.lobby import Quick
    from client.net.session import Session

Startup = Callable[["Controller"], Awaitable[None]]


def default_name() -> str:
    """The OS user name, as a player name (1–24 printable characters)."""
    try:
        name = getpass.getuser()
    except Exception:  # no user name in this environment
        name = ""
    name = "".join(ch for ch in name if ch.isprintable()).strip()[:PLAYER_NAME_MAX]
    return name or "player"


def player_name(text: str) -> str:
    name = " ".join(text.split())
    if not name or len(name) > PLAYER_NAME_MAX or not name.isprintable():
        raise argparse.ArgumentTypeError(f"a name is 1 to {PLAYER_NAME_MAX} printable characters")
    return name


def _display_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", type=player_name, default=None,
                   help="your name at the table (default: your user name)")
    p.add_argument("--plain", action="store_true",
                   help="plain lines, no colours or boxes: for scripts and screen readers")
    p.add_argument("--no-color", action="store_true", help="no colours")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="castell",
        # The three ways in, each its own parser: say them all where a newcomer looks first.
        usage="\n".join([
            "castell [URL] [--name NAME] [--plain] [--no-color] [--cafile PEM] [--insecure]"
            " [--resume]",
            "       castell play [OPTIONS]     (a game against bots: castell play --help)",
            "       castell replay FILE [--plain]   (a recorded game: castell replay --help)",
            "       castell learn   (a guided first game, lesson by lesson)",
            "       castell review FILE [--plain]   (a recorded game against the hard bot)",
            "       castell games [URL]   (your games on a server)",
            "       castell quick [URL] [--seats 2,3] [--rated]   (a game with strangers now)",
            "       castell account export [URL] | import [--replace] LINE   (your account"
            " elsewhere)",
        ]),
        description="Play Castell. `castell play` starts a game against bots; `castell URL` "
                    "joins a server (`castell-server` on a friend's machine); `castell replay "
                    "FILE` steps through a recorded game.",
    )
    p.add_argument("url", nargs="?", default=DEFAULT_URL,
                   help=f"the server, e.g. ws://192.168.1.5:8765 (default {DEFAULT_URL})")
    _display_options(p)
    p.add_argument("--cafile", metavar="PEM",
                   help="trust this certificate (a wss:// server's own) besides the system's")
    p.add_argument("--insecure", action="store_true",
                   help="do not check a wss:// server's certificate (unsafe)")
    p.add_argument("--resume", action="store_true",
                   help="take back your latest seat on this server without asking")
    p.add_argument("--guest", action="store_true",
                   help="play as a guest: without this computer's account on the server")
    return p


def build_account_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="castell account",
        description="Your account on a server is a secret key this computer keeps. `export` "
                    "prints it as a recovery line (keep it as secret as a password); "
                    "`import` takes such a line on another computer, which then plays as "
                    "the same account.")
    sub = p.add_subparsers(dest="what", required=True)
    export = sub.add_parser("export", help="print the recovery line of your account")
    export.add_argument("url", nargs="?", default=DEFAULT_URL,
                        help=f"the server (default {DEFAULT_URL})")
    imported = sub.add_parser("import", help="keep the account of a recovery line here")
    imported.add_argument("line", nargs="*",
                          help="the recovery line (read from standard input when not given)")
    imported.add_argument("--replace", action="store_true",
                          help="replace a key kept for that server (a lost key is a lost "
                               "account: the key replaced is written aside, and said where)")
    return p


def build_quick_parser() -> argparse.ArgumentParser:
    p = build_parser()
    p.prog = "castell quick"
    p.usage = None
    p.description = ("Join the server and wait in its quick-match queue: the game starts as "
                     "soon as players for it are found (a live line says how many).")
    p.add_argument("--seats", default="2,3,4", metavar="2,3,4",
                   help="the numbers of players you accept (default: any)")
    p.add_argument("--rated", action="store_true",
                   help="a rated game (your account's rating changes; no bots)")
    p.add_argument("--bots-after", type=int, metavar="SECONDS",
                   help="an unrated game: let bots fill it after that many seconds")
    return p


def build_games_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="castell games",
                                description="List your games on a server: in play (whose "
                                            "turn) and finished.")
    p.add_argument("url", nargs="?", default=DEFAULT_URL,
                   help=f"the server (default {DEFAULT_URL})")
    p.add_argument("--cafile", metavar="PEM", help="trust this certificate besides the system's")
    p.add_argument("--insecure", action="store_true",
                   help="do not check a wss:// server's certificate (unsafe)")
    return p


def build_play_parser() -> argparse.ArgumentParser:
    from client.modes.play import DEFAULT_BOT_DELAY

    p = argparse.ArgumentParser(prog="castell play",
                                description="Play a game against bots, right now, offline. "
                                            "Games are kept on this computer: an unfinished "
                                            "one is offered again next time.")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help="go back to your unfinished game without asking")
    again.add_argument("--new", action="store_true",
                       help="start a new game (an unfinished one stays kept)")
    again.add_argument("--games", action="store_true",
                       help="list the games kept on this computer, and stop")
    again.add_argument("--export", nargs="?", const="", default=None, metavar="ROOM",
                       help="write a kept game (the latest finished one unless ROOM is "
                            "given) to a file for `castell replay`, and stop")
    p.add_argument("--output", metavar="FILE",
                   help="with --export: the file to write (default castell-ROOM.json)")
    p.add_argument("--seats", type=int, choices=(2, 3, 4), default=4,
                   help="players at the table, you included (default 4)")
    p.add_argument("--variant", choices=("normal", "advanced"), default="normal")
    p.add_argument("--bots", choices=("easy", "normal", "hard", "random", "greedy"),
                   default="normal",
                   help="how well the bots play: easy (a first game), normal, hard (it "
                        "looks past its own turn); default normal")
    p.add_argument("--bot-delay", type=float, default=DEFAULT_BOT_DELAY, metavar="SECONDS",
                   help=f"pause before each bot action (default {DEFAULT_BOT_DELAY})")
    _display_options(p)
    return p


def build_learn_parser() -> argparse.ArgumentParser:
    from client.learn.lessons import LESSONS

    p = argparse.ArgumentParser(prog="castell learn",
                                description=f"A guided first game: {len(LESSONS)} short "
                                            "lessons on the real board, each asking for one "
                                            "thing. `quit` any time: the next `castell learn` "
                                            "takes you back to the lesson you left.")
    p.add_argument("--restart", action="store_true", help="start again from the first lesson")
    _display_options(p)
    return p


def build_replay_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="castell replay",
                                description="Step through a game record written by "
                                            "`castell-server export`.")
    p.add_argument("file", metavar="FILE", help="the record (a .json file)")
    p.add_argument("--plain", action="store_true", help="print every step as plain lines")
    p.add_argument("--no-color", action="store_true", help="no colours")
    return p


def build_review_parser() -> argparse.ArgumentParser:
    from shared.search import CANDIDATES, SAMPLES

    p = argparse.ArgumentParser(prog="castell review",
                                description="Review a recorded game (written by `castell-server "
                                            "export` or `castell play --export`) against the "
                                            "hard bot and the exact tower solver, here, then "
                                            "step through the review: every turn, the "
                                            "costliest ones, the charts.")
    p.add_argument("file", metavar="FILE", help="the record (a .json file)")
    p.add_argument("--plain", action="store_true", help="print the whole review as plain lines")
    p.add_argument("--no-color", action="store_true", help="no colours")
    p.add_argument("--seed", type=_natural(0), default=0,
                   help="the seed of the review's samples (default 0: the same review each time)")
    p.add_argument("--samples", type=_natural(1), default=SAMPLES, metavar="N",
                   help=f"bag orders each line is played out with (default {SAMPLES}, as the "
                        "hard bot)")
    p.add_argument("--candidates", type=_natural(1), default=CANDIDATES, metavar="N",
                   help=f"lines the hard bot weighs each turn (default {CANDIDATES})")
    return p


def _natural(least: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least or value > 2**63 - 1:
            raise argparse.ArgumentTypeError(f"{value} is below {least}" if value < least
                                             else f"{value} is too large")
        return value

    return parse


def _use_plain(requested: bool) -> bool:
    return requested or not (sys.stdin.isatty() and sys.stdout.isatty())


def _use_color(no_color: bool) -> bool:
    return not no_color and sys.stdout.isatty() and "NO_COLOR" not in os.environ


async def run_screen(session: Session, startup: Startup | None, *, plain: bool,
                     color: bool, comeback: str | None = None,
                     keeps_games: str | None = None,
                     make: Callable[[Session], Controller] | None = None) -> int:
    """Put a controller and a screen on ``session`` and run until the player quits; then,
    if a game under way was left, say that the seat is kept and how to come back
    (``comeback``, the command that does); if a finished game this server keeps was left,
    how to write it to a file (``keeps_games``); if another connection took the seat back,
    that this one closed for it. ``make``: the controller (a plain one unless told)."""
    from client.control.controller import Controller
    from client.net.session import SEAT_TAKEN_TEXT

    controller = (make or Controller)(session)
    controller.comeback = comeback
    controller.keeps_games = keeps_games

    async def boot() -> None:
        if startup is not None:
            await startup(controller)

    if plain:
        from client.screens.plain import PlainScreen

        await PlainScreen(controller).run(boot)
    else:
        from client.screens.app import TerminalScreen

        await TerminalScreen(controller, color=color, history=_history()).run(boot)
    # (A plain screen printed the finished game's note already, and nothing clears it; and
    # the seat taken back, as its last line.)
    kept = controller.kept_seat() or (None if plain else controller.finished_note())
    if session.seat_lost and not plain:  # the full screen said it, then closed: say it again
        kept = SEAT_TAKEN_TEXT.replace("this one closes", "this one has closed")
    if session.barred is not None:
        kept = session.barred
    if kept is not None:
        print(f"{kept[0].upper()}{kept[1:]}.", flush=True)
    return 1 if session.seat_lost or session.barred is not None else 0


def _history() -> History:
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    from client.local.seats import DIR_MODE, default_state_dir

    try:
        folder = default_state_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        return FileHistory(str(folder / "history"))
    except OSError:
        return InMemoryHistory()


async def _quick(args: argparse.Namespace) -> int:
    """``castell quick``: join, then wait in the quick-match queue."""
    from client.control.lobby import Quick, parse_lobby

    words = ["quick", args.seats.replace(" ", "")]
    if args.rated:
        words.append("rated")
    if args.bots_after is not None:
        words.append(f"bots={args.bots_after}")
    cmd = parse_lobby(" ".join(words))
    assert isinstance(cmd, Quick)
    return await _join(args, quick=cmd)


async def _join(args: argparse.Namespace, quick: Quick | None = None) -> int:
    from websockets.exceptions import WebSocketException

    from client.local.seats import SeatStore
    from client.net.net import ServerError
    from client.net.session import Session, describe_failure
    from client.net.tls import client_ssl_context

    url = server_url(args.url)
    context = client_ssl_context(url, args.cafile, args.insecure)
    from client.local.keys import KeyStore

    session = Session(url, args.name or default_name(), ssl_context=context,
                      seats=SeatStore(), keys=None if args.guest else KeyStore())
    try:
        await session.open()
    except ServerError as exc:
        print(f"castell: {url} refused you: {exc.message}", file=sys.stderr)
        return 1
    except (OSError, TimeoutError, WebSocketException) as exc:
        print(f"castell: {describe_failure(url, exc)}", file=sys.stderr)
        return 1

    async def startup(controller: Controller) -> None:
        await controller.start(resume=args.resume)
        if quick is not None and session.room is None:
            await controller.guard(controller.quick(quick))

    return await run_screen(session, startup, plain=_use_plain(args.plain),
                            color=_use_color(args.no_color), comeback=comeback_command(url))


def comeback_command(url: str) -> str:
    """The command that takes a seat on the server at ``url`` back."""
    from client.local.seats import server_key

    where = "" if server_key(url) == server_key(DEFAULT_URL) else f" {url}"
    return f"castell{where} --resume"


async def _play(args: argparse.Namespace) -> int:
    from client.modes.play import export_kept, list_games, play

    if args.games:
        return await list_games(sys.stdout)
    if args.export is not None:
        return await export_kept(args.export or None, args.output, sys.stdout)
    plain, color = _use_plain(args.plain), _use_color(args.no_color)

    def controller(session: Session) -> Controller:
        from client.control.results import ResultsController

        return ResultsController(session, festivals_in_pane=not plain)

    async def run(session: Session, begin: Startup) -> int:
        return await run_screen(session, begin, plain=plain, color=color,
                                comeback="castell play --resume",
                                keeps_games="this game is kept: `castell play --export {room}` "
                                            "writes it to a file for `castell replay`",
                                make=controller)

    again = "resume" if args.resume else "new" if args.new else None
    if not plain:  # a first run offers the lessons first (once, ever)
        from client.modes.learn import offer_lessons

        offered = await offer_lessons(args.name or default_name(), color=color,
                                      played_before=played_before(), history=_history())
        if offered.note is not None:
            print(offered.note, flush=True)
        if not offered.go_play:
            return 0
    return await play(args.name or default_name(), seats=args.seats, variant=args.variant,
                      level=args.bots, bot_delay=max(0.0, args.bot_delay), run=run,
                      resume=again)


def played_before() -> bool:
    """Whether ``castell play`` ran on this computer before (it kept a game file)."""
    from client.modes.play import play_db_path

    return play_db_path().exists()


async def _learn(args: argparse.Namespace) -> int:
    from client.modes.learn import run_lessons

    plain = _use_plain(args.plain)
    outcome = await run_lessons(args.name or default_name(), plain=plain,
                                color=_use_color(args.no_color), restart=args.restart,
                                history=None if plain else _history())
    if outcome.note is not None:
        print(outcome.note, flush=True)
    return 0


def _replay(args: argparse.Namespace) -> int:
    from client.modes.replay import load, print_plain, run_viewer

    record = load(args.file)
    if _use_plain(args.plain):
        print_plain(record, sys.stdout)
    else:
        run_viewer(record, color=_use_color(args.no_color))
    return 0


def _review(args: argparse.Namespace) -> int:
    from client.modes.replay import load
    from client.modes.review import compute, print_plain, run_viewer
    from shared.review import Budget

    record = load(args.file)
    plain, color = _use_plain(args.plain), _use_color(args.no_color)
    review = compute(record, out=sys.stdout, plain=plain, seed=args.seed,
                     budget=Budget(args.samples, args.candidates), color=color)
    if plain:
        print_plain(review, sys.stdout)
    else:
        run_viewer(record, review, color=color)
    return 0


def _account(args: argparse.Namespace) -> int:
    from client.local.keys import KeyStore, parse_recovery_line, recovery_line

    keys = KeyStore()
    if args.what == "export":
        url = server_url(args.url)
        key = keys.get(url)
        if key is None:
            print(f"castell: you have no account on {url} yet: `castell {url}` makes one",
                  file=sys.stderr)
            return 1
        print(recovery_line(url, key))
        # (the line alone on stdout, for a file or a pipe; the warning beside it, on stderr)
        print("castell: the line above is your account's key: whoever has it plays as you. "
              "Treat it as a password: keep it somewhere safe, give it to nobody; "
              "`castell account import` takes it on another computer.", file=sys.stderr)
        return 0
    line = " ".join(args.line) if args.line else sys.stdin.readline()
    url, key = parse_recovery_line(line)
    replaced = keys.put(url, key, replace=args.replace)
    if replaced is not None:
        print(f"castell: the key kept for {url} before is in {keys.aside} (as a recovery "
              "line: `castell account import --replace` takes it back)")
    print(f"castell: the account is kept for {url}: `castell {url}` signs in to it")
    return 0


async def _games(args: argparse.Namespace) -> int:
    from websockets.exceptions import WebSocketException

    from client.control.lobby import game_lines
    from client.local.keys import KeyStore
    from client.net.net import GameClient, ServerError
    from client.net.session import describe_failure
    from client.net.tls import client_ssl_context
    from shared.messages import MyGames

    url = server_url(args.url)
    keys = KeyStore()
    try:
        client = await GameClient.connect(url, ssl_context=client_ssl_context(
            url, args.cafile, args.insecure))
    except (OSError, TimeoutError, WebSocketException) as exc:
        print(f"castell: {describe_failure(url, exc)}", file=sys.stderr)
        return 1
    try:
        # The key is the server's, found by who the server says it is (not by the address).
        key = keys.find(url, await client.identify())
        if key is None:
            print(f"castell: you have no account on {url}: `castell {url}` makes one",
                  file=sys.stderr)
            return 1
        welcome = await client.hello(default_name(), key)
        games = (await client.request(MyGames, limit=100)).entries
    except ServerError as exc:
        print(f"castell: {url} refused you: {exc.message}", file=sys.stderr)
        return 1
    finally:
        await client.close()
    print(f"Your games on {url} (you are {welcome.name}):")
    for line in game_lines(games):
        print(line)
    waiting = sum(g.your_turn for g in games)
    if waiting:
        print(f"Your turn in {waiting} game{'s' if waiting != 1 else ''}: `castell {url}` "
              "then `resume N`.")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The ``castell`` command."""
    from shared.errors import CastellError

    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        if args_list[:1] == ["play"]:
            return asyncio.run(_play(build_play_parser().parse_args(args_list[1:])))
        if args_list[:1] == ["learn"]:
            return asyncio.run(_learn(build_learn_parser().parse_args(args_list[1:])))
        if args_list[:1] == ["replay"]:
            return _replay(build_replay_parser().parse_args(args_list[1:]))
        if args_list[:1] == ["review"]:
            return _review(build_review_parser().parse_args(args_list[1:]))
        if args_list[:1] == ["account"]:
            return _account(build_account_parser().parse_args(args_list[1:]))
        if args_list[:1] == ["games"]:
            return asyncio.run(_games(build_games_parser().parse_args(args_list[1:])))
        if args_list[:1] == ["quick"]:
            return asyncio.run(_quick(build_quick_parser().parse_args(args_list[1:])))
        return asyncio.run(_join(build_parser().parse_args(args_list)))
    except (AddressError, ValueError) as exc:
        print(f"castell: {exc}", file=sys.stderr)
        return 2
    except CastellError as exc:
        print(f"castell: {exc.message}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"castell: {exc.strerror or exc}"
              f"{f': {exc.filename}' if exc.filename else ''}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
