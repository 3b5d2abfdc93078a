"""The command line: what a player types, turned into an action or a client command.

:func:`parse` reads one line — ``move gir``, ``recruit 7 5``, ``build 7 7 7 / 5 5 / 2``,
``build [7,7,7] [5,5] [2]``, ``chat hello`` — and returns either a :mod:`shared.actions`
action (to send to the server) or one of the client commands below (handled by the client
itself). :func:`action_to_command` is its inverse, used for hints and completion. The help
texts live next to the syntax they describe, so that the two cannot drift apart.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Final

import attrs

from client.screens import rulebook
from shared.actions import (
    EFFECT_FIELD,
    Action,
    Build,
    Dismantle,
    EndTurn,
    Move,
    Recruit,
    Special,
    Train,
    Undo,
)
from shared.board import REGION_NAMES, REGIONS, SIZES, TILES
from shared.errors import CastellError
from shared.wire import CHAT_MAX


class CommandError(CastellError):
    """Raised when a typed command cannot be understood; the message says how to type it."""

    code = "bad_command"


# Client commands: handled by the client, never sent as actions -------------------------


@attrs.frozen
class Chat:
    """Say something to everyone in the room."""

    text: str


@attrs.frozen
class Hint:
    """Show the legal actions of this turn; ``deep``: what the ``hard`` bot would play."""

    deep: bool = False


@attrs.frozen
class Help:
    """List the commands, or show one command's syntax."""

    command: str | None = None


@attrs.frozen
class Rules:
    """Show a short page of the rules."""

    topic: str | None = None


@attrs.frozen
class Leave:
    """Go back to the lobby (a started game's seat stays the player's)."""


@attrs.frozen
class Quit:
    """Leave the client."""


@attrs.frozen
class EndNow:
    """``end!``: end the turn without the question `end` may ask."""


@attrs.frozen
class Warn:
    """Turn on or off the question `end` asks when actions are still available."""

    on: bool


@attrs.frozen
class Resign:
    """Concede the game (docs/rules.md §10, "Resigning"), after a confirmation."""


@attrs.frozen
class Score:
    """Show each player's score by the categories of §9, as it stands now."""


@attrs.frozen
class Rematch:
    """Once the game is over: play it again with the same players."""


@attrs.frozen
class Review:
    """Once the game is over: the server's review of it, turn by turn (docs/review.md)."""


@attrs.frozen
class Lookup:
    """A look at the server from a game: ``top``, ``whois NAME`` or ``tournament…``, the lobby's
    commands, whose ``line`` the lobby's parser reads."""

    line: str


ClientCommand = Chat | Hint | Help | Rules | Leave | Quit | EndNow | Warn | Resign | Score \
    | Rematch | Review | Lookup
Command = Action | ClientCommand


# Help texts ----------------------------------------------------------------------------


@attrs.frozen
class CommandHelp:
    """How to type one command: syntax, a one-line summary, examples, and more words."""

    name: str
    syntax: str
    summary: str
    examples: tuple[str, ...] = ()
    details: str = ""


COMMANDS: Final[dict[str, CommandHelp]] = {
    c.name: c
    for c in (
        CommandHelp(
            "move", "move REGION",
            "move your pawn next door (first move: anywhere)",
            ("move gir", "move Tarragona", "move terres"),
            "REGION is an id (alt gir cen lle bcn tar ebr) or the start of a region's name.",
        ),
        CommandHelp(
            "recruit", "recruit SIZE [SIZE]",
            "take one or two castellers from your pawn's region",
            ("recruit 7 5", "recruit 9"),
        ),
        CommandHelp(
            "train", "train region|all [EFFECT]",
            "use the wheel's tile for your region, or `all`",
            ("train region", "train all", "train region recruit 6", "train all move tar",
             "train region perform lp12"),
            "When the tile is `special`, add the effect as for `special`: move REGION, "
            "recruit SIZE or perform TILE. It costs no token.",
        ),
        CommandHelp(
            "special", "special EFFECT",
            "spend a token to move, recruit or perform",
            ("special move tar", "special recruit 6", "special perform lp12"),
            "EFFECT is `move REGION`, `recruit SIZE` or `perform TILE`. The token is left on "
            "the performance row of the region your pawn stands in.",
        ),
        CommandHelp(
            "build", "build SIZES / SIZES / ...",
            "build your tower: levels split by /, bottom first",
            ("build 7 7 7 / 5 5 / 2", "build [7,7,7] [5,5] [2]"),
            "Each level lists the sizes of its castellers, from your team. Building again "
            "replaces the tower; `dismantle` takes it down.",
        ),
        CommandHelp("dismantle", "dismantle", "take your tower down (free)"),
        CommandHelp("end", "end", "end your turn", ("end", "end!"),
                    "When you could still move (unless a festival of this round is where you "
                    "stand), recruit or train, or hold more tokens than your turns left can "
                    "spend, `end` asks once whether to end anyway; `end!` never asks, and "
                    "`warn off` stops the question."),
        CommandHelp("undo", "undo", "take back your last action of this turn", ("undo",),
                    "Undo again to take back the action before, back to the turn's start; "
                    "an ended turn cannot be taken back. Ctrl-Z undoes too."),
        CommandHelp("chat", "chat TEXT", "say something to the room", ("chat good luck!",)),
        CommandHelp("hint", "hint [deep]", "list what you can do now", ("hint", "hint deep"),
                    "`hint deep` thinks for a moment, as the hard bot does, and shows the "
                    "turn it would play from here, and why: the festival and tower it aims "
                    "at, and the points it expects."),
        CommandHelp("log", "log", "the game's log from its start (F2 too; Esc closes)", (),
                    "Every event since the game started, festival results and chat included; "
                    "PgUp/PgDn page through it, Ctrl-Home goes to the start."),
        CommandHelp("help", "help [COMMAND]", "list the commands, or explain one",
                    ("help build",)),
        CommandHelp("rules", "rules [TOPIC]",
                    "read a short rules page (towers, festivals, ...)",
                    ("rules towers",)),
        CommandHelp("score", "score",
                    "each player's score now, category by category",
                    ("score",),
                    "Tower, diversity, prizes, size tokens and performances, as §9 counts them "
                    "with what everyone holds now; `rules scoring` explains each."),
        CommandHelp("resign", "resign",
                    "concede the game (asks first)", ("resign",),
                    "You rank last and win nothing. A two-player game ends at once, the other "
                    "player winning; a bigger one goes on, your seat played by a bot (or, in a "
                    "rated game, each of its turns ending at once)."),
        CommandHelp("rematch", "rematch",
                    "after the game: play again, same players", ("rematch",),
                    "A new room with the same settings: the others are invited to their "
                    "seats, bots sit again in theirs. Invited to one, `rematch` takes your "
                    "seat in it."),
        CommandHelp("review", "review",
                    "after the game: go over it turn by turn", ("review",),
                    "The server reviews every turn against the hard bot and the tower "
                    "solver (a progress bar while it computes it, once): what each turn "
                    "earned, its mark, the better line, each player's accuracy and the "
                    "charts. Keys: n/p turns, x the costliest, b the board, c the charts, "
                    "q back to the game."),
        CommandHelp("top", "top [N|me]", "the server's best players (or around you)",
                    ("top", "top me")),
        CommandHelp("whois", "whois NAME", "a player's rating and last rated games",
                    ("whois Anna",)),
        CommandHelp("tournament", "tournament [N|table]",
                    "tournaments: one's standings, or your table",
                    ("tournaments", "tournament 1", "tournament table"),
                    "`tournaments` lists the server's Swiss tournaments, `tournament N` "
                    "shows one (its standings and this round's tables), `tournament table` "
                    "takes the seat of a round paired while you were in this game. "
                    "Creating, joining and leaving are the lobby's (`help` there)."),
        CommandHelp("leave", "leave",
                     "back to the lobby (a started game keeps your seat)"),
        CommandHelp("quit", "quit", "close Castell (your seat stays yours)"),
        CommandHelp("warn", "warn on|off",
                    "whether `end` asks while you could still act",
                    ("warn off", "warn on")),
    )
}

#: Other spellings accepted for a command.
ALIASES: Final = {"end_turn": "end", "exit": "quit", "?": "help", "say": "chat",
                  "lobby": "leave", "concede": "resign", "scores": "score",
                  "leaderboard": "top", "tournaments": "tournament"}
ACTION_COMMANDS: Final = ("move", "recruit", "train", "special", "build", "dismantle", "end",
                          "undo")
#: Lobby commands, which a game can only point back to.
LOBBY_WORDS: Final = ("join", "watch", "create", "list", "resume", "games", "replay", "quick",
                      "abandon")
#: The client's commands Tab offers in a game, in the order of :data:`COMMANDS` (`resign`
#: and `rematch` are typed whole: Tab never leads to them).
CLIENT_COMMANDS: Final = ("chat", "hint", "help", "rules", "score", "top", "whois",
                          "tournament", "leave", "quit", "warn")


def help_text(command: str | None = None) -> str:
    """The help page: one line per command, or one command's syntax and examples."""
    if command is None:
        width = max(len(c.syntax) for c in COMMANDS.values())
        lines = [f"{c.syntax.ljust(width)}  {c.summary}" for c in COMMANDS.values()]
        lines.append("`help COMMAND` shows one command in detail; Tab completes.")
        return "\n".join(lines)
    name = command_name(command)
    c = COMMANDS[name]
    lines = [c.syntax, c.summary]
    if c.details:
        lines.append(c.details)
    lines.extend(f"  e.g. {ex}" for ex in c.examples)
    return "\n".join(lines)


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean `move`?)`` for a close misspelling of a known word, else ``""``."""
    close = difflib.get_close_matches(word.lower(), list(known), n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def command_name(word: str) -> str:
    """The command a typed word names (case-insensitive, aliases allowed)."""
    w = word.lower()
    w = ALIASES.get(w, w)
    if w in LOBBY_WORDS:
        raise CommandError(f"`{word}` is for the lobby: `leave` this game first")
    if w not in COMMANDS:
        raise CommandError(f"unknown command `{word}`{did_you_mean(w, COMMANDS)}; `help` "
                           f"lists the commands")
    return w


# Arguments -----------------------------------------------------------------------------


def region_matches(text: str) -> list[str]:
    """Region ids that ``text`` could name: the exact id or name, else every region whose id
    or name starts with it (case-insensitive), in board order."""
    t = " ".join(text.split()).casefold()
    if not t:
        return list(REGIONS)
    for rid, name in REGION_NAMES.items():
        if t in (rid, name.casefold()):
            return [rid]
    return [
        r for r, name in REGION_NAMES.items() if r.startswith(t) or name.casefold().startswith(t)
    ]


def resolve_region(text: str) -> str:
    """The region id ``text`` names: an id, or an unambiguous prefix of an id or a name."""
    found = region_matches(text) if text.strip() else []
    if len(found) == 1:
        return found[0]
    if not found:
        raise CommandError(f"no region called `{text}`; regions: {' '.join(REGIONS)}")
    raise CommandError(f"`{text}` could be {' or '.join(found)}; type more of the name")


_TILE: Final = re.compile(r"(?:lp)?0*(\d{1,2})", re.IGNORECASE)


def resolve_tile(text: str) -> str:
    """The tile id ``text`` names: ``lp12``, ``LP12``, ``lp5`` or just ``12``."""
    m = _TILE.fullmatch(text.strip())
    tile = f"lp{int(m.group(1)):02d}" if m else ""
    if tile not in TILES:
        raise CommandError(f"no performance tile `{text}`; tiles are lp01 to lp{len(TILES):02d}")
    return tile


def resolve_topic(word: str) -> str:
    """The rules topic ``word`` names: a topic or an unambiguous start of one."""
    found = rulebook.match_topics(word)
    number = rulebook.section(word)
    if not found and number is not None:
        raise CommandError(f"§{number} ({rulebook.SECTIONS[number][0]}) has no short page: "
                           f"the full rule book, docs/rules.md, tells it; topics: "
                           f"{', '.join(rulebook.topics())}")
    if len(found) != 1:
        raise CommandError(f"no rules topic `{word}`; topics: {', '.join(rulebook.topics())}")
    return found[0]


def parse_size(text: str) -> int:
    """A casteller size, 1–10."""
    try:
        size = int(text)
    except ValueError:
        size = 0
    if size not in SIZES:
        raise CommandError(f"`{text}` is not a casteller size; sizes are 1 to 10")
    return size


# Parsing ---------------------------------------------------------------------------------


def _effect(words: list[str], usage: str) -> dict[str, object]:
    """``move REGION`` / ``recruit SIZE`` / ``perform TILE`` as the action's effect fields."""
    if not words:
        raise CommandError(usage)
    effect, rest = words[0].lower(), words[1:]
    if effect not in EFFECT_FIELD or not rest:
        raise CommandError(usage)
    if effect == "move":
        return {"effect": effect, "region": resolve_region(" ".join(rest))}
    if len(rest) != 1:
        raise CommandError(usage)
    if effect == "recruit":
        return {"effect": effect, "size": parse_size(rest[0])}
    return {"effect": effect, "tile": resolve_tile(rest[0])}


_BRACKETED: Final = re.compile(r"\[([^\[\]]*)\]")


def _parse_levels(text: str) -> tuple[tuple[int, ...], ...]:
    """Levels written ``7 7 7 / 5 5 / 2`` or as the rules print them, ``[7,7,7] [5,5] [2]``."""
    usage = ("build takes levels of sizes separated by /, bottom first, e.g. "
             "`build 7 7 7 / 5 5 / 2` or `build [7,7,7] [5,5] [2]`")
    if not text.strip():
        raise CommandError(usage)
    if "[" in text or "]" in text:
        if _BRACKETED.sub(" ", text).replace(",", " ").replace("/", " ").strip():
            raise CommandError("write every level in brackets, e.g. "
                               "`build [7,7,7] [5,5] [2]`, or without any: `build 7 7 7 / 5 5 / 2`")
        parts = _BRACKETED.findall(text)
    else:
        parts = text.split("/")
    levels = []
    for part in parts:
        sizes = part.replace(",", " ").split()
        if not sizes:
            raise CommandError("a level of the tower is empty; " + usage)
        levels.append(tuple(parse_size(s) for s in sizes))
    return tuple(levels)


_NO_ARGUMENTS: Final[dict[str, type]] = {
    "hint": Hint, "quit": Quit, "leave": Leave, "end": EndTurn, "dismantle": Dismantle,
    "undo": Undo, "resign": Resign, "score": Score, "rematch": Rematch, "review": Review,
}


def parse(line: str) -> Command:
    """Turn one typed line into an action or a client command.

    Raises :class:`CommandError` with a message that shows the right syntax.
    """
    words = line.split()
    if not words:
        raise CommandError("type a command; `help` lists them")
    if words[0] == "end!":
        if len(words) > 1:
            raise CommandError("end! takes no arguments")
        return EndNow()
    name, args = command_name(words[0]), words[1:]

    if name == "chat":
        text = line.strip()[len(words[0]):].strip()
        if not text:
            raise CommandError("chat needs something to say, e.g. `chat good luck!`")
        if len(text) > CHAT_MAX:
            raise CommandError(f"a chat line holds at most {CHAT_MAX} characters")
        return Chat(text)
    if name == "help":
        if len(args) > 1:
            raise CommandError("help takes at most one command, e.g. `help build`")
        return Help(command_name(args[0]) if args else None)
    if name == "rules":
        if len(args) > 1:
            raise CommandError("rules takes at most one topic, e.g. `rules towers`")
        return Rules(resolve_topic(args[0]) if args else None)
    if name == "end" and [a.lower() for a in args] == ["turn"]:
        args = []  # `end turn` says what `end` does: the same command
    if name == "hint" and args:
        if [a.lower() for a in args] != ["deep"]:
            raise CommandError("hint takes nothing, or `deep` (the turn the hard bot would "
                               "play)")
        return Hint(deep=True)
    if name in ("top", "whois", "tournament", "tournaments"):
        return Lookup(line.strip())
    if name == "warn":
        if len(args) != 1 or args[0].lower() not in ("on", "off"):
            raise CommandError("warn takes `on` or `off`: whether `end` asks first when you "
                               "could still move, recruit or train, or spend a token")
        return Warn(args[0].lower() == "on")
    if name in _NO_ARGUMENTS:
        if args:
            raise CommandError(f"{name} takes no arguments")
        return _NO_ARGUMENTS[name]()
    if name == "move":
        if not args:
            raise CommandError("move takes a region, e.g. `move gir`")
        return Move(resolve_region(" ".join(args)))
    if name == "recruit":
        sizes = " ".join(args).replace(",", " ").split()
        if not 1 <= len(sizes) <= 2:
            raise CommandError("recruit takes one or two sizes, e.g. `recruit 7 5`")
        return Recruit(tuple(parse_size(s) for s in sizes))
    if name == "train":
        usage = ("train takes `region` or `all`, and for a special tile an effect: "
                 "e.g. `train region`, `train all move tar`, `train region recruit 6`")
        if not args or args[0].lower() not in ("region", "all"):
            raise CommandError(usage)
        choice = args[0].lower()
        if len(args) == 1:
            return Train(choice)
        return Train(choice, **_effect(args[1:], usage))  # type: ignore[arg-type]
    if name == "special":
        usage = ("special takes an effect: `special move tar`, `special recruit 6` "
                 "or `special perform lp12`")
        return Special(**_effect(args, usage))  # type: ignore[arg-type]
    # build: levels may be written with or without spaces around the slashes
    return Build(_parse_levels(line.strip()[len(words[0]):]))


# The inverse -----------------------------------------------------------------------------


def _effect_words(effect: str | None, region: str | None, size: int | None,
                  tile: str | None) -> list[str]:
    if effect is None:
        return []
    value = {"move": region, "recruit": size, "perform": tile}[effect]
    return [effect, str(value)]


def action_to_command(action: Action) -> str:
    """The command line that :func:`parse` turns back into ``action``."""
    match action:
        case Move(region=region):
            return f"move {region}"
        case Recruit(sizes=sizes):
            return "recruit " + " ".join(map(str, sizes))
        case Train():
            words = ["train", action.choice,
                     *_effect_words(action.effect, action.region, action.size, action.tile)]
            return " ".join(words)
        case Special():
            words = ["special",
                     *_effect_words(action.effect, action.region, action.size, action.tile)]
            return " ".join(words)
        case Build(levels=levels):
            return "build " + " / ".join(" ".join(map(str, level)) for level in levels)
        case Dismantle():
            return "dismantle"
        case EndTurn():
            return "end"
        case Undo():
            return "undo"
    raise TypeError(f"not an action: {action!r}")
