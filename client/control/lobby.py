"""What a player types before a game: in the lobby, and in a room waiting for its start.

:func:`parse_lobby` reads lobby lines (``list``, ``create``, ``join``, ``watch``,
``resume``) and :func:`parse_room` the lines of a room that waits for players (``bot``,
``fill``, ``start``, ``leave``, ``chat``); both also know ``help`` and ``quit``. Like
:mod:`client.control.commands`, each command's help stands next to its syntax.
"""

from __future__ import annotations

import time
from typing import Final

import attrs

from client.control.commands import Chat, CommandError, Help, Quit, did_you_mean
from shared.messages import (
    TOURNAMENT_TURN_SECONDS,
    Friend,
    FriendsReply,
    GameEntry,
    LeaderEntry,
    Note,
    ProfileReply,
)
from shared.sanitize import safe
from shared.wire import CHAT_MAX, ROOM_NAME_MAX, TURN_SECONDS_MAX, TURN_SECONDS_MIN

VARIANTS: Final = ("normal", "advanced")
#: The bot levels a player can ask for, weakest first (``greedy``, their old name for
#: ``normal``, still works).
BOT_LEVELS: Final = ("easy", "normal", "hard", "random", "greedy")


@attrs.frozen
class ListRooms:
    """Show the open rooms of the server (``more``: the next page, after those shown)."""

    more: bool = False


@attrs.frozen
class CreateRoom:
    """Create a room and sit in seat 0. Without a name the client asks for each setting."""

    name: str | None = None
    seats: int = 4
    variant: str = "normal"
    turn_seconds: int | None = None
    private: bool = False
    rated: bool = False


@attrs.frozen
class Top:
    """Show the server's leaderboard: the best players, or those around you (``me``)."""

    limit: int = 10
    around_me: bool = False


@attrs.frozen
class Whois:
    """Show a player's rating, games and last rated games."""

    name: str


@attrs.frozen
class Quick:
    """Wait for a game with strangers: of one of ``seats`` players, rated or not; unrated,
    bots fill it after ``bots_after`` seconds."""

    seats: tuple[int, ...] = (2, 3, 4)
    rated: bool = False
    bots_after: int | None = None


@attrs.frozen
class Challenge:
    """Challenge players by name to a game of ``seats`` (bots in the seats past them)."""

    names: tuple[str, ...]
    seats: int | None = None
    variant: str = "normal"
    turn_seconds: int | None = None
    rated: bool = False


@attrs.frozen
class AnswerChallenge:
    """``accept``, ``decline`` (a challenge made to you) or ``cancel`` (one you made):
    ``challenge`` its id, None for the latest."""

    how: str
    challenge: str | None = None


@attrs.frozen
class CancelQuick:
    """Leave the quick-match queue."""


@attrs.frozen
class JoinRoom:
    """Take a seat (or watch) in a room named by its id, its private code or its list number."""

    key: str
    spectate: bool = False


@attrs.frozen
class Resume:
    """Take back a seat remembered from an earlier run (the most recent one by default)."""

    number: int | None = None


@attrs.frozen
class Abandon:
    """Give up a kept game (resign it): number N of `games` signed in, else held seat N."""

    number: int


@attrs.frozen
class Games:
    """Show the games of your account on this server (in play and finished)."""


@attrs.frozen
class Replay:
    """Step through a finished game of `games`, fetched from the server."""

    number: int


@attrs.frozen
class Review:
    """A finished game of `games` reviewed by the server, turn by turn (docs/review.md)."""

    number: int


@attrs.frozen
class Rematch:
    """Play a finished game of `games` again with its players (the latest one unless told):
    its seat is taken back, and its rematch made or joined."""

    number: int | None = None


@attrs.frozen
class Bell:
    """Ring the terminal bell, or not, when one of your games reaches your turn."""

    on: bool


@attrs.frozen
class AddBots:
    """Seat bots: one, or (``count`` None) as many as there are free seats."""

    level: str = "normal"
    count: int | None = 1


@attrs.frozen
class StartGame:
    """Start the game (the room's creator, once every seat is taken)."""


@attrs.frozen
class LeaveRoom:
    """Leave the room for the lobby (after the start the seat stays yours)."""


@attrs.frozen
class Social:
    """Follow, unfollow, block or unblock an account (``what``), by its name."""

    what: str
    name: str


@attrs.frozen
class Friends:
    """Show the accounts you follow, where each is, and those you block."""


@attrs.frozen
class Presence:
    """Show or hide your presence from those who follow you."""

    visible: bool


@attrs.frozen
class Inbox:
    """Show your notifications (then read), or clear them."""

    clear: bool = False


@attrs.frozen
class TournamentList:
    """Show the server's tournaments (the newest first), numbered for `tournament N`."""


@attrs.frozen
class TournamentShow:
    """Show a tournament: its standings and the current round's tables. ``key``: a number of
    `tournaments`, or a tournament's id."""

    key: str


@attrs.frozen
class TournamentNew:
    """Create a Swiss tournament (an account only); every table gets a turn timer."""

    name: str
    rounds: int = 3
    seats: int = 2
    turn_seconds: int = TOURNAMENT_TURN_SECONDS
    rated: bool = False
    starts_in: int | None = None


@attrs.frozen
class TournamentAct:
    """``join``, ``leave`` or ``start`` a tournament (``key`` as for :class:`TournamentShow`)."""

    verb: str
    key: str


@attrs.frozen
class TournamentTable:
    """Take the seat the last ``tournament_table`` push gave (when it was not taken at once:
    the player was in another game)."""


TournamentCommand = TournamentList | TournamentShow | TournamentNew | TournamentAct \
    | TournamentTable
LobbyCommand = ListRooms | CreateRoom | JoinRoom | Resume | Games | Replay | Review | Bell \
    | Help | Quit | Top | Whois | Quick | CancelQuick | Abandon | Rematch | Social | Friends \
    | Presence | Inbox | Challenge | AnswerChallenge | TournamentCommand
RoomCommand = AddBots | StartGame | LeaveRoom | Chat | Help | Quit

LOBBY_HELP: Final = (
    ("list", "show the open rooms (also: rooms)"),
    ("list more", "show the next rooms, when the server has more than one page"),
    ("create", "create a room, answering a few questions"),
    ("create NAME [seats=2-4] [advanced] [timer=SECONDS] [private] [rated]",
     "create a room at once, e.g. `create Friday night seats=3 timer=90`; a rated room "
     "seats accounts only, and its end changes their ratings"),
    ("quick [2,3,4] [rated] [bots=SECONDS]",
     "play strangers now: wait for a game of those sizes (bots fill an unrated one after "
     "SECONDS); `cancel` leaves the queue"),
    ("challenge NAME [NAME2 ...] [seats=2-4] [timer=SECONDS] [rated] [advanced]",
     "invite players by name to a game (bots in the other seats); `challenge cancel` "
     "takes it back"),
    ("accept [ID]", "accept a challenge made to you (the latest unless told)"),
    ("decline [ID]", "decline a challenge made to you (the latest unless told)"),
    ("top [N|me]", "the server's best players, or those around you"),
    ("whois NAME", "a player's rating, games and last rated games"),
    ("friends", "the players you follow, where each is now, and those you block"),
    ("follow NAME", "follow a player (accounts only): see where they are in `friends`"),
    ("unfollow NAME", "stop following a player"),
    ("block NAME", "no chat, invites or challenges from that player, never matched with them"),
    ("unblock NAME", "stop blocking a player"),
    ("presence on|off", "show or hide where you are from those who follow you"),
    ("inbox [clear]", "your notifications: turns of slow games, followers, the host's word"),
    ("join ROOM", "take a seat: ROOM is a number from the list, a room id or a private code"),
    ("watch ROOM", "watch a game as a spectator"),
    ("resume [N]", "take back a seat you held (your seats are kept between runs); signed "
     "in, N is a number of `games`"),
    ("games", "your games on this server, in play and finished (your turn in which)"),
    ("replay N", "step through finished game N of `games`, fetched from the server"),
    ("review N", "finished game N of `games` reviewed turn by turn against the hard bot and "
     "the tower solver, with charts (computed by the server once)"),
    ("rematch [N]", "play finished game N of `games` again with its players (the latest "
     "finished one without N)"),
    ("abandon N", "give up game N of `games` (or held seat N): you resign it, asked first"),
    ("bell on|off", "ring the bell when one of your games reaches your turn (on)"),
    ("tournaments", "the server's Swiss tournaments, newest first"),
    ("tournament N", "tournament N of `tournaments` (or its id): standings and this round's "
     "tables"),
    ("tournament create NAME rounds=N seats=K [timer=5m] [rated] [starts=10m]",
     "create a Swiss tournament (an account only): N rounds at tables of K; each turn has "
     "a timer (5 minutes unless told); it starts by itself after `starts=` or at `start`"),
    ("tournament join|leave|start N", "enter or leave tournament N; its creator starts it"),
    ("tournament table", "take the seat of your tournament's table (the bell rings when a "
     "round is paired; from the lobby you are seated at once)"),
    ("help", "this list"),
    ("quit", "leave Castell"),
)
ROOM_HELP: Final = (
    ("bot [easy|normal|hard]", "give the next free seat to a bot (normal unless told)"),
    ("fill [easy|normal|hard]", "give every free seat to a bot"),
    ("start", "start the game (the room's creator, once every seat is taken)"),
    ("chat TEXT", "say something to the room"),
    ("leave", "back to the lobby"),
    ("help", "this list"),
    ("quit", "leave Castell"),
)


def lobby_help(local: bool = False) -> tuple[tuple[str, str], ...]:
    """The lobby's commands; ``castell play``'s (``local``) start with `new`."""
    if not local:
        return LOBBY_HELP
    return (("new", "a new game against bots, as `castell play` set it up"), *LOBBY_HELP)


def help_lines(table: tuple[tuple[str, str], ...]) -> list[str]:
    """A help table as aligned lines; a long syntax gets a line of its own."""
    width = max(len(syntax) for syntax, _ in table if len(syntax) <= 30)
    out: list[str] = []
    for syntax, what in table:
        if len(syntax) <= width:
            out.append(f"{syntax.ljust(width)}  {what}")
        else:
            out.extend([syntax, f"{'':{width}}  {what}"])
    return out


def _words(line: str) -> tuple[str, list[str]]:
    words = line.split()
    if not words:
        raise CommandError("type a command; `help` lists them")
    return words[0].lower(), words[1:]


def _common(name: str, args: list[str], line: str) -> Help | Quit | Chat | None:
    if name in ("help", "?"):
        return Help()
    if name in ("quit", "exit"):
        return Quit()
    if name in ("chat", "say"):
        text = line.strip()[len(line.split()[0]):].strip()
        if not text:
            raise CommandError("chat needs something to say, e.g. `chat hello!`")
        if len(text) > CHAT_MAX:
            raise CommandError(f"a chat line holds at most {CHAT_MAX} characters")
        return Chat(text)
    return None


def parse_seats(text: str) -> int:
    try:
        seats = int(text)
    except ValueError:
        seats = 0
    if not 2 <= seats <= 4:
        raise CommandError(f"`{text}`: a room has 2, 3 or 4 seats")
    return seats


#: A turn timer's units: seconds, minutes, hours, days.
TIMER_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_timer(text: str) -> int | None:
    """A turn timer in seconds (``90``, ``90s``, ``2m``, ``12h``, ``2d``: up to 7 days, for
    games played over days), or None for ``none``/``no``/``0``."""
    t = text.strip().lower()
    if t in ("", "none", "no", "off", "0", "-"):
        return None
    scale = TIMER_UNITS.get(t[-1:], 1)
    try:
        seconds = int(t.rstrip("smhd")) * scale
    except ValueError:
        seconds = -1
    lo, hi = TURN_SECONDS_MIN, TURN_SECONDS_MAX
    if not lo <= seconds <= hi:
        raise CommandError(f"`{text}`: a turn timer is {lo} seconds to {hi // 86400} days "
                           "(`90`, `5m`, `12h`, `2d`), or `none`")
    return seconds


def timer_text(seconds: int) -> str:
    """A turn timer for people: ``90 s``, ``5 min``, ``12 h``, ``2 d``."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


#: The status ``my_games`` gives a game the host closed: played no more, never taken up.
CLOSED = "closed"


def game_lines(games: tuple[GameEntry, ...]) -> list[str]:
    """An account's games (``my_games``), numbered for `resume N` and `replay N`."""
    out = []
    for i, g in enumerate(games, 1):
        if g.status == "finished":
            won = g.winners is not None and g.seat in g.winners
            scores = "–".join(str(s) for s in g.scores or ())
            how = "you resigned" if g.resigned else "you won" if won else "lost"
            where = f"finished · {how} · {scores}"
        elif g.resigned:
            where = f"round {g.round} · you resigned: played on without you"
        elif g.status == CLOSED:
            where = "closed by the host"
        elif g.status == "waiting" and g.seats is not None and len(g.players) >= g.seats:
            where = "every seat taken · waiting for the start"
        elif g.status == "waiting":
            where = "waiting for players"
        else:
            whose = "YOUR TURN" if g.your_turn else (
                f"{safe(g.players[g.turn])}'s turn" if g.turn is not None
                and g.turn < len(g.players) else "playing")
            where = f"round {g.round} · {whose}"
        timer = f" · {timer_text(g.turn_seconds)} turns" if g.turn_seconds else ""
        when = (" · " + time.strftime("%Y-%m-%d %H:%M", time.localtime(g.started_at))
                if g.started_at is not None else "")
        out.append(f"  {i:>2}. {safe(g.name)} — {', '.join(safe(p) for p in g.players)} · "
                   f"{where}{timer}{when} · id {g.room}")
    return out or ["  none yet"]


def count(n: int, noun: str) -> str:
    """``n`` of ``noun``, singular or plural: ``1 rated game``, ``3 rated games``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def leaderboard_lines(entries: tuple[LeaderEntry, ...]) -> list[str]:
    """The ``leaderboard`` reply, one line a player."""
    return [f"  {e.rank:>3}. {safe(e.name)} · {e.rating} · {count(e.games, 'game')} · "
            f"{e.wins} won" for e in entries] or [
        "  nobody is ranked yet: a rating is ranked once it is no longer provisional (5 rated "
        "games against 3 different opponents, or more where the host asks for more)"]


def profile_lines(p: ProfileReply) -> list[str]:
    """The ``profile`` reply as text."""
    rank = f" · #{p.rank}" if p.rank is not None else " · not ranked yet"
    rating = rating_text(p.rating, p.provisional)
    lines = [f"{safe(p.name)}: rating {rating}{rank} · {count(p.games, 'rated game')}, "
             f"{p.wins} won"]
    if p.provisional:
        lines.append("  (? provisional: too few rated games, or opponents, to be sure yet)")
    if p.by_seats:
        lines.append("  " + " · ".join(f"{s.seats} players: {s.wins} of {s.games} won"
                                       for s in p.by_seats))
    for g in p.last:
        place = "won" if g.place == 1 else f"place {g.place}"
        lines.append(f"  {g.seats} players · {place} · {change_text(g.before, g.after)}"
                     f" · id {g.room}")
    return lines


def rating_text(rating: int, provisional: bool | None = False) -> str:
    """A rating as shown: ``1516``, or ``1516?`` while it is provisional."""
    return f"{rating}?" if provisional else str(rating)


def change_text(before: int, after: int) -> str:
    """A rating's change: ``1512 → 1538 (+26)``."""
    return f"{before} → {after} ({after - before:+d})"


def parse_variant(text: str) -> str:
    t = text.strip().lower()
    found = [v for v in VARIANTS if v.startswith(t)] if t else []
    if len(found) != 1:
        raise CommandError(f"`{text}`: the variant is `normal` or `advanced`")
    return found[0]


def parse_yes(text: str, default: bool) -> bool:
    t = text.strip().lower()
    if not t:
        return default
    if t in ("y", "yes", "true", "1", "si", "sí"):
        return True
    if t in ("n", "no", "false", "0"):
        return False
    raise CommandError(f"`{text}`: answer yes or no")


def room_name(text: str) -> str:
    name = " ".join(text.split())
    if not name:
        raise CommandError("a room needs a name")
    if len(name) > ROOM_NAME_MAX:
        raise CommandError(f"a room name holds at most {ROOM_NAME_MAX} characters")
    return name


def _create(args: list[str]) -> CreateRoom:
    if not args:
        return CreateRoom()
    name_words: list[str] = []
    options: dict[str, object] = {}
    for word in args:
        key, eq, value = word.partition("=")
        key = key.lower()
        if eq and key in ("seats", "players"):
            options["seats"] = parse_seats(value)
        elif eq and key == "variant":
            options["variant"] = parse_variant(value)
        elif eq and key in ("timer", "turn", "turn_seconds"):
            options["turn_seconds"] = parse_timer(value)
        elif eq and key == "private":
            options["private"] = parse_yes(value, True)
        elif not eq and key == "rated":
            options["rated"] = True
        elif eq and key == "rated":
            options["rated"] = parse_yes(value, True)
        elif not eq and key in ("private", "advanced"):
            options["private" if key == "private" else "variant"] = (
                True if key == "private" else "advanced")
        elif eq:
            raise CommandError(f"`{word}`: create knows seats=, variant=, timer=, private and "
                               "rated")
        else:
            name_words.append(word)
    if not name_words:
        raise CommandError("give the room a name first, e.g. `create Friday night seats=3`")
    return CreateRoom(room_name(" ".join(name_words)), **options)  # type: ignore[arg-type]


def parse_lobby(line: str) -> LobbyCommand:
    """One lobby line as a command; raises :class:`CommandError` saying how to type it."""
    name, args = _words(line)
    common = _common(name, args, line)
    if isinstance(common, Chat):
        raise CommandError("you are in no room yet: nobody would hear you")
    if common is not None:
        return common
    if name in ("list", "rooms", "ls", "l"):
        if args and args != ["more"]:
            raise CommandError(f"{name} takes nothing, or `more` for the next rooms")
        return ListRooms(more=bool(args))
    if name in ("create", "new"):
        return _create(args)
    if name in ("join", "watch", "spectate", "j", "w"):
        if len(args) != 1:
            raise CommandError(f"{name} takes one room: a number from the list, an id or a code")
        return JoinRoom(args[0], spectate=name in ("watch", "spectate", "w"))
    if name == "resume":
        if len(args) > 1 or (args and not args[0].isdigit()):
            raise CommandError("resume takes nothing, or the number of a held seat")
        return Resume(int(args[0]) if args else None)
    if name in ("games", "mine"):
        return Games()
    if name == "replay":
        if len(args) != 1 or not args[0].isdigit():
            raise CommandError("replay takes the number of a finished game of `games`")
        return Replay(int(args[0]))
    if name == "review":
        if len(args) != 1 or not args[0].isdigit():
            raise CommandError("review takes the number of a finished game of `games`")
        return Review(int(args[0]))
    if name == "rematch":
        if len(args) > 1 or (args and not args[0].isdigit()):
            raise CommandError("rematch takes nothing (your latest finished game), or the "
                               "number of a finished game of `games`")
        return Rematch(int(args[0]) if args else None)
    if name in ("abandon", "resign"):
        if len(args) != 1 or not args[0].isdigit():
            raise CommandError("abandon takes the number of an unfinished game of `games` (or "
                               "of a seat the lobby lists)")
        return Abandon(int(args[0]))
    if name == "bell":
        return parse_bell(args)
    if name in ("top", "leaderboard"):
        return _top(args)
    if name == "whois":
        if len(args) != 1:
            raise CommandError("whois takes a player's name, e.g. `whois Anna`")
        return Whois(args[0])
    if name == "quick":
        return _quick(args)
    if name in ("follow", "unfollow", "block", "unblock"):
        if len(args) != 1:
            raise CommandError(f"{name} takes a player's name, e.g. `{name} Anna`")
        return Social(name, args[0])
    if name in ("friends", "following"):
        if args:
            raise CommandError(f"{name} takes nothing")
        return Friends()
    if name == "presence":
        if len(args) != 1 or args[0].lower() not in ("on", "off"):
            raise CommandError("`presence on` or `presence off`")
        return Presence(args[0].lower() == "on")
    if name in ("inbox", "notes"):
        if args and [a.lower() for a in args] != ["clear"]:
            raise CommandError(f"{name} takes nothing, or `clear`")
        return Inbox(clear=bool(args))
    if name == "cancel":
        return CancelQuick()
    if name == "challenge":
        return _challenge(args)
    if name in ("accept", "decline"):
        if len(args) > 1:
            raise CommandError(f"{name} takes nothing, or a challenge's id")
        return AnswerChallenge(name, args[0] if args else None)
    if name in ("tournament", "tournaments"):
        return parse_tournament(name, args)
    known = [syntax.split()[0] for syntax, _ in LOBBY_HELP]
    raise CommandError(f"unknown command `{name}`{did_you_mean(name, known)}; `help` lists "
                       f"the lobby's commands")


def _challenge(args: list[str]) -> Challenge | AnswerChallenge:
    if args[:1] == ["cancel"]:
        if len(args) > 2:
            raise CommandError("challenge cancel takes nothing, or a challenge's id")
        return AnswerChallenge("cancel", args[1] if len(args) == 2 else None)
    names: list[str] = []
    options: dict[str, object] = {}
    for word in args:
        key, eq, value = word.partition("=")
        key = key.lower()
        if eq and key in ("seats", "players"):
            options["seats"] = parse_seats(value)
        elif eq and key == "variant":
            options["variant"] = parse_variant(value)
        elif eq and key in ("timer", "turn", "turn_seconds"):
            options["turn_seconds"] = parse_timer(value)
        elif not eq and key == "rated":
            options["rated"] = True
        elif not eq and key == "advanced":
            options["variant"] = "advanced"
        elif eq:
            raise CommandError(f"`{word}`: challenge knows seats=, variant=, timer=, rated "
                               "and advanced")
        else:
            names.append(word)
    if not 1 <= len(names) <= 3:
        raise CommandError("challenge one to three players by name, e.g. `challenge Anna` or "
                           "`challenge Anna Biel seats=4`")
    return Challenge(tuple(names), **options)  # type: ignore[arg-type]


def _top(args: list[str]) -> Top:
    if not args:
        return Top()
    if len(args) == 1 and args[0].lower() == "me":
        return Top(around_me=True)
    if len(args) == 1 and args[0].isdigit() and 1 <= int(args[0]) <= 100:
        return Top(int(args[0]))
    raise CommandError("top takes nothing, a number of players (1 to 100), or `me`")


def _quick(args: list[str]) -> Quick:
    seats: tuple[int, ...] = (2, 3, 4)
    rated, bots_after = False, None
    for word in args:
        key, eq, value = word.lower().partition("=")
        if key == "rated" and not eq:
            rated = True
        elif key == "bots" and eq:
            try:
                bots_after = int(value.rstrip("s"))
            except ValueError:
                bots_after = -1
            if not 0 <= bots_after <= 600:
                raise CommandError(f"`{word}`: bots fill the game after 0 to 600 seconds")
        elif not eq and all(part.strip() for part in key.split(",")):
            seats = tuple(sorted({parse_seats(part) for part in key.split(",")}))
        else:
            raise CommandError(f"`{word}`: quick takes seat counts (`2,3`), `rated` and "
                               "`bots=SECONDS`")
    if rated and bots_after is not None:
        raise CommandError("bots never sit in a rated game: `quick rated` or `quick bots=30`")
    return Quick(seats, rated, bots_after)


def parse_bell(args: list[str]) -> Bell:
    if len(args) != 1 or args[0].lower() not in ("on", "off"):
        raise CommandError("`bell on` or `bell off`")
    return Bell(args[0].lower() == "on")


def _level(args: list[str], name: str) -> str:
    if not args:
        return "normal"
    found = [lv for lv in BOT_LEVELS if lv.startswith(args[0].lower())]
    if len(args) > 1 or len(found) != 1:
        raise CommandError(f"{name} takes a level: `easy` (a first game), `normal` or `hard` "
                           "(it looks past its own turn)")
    return found[0]


def parse_room(line: str) -> RoomCommand:
    """One line typed in a room that waits for its game."""
    name, args = _words(line)
    common = _common(name, args, line)
    if common is not None:
        return common
    if name in ("bot", "addbot", "add_bot"):
        return AddBots(_level(args, name), 1)
    if name == "fill":
        return AddBots(_level(args, name), None)
    if name == "start":
        return StartGame()
    if name in ("leave", "lobby"):
        return LeaveRoom()
    if name in ("join", "watch", "spectate", "create", "new", "list", "rooms", "resume"):
        raise CommandError(f"`{name}` is for the lobby and you are in a room: `leave` it first")
    known = [syntax.split()[0] for syntax, _ in ROOM_HELP]
    raise CommandError(f"unknown command `{name}`{did_you_mean(name, known)}; `help` lists "
                       f"what you can do here")


def _ago(seconds: float) -> str:
    """How long ago, as a person says it: ``just now``, ``5 min ago``, ``3 h ago``,
    ``2 d ago``."""
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} d ago"


def _where(friend: Friend, now: float) -> str:
    if friend.presence == "lobby":
        return "online, in the lobby"
    if friend.presence in ("playing", "watching"):
        room = f" {safe(friend.room_name)!r} (id {friend.room})" if friend.room_name \
            and friend.room else " a private room"
        return f"{friend.presence} in{room}"
    if friend.presence == "hidden":
        return "hides where they are"
    if friend.last_seen is not None:
        return f"offline, last seen {_ago(max(0.0, now - friend.last_seen))}"
    return "offline"


def friends_lines(reply: FriendsReply, now: float | None = None) -> list[str]:
    """The ``friends`` reply in lines: each account followed (``★`` a friend: it follows
    you too) and where it is; then those blocked; then whether you are shown."""
    now = time.time() if now is None else now
    if not reply.friends:
        out = ["You follow nobody yet: `follow NAME` adds a player."]
    else:
        width = max(len(safe(f.name)) for f in reply.friends)
        out = [f"You follow {len(reply.friends)} player(s) (★ follows you too):"]
        out += [f"  {'★' if f.mutual else ' '} {safe(f.name).ljust(width)}  {_where(f, now)}"
                for f in reply.friends]
    if reply.blocked:
        out.append("Blocked: " + ", ".join(safe(n) for n in reply.blocked))
    out.append("Your presence is shown (`presence off` hides it)." if reply.visible
               else "Your presence is hidden (`presence on` shows it).")
    return out


def note_line(note: Note, now: float | None = None) -> str:
    """One notification as a line: new ones marked, with how long ago it came."""
    now = time.time() if now is None else now
    return f"{'•' if note.new else ' '} {safe(note.text)} ({_ago(max(0.0, now - note.at))})"


def inbox_lines(notes: tuple[Note, ...], now: float | None = None) -> list[str]:
    """The ``inbox`` reply in lines, newest first (``•`` new)."""
    if not notes:
        return ["Your inbox is empty."]
    new = sum(n.new for n in notes)
    return [f"Inbox: {len(notes)} notification(s), {new} new (`inbox clear` empties it):",
            *(note_line(n, now) for n in notes)]


def new_notes_line(count: int, notes: tuple[Note, ...]) -> str:
    """What signing in with new notifications says: ``2 new: A; B — `inbox` lists them``."""
    said = "; ".join(safe(n.text) for n in notes)
    more = "…" if count > len(notes) else ""
    return f"{count} new: {said}{more} — `inbox` lists them"
#: The longest wait before a tournament starts by itself (a week).
STARTS_MAX: Final = 7 * 86400


def parse_tournament(name: str, args: list[str]) -> TournamentCommand:
    """``tournaments``, ``tournament N``, ``tournament create NAME rounds=N seats=K
    [timer=T] [rated] [starts=T]``, ``tournament join|leave|start N``, ``tournament table``."""
    if name == "tournaments" or not args:
        if args:
            raise CommandError("tournaments takes nothing; `tournament N` shows one")
        return TournamentList()
    verb, rest = args[0].lower(), args[1:]
    if verb == "create":
        return _tournament_create(rest)
    if verb in ("join", "leave", "start"):
        if len(rest) != 1:
            raise CommandError(f"tournament {verb} takes one tournament: a number of "
                               "`tournaments` or its id")
        return TournamentAct(verb, rest[0])
    if verb == "table" and not rest:
        return TournamentTable()
    if len(args) == 1:
        return TournamentShow(args[0])
    raise CommandError("tournament takes a number of `tournaments` (or an id), or `create`, "
                       "`join N`, `leave N`, `start N`, `table`")


def _tournament_create(args: list[str]) -> TournamentNew:
    name_words: list[str] = []
    options: dict[str, object] = {}
    for word in args:
        key, eq, value = word.partition("=")
        key = key.lower()
        if eq and key == "rounds":
            if not value.isdigit() or not 1 <= int(value) <= 20:
                raise CommandError(f"`{word}`: a tournament has 1 to 20 rounds")
            options["rounds"] = int(value)
        elif eq and key in ("seats", "players"):
            options["seats"] = parse_seats(value)
        elif eq and key in ("timer", "turn", "turn_seconds"):
            seconds = parse_timer(value)
            if seconds is None:
                raise CommandError("a tournament's tables need a turn timer, or an absent "
                                   "player would hold up the round: `timer=5m`, say")
            options["turn_seconds"] = seconds
        elif eq and key in ("starts", "start", "starts_in"):
            options["starts_in"] = _starts(word, value)
        elif key == "rated":
            options["rated"] = parse_yes(value, True) if eq else True
        elif eq:
            raise CommandError(f"`{word}`: tournament create knows rounds=, seats=, timer=, "
                               "rated and starts=")
        else:
            name_words.append(word)
    if not name_words:
        raise CommandError("give the tournament a name first, e.g. `tournament create Spring "
                           "cup rounds=3 seats=2`")
    return TournamentNew(room_name(" ".join(name_words)), **options)  # type: ignore[arg-type]


def _starts(word: str, value: str) -> int:
    """When a tournament starts by itself, from now: ``30`` (seconds), ``10m``, ``2h``,
    ``1d``."""
    t = value.strip().lower()
    try:
        seconds = int(t.rstrip("smhd")) * TIMER_UNITS.get(t[-1:], 1)
    except ValueError:
        seconds = -1
    if not 0 <= seconds <= STARTS_MAX:
        raise CommandError(f"`{word}`: a tournament starts 0 seconds to 7 days from now "
                           "(`30`, `10m`, `2h`, `1d`)")
    return seconds
