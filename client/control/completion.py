"""Tab completion for the command line, offering only what the rules allow right now.

:class:`CommandCompleter` is a prompt_toolkit ``Completer`` fed by a callable that returns the
current legal actions (on the client, ``shared.engine.legal_actions`` of the state rebuilt from
the last view). The completions for an action command are the next words of the legal
actions written as commands (:func:`client.control.commands.action_to_command`), so the completer
never re-implements a rule. ``build`` is free-form (the engine does not list towers): its
sizes come from the player's team and are checked with :func:`shared.tower.check_tower`
against the player's skills, through two optional callables.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import combinations

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from client.control.commands import (
    ACTION_COMMANDS,
    ALIASES,
    CLIENT_COMMANDS,
    COMMANDS,
    CommandError,
    action_to_command,
    region_matches,
    resolve_tile,
)
from client.screens import rulebook
from shared.actions import Action, Recruit, Special, Train
from shared.board import REGION_NAMES, TILES
from shared.state import Skills
from shared.tower import check_tower

_FULL_NAMES = {*REGION_NAMES, *(name.casefold() for name in REGION_NAMES.values())}


def _command_of(action: Action) -> str:
    return action_to_command(action).split()[0]


def _meta(word: str) -> str:
    if word in REGION_NAMES:
        return REGION_NAMES[word]
    if word in TILES:
        tile = TILES[word]
        return f"{tile.describe()} ({tile.points} pts)"
    return ""


def _same(typed: str, word: str) -> bool:
    """Whether a finished typed word stands for the canonical ``word`` of a command."""
    if typed.lower() == word:
        return True
    if word in REGION_NAMES:
        return region_matches(typed) == [word]
    if word in TILES:
        try:
            return resolve_tile(typed) == word
        except CommandError:
            return False
    return False


def _starts(prefix: str, word: str) -> bool:
    """Whether the word being typed, ``prefix``, can still become ``word``."""
    p = prefix.lower()
    if word.startswith(p):
        return True
    if word in REGION_NAMES:
        return word in region_matches(prefix)
    return False


class CommandCompleter(Completer):
    """Completes command names, then the legal arguments of the command being typed.

    ``legal_actions`` returns the actions the player may take now (empty when it is not
    their turn); ``team`` and ``skills`` return the player's team and skills, for ``build``
    (a size is offered only where the tower still stands, :func:`shared.tower.check_tower`).
    Client commands (chat, hint, help, rules, quit) are always offered; an action command
    only when it is legal — ``build`` whenever any action is.
    """

    def __init__(self, legal_actions: Callable[[], Iterable[Action]],
                 team: Callable[[], Sequence[int]] | None = None,
                 skills: Callable[[], Skills] | None = None) -> None:
        self.legal_actions = legal_actions
        self.team = team
        self.skills = skills

    def get_completions(self, document: Document, complete_event: CompleteEvent
                        ) -> Iterator[Completion]:
        text = document.text_before_cursor
        words = text.split()
        if not text or text[-1].isspace():
            current, done = "", words
        else:
            current, done = words[-1], words[:-1]
        region = self._region_phrase(text)
        if region is not None:  # "move Terres de l'E": the region's id replaces the words
            start, found = region
            for word, meta in found:
                yield Completion(word, start_position=start - len(text), display_meta=meta)
            return
        for word, meta in self.suggestions(done, current):
            yield Completion(word, start_position=-len(current), display_meta=meta)

    def _region_phrase(self, text: str) -> tuple[int, list[tuple[str, str]]] | None:
        """A region name of several words being typed at the end of ``text`` (``Alt P``,
        ``Terres de l'``): where it starts, and the region ids it can still become where the
        command expects a region. None when the line does not end in such a name."""
        spans = [m.span() for m in re.finditer(r"\S+", text)]
        trailing = text[-1:].isspace()
        for k in range(len(spans) - 1, 0, -1):  # the longest phrase first
            first = len(spans) - k
            if k == 1 and not trailing:
                continue  # a single word being typed is the ordinary case
            start = spans[first][0]
            phrase = text[start:]
            if " ".join(phrase.split()).casefold() in _FULL_NAMES:
                return None  # already a whole region: nothing to complete
            before = [text[a:b] for a, b in spans[:first]]
            found = [(w, m) for w, m in self.suggestions(before, phrase)
                     if w in REGION_NAMES]
            if found:
                return start, found
        return None

    def suggestions(self, done: Sequence[str], current: str) -> list[tuple[str, str]]:
        """The words that may follow the finished words ``done``, starting like ``current``,
        each with a short description."""
        legal = list(self.legal_actions())
        if not done:
            return [(name, COMMANDS[name].summary) for name in self._commands(legal)
                    if name.startswith(current.lower())]
        name = ALIASES.get(done[0].lower(), done[0].lower())
        args = list(done[1:])
        if name == "help" and not args:
            words = list(COMMANDS)
        elif name == "rules" and not args:
            words = rulebook.topics()
        elif name == "warn" and not args:
            words = ["on", "off"]
        elif name == "build":
            return [(w, m) for w, m in self._build(args) if w.startswith(current)]
        elif name == "recruit":
            words = self._recruit(legal, args)
        elif name in ACTION_COMMANDS:
            words = self._next_words(legal, name, args)
        else:
            words = []
        return [(w, _meta(w)) for w in words if _starts(current, w)]

    def _commands(self, legal: list[Action]) -> list[str]:
        kinds = {_command_of(a) for a in legal}
        if legal:
            kinds.add("build")
        return [c for c in COMMANDS if c in kinds or c in CLIENT_COMMANDS]

    @staticmethod
    def _next_words(legal: list[Action], name: str, args: list[str]) -> list[str]:
        out: dict[str, None] = {}
        for action in legal:
            words = action_to_command(action).split()
            if words[0] != name or len(words) <= len(args) + 1:
                continue
            if all(_same(t, w) for t, w in zip(args, words[1:], strict=False)):
                out[words[len(args) + 1]] = None
        return list(out)

    @staticmethod
    def _recruit(legal: list[Action], args: list[str]) -> list[str]:
        # The engine lists each choice once, larger size first; any order may be typed.
        if len(args) >= 2 or not all(a.isdigit() for a in args):
            return []
        typed = [int(a) for a in args]
        choices = [a.sizes for a in legal if isinstance(a, Recruit)]
        out: dict[str, None] = {}
        for sizes in choices:
            rest = Counter(sizes)
            rest.subtract(typed)
            if min(rest.values(), default=0) >= 0 and sum(rest.values()) >= 1:
                for s in sorted(rest.elements(), reverse=True):
                    out[str(s)] = None
        return list(out)

    def _build(self, args: list[str]) -> list[tuple[str, str]]:
        """The sizes that can stand next in the level being typed (§7, from the player's team
        and skills), and ``/`` once that level stands; sizes only, without ``skills``."""
        if self.team is None:
            return []
        levels: list[list[int]] = []
        for part in " ".join(args).replace(",", " ").split("/"):
            sizes = part.split()
            if not all(a.isdigit() for a in sizes):
                return []  # bracketed levels, or a mistake: nothing sensible to offer
            levels.append([int(a) for a in sizes])
        *below, level = levels
        if any(not done for done in below):
            return []
        left = Counter(self.team())
        left.subtract(s for lv in levels for s in lv)
        ranks = self.skills() if self.skills is not None else None

        def stands(tower: list[list[int]]) -> bool:
            return ranks is None or check_tower(tower, ranks).legal

        out = [(str(s), f"{n} left") for s, n in sorted(left.items(), reverse=True)
               if n > 0 and stands([*below, [*level, s]])]
        if level and stands(levels):
            out.append(("/", "start the next level"))
        return out


def complete(text: str, legal: Iterable[Action], team: Sequence[int] | None = None,
             skills: Skills | None = None) -> list[str]:
    """The completions of ``text`` (the line before the cursor), as whole words."""
    actions = list(legal)
    completer = CommandCompleter(lambda: actions, (lambda: team) if team is not None else None,
                                 (lambda: skills) if skills is not None else None)
    return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]


def _recruit_line(choices: list[tuple[int, ...]]) -> str:
    """``recruit 8 | 7 | 3, or two of them`` when the choices are exactly every one or two of
    those castellers (as in a region); otherwise every choice, listed."""
    pool: Counter[int] = Counter()
    for sizes in choices:
        pool |= Counter(sizes)
    singles = sorted(pool, reverse=True)
    pairs = {tuple(sorted((a, b), reverse=True)) for a, b in
             combinations(sorted(pool.elements(), reverse=True), 2)}
    everything = {(s,) for s in singles} | pairs
    offered = {tuple(sorted(c, reverse=True)) for c in choices}
    if pairs and offered == everything:
        return f"recruit {' | '.join(map(str, singles))}, or two of them " \
               f"(e.g. `recruit {' '.join(map(str, max(pairs)))}`)"
    return "recruit " + " | ".join(" ".join(map(str, c)) for c in choices)


def hint_lines(legal: Iterable[Action], tiles: Mapping[str, str] | None = None,
               example: str | None = None) -> list[str]:
    """The legal actions as the commands that take them, one line per command (and per
    training choice), their arguments grouped by effect: ``move alt | cen``,
    ``train all (special): move lle | bcn · recruit 5``. ``tiles`` names the tile each
    training choice (``region``, ``all``) would use; ``example``: a tower the player's own
    team can build (``9 9 / 8``), for the line of ``build`` (without one, it shows only how
    a tower is written)."""
    heads: dict[str, dict[str, list[str]]] = {}
    recruits: list[tuple[int, ...]] = []
    for action in legal:
        if isinstance(action, Recruit):
            recruits.append(action.sizes)
            heads.setdefault("recruit", {})
            continue
        words = action_to_command(action).split()
        split = 2 if isinstance(action, Train) else 1
        head, rest = " ".join(words[:split]), words[split:]
        effect = rest[0] if rest and isinstance(action, Train | Special) else ""
        values = rest[1:] if effect else rest
        heads.setdefault(head, {}).setdefault(effect, []).append(" ".join(values))
    lines = []
    for head, effects in heads.items():
        if head == "recruit":
            lines.append(_recruit_line(recruits))
            continue
        choice = head.split()[1] if head.startswith("train ") else None
        tile = (tiles or {}).get(choice or "")
        label = f"{head} ({tile})" if tile else head
        if head == "special":
            label = "special (costs a token)"
        forms = [f"{effect} {' | '.join(v for v in values if v)}".strip()
                 for effect, values in effects.items()]
        forms = [f for f in forms if f]
        lines.append(f"{label}: {' · '.join(forms)}" if forms and effects.keys() != {""}
                     else f"{label} {' | '.join(forms)}".rstrip())
    if heads:
        lines.append(f"build LEVELS  (any legal tower from your team, e.g. `{example}`)"
                     if example else
                     "build LEVELS  (any legal tower from your team, bottom level first, "
                     "levels split by `/`: written like `build 7 7 7 / 5 5 / 2`)")
    return lines
