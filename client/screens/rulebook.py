"""The short rule pages shown by the ``rules [topic]`` command.

The pages are the ``## topic`` sections of ``rules_pages.md``, shipped inside the client
package, so that the client can explain the game without a network or a checkout.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Final

#: The sections of the full rule book (docs/rules.md) by number: their titles, and the
#: topic of the page that tells them in short (None: no page does).
SECTIONS: Final[dict[int, tuple[str, str | None]]] = {
    1: ("Components", None),
    2: ("The map", "map"),
    3: ("Setup", None),
    4: ("Rounds and turns", "turn"),
    5: ("Festivals", "festivals"),
    6: ("Local performances", "performances"),
    7: ("Towers and skills", "towers"),
    8: ("End of a round", "round"),
    9: ("Final scoring", "scoring"),
    10: ("Rooms", None),
}
#: Common words for what a page tells, each with that page's topic: ``rules pinya`` finds
#: the towers page, ``rules trophy`` the festivals one.
ALIASES: Final[dict[str, str]] = {
    **dict.fromkeys(("pinya", "tronc", "level", "levels", "castellers", "casteller", "build"),
                    "towers"),
    **dict.fromkeys(("base", "mix", "strength", "balance", "width", "skill", "rank"),
                    "skills"),
    **dict.fromkeys(("festival", "trophy", "trophies", "medal", "medals", "ribbon", "prize",
                     "prizes", "size token", "participate"), "festivals"),
    **dict.fromkeys(("token", "tokens", "special", "move", "recruit", "undo", "end", "actions",
                     "action"), "turn"),
    **dict.fromkeys(("train", "training", "segment", "all"), "wheel"),
    **dict.fromkeys(("region", "regions", "adjacent", "neighbours", "board"), "map"),
    **dict.fromkeys(("score", "points", "diversity", "win", "winner", "tie", "end of game"),
                    "scoring"),
    **dict.fromkeys(("tile", "tiles", "perform", "performance", "shape", "exhibition"),
                    "performances"),
    **dict.fromkeys(("refill", "bag", "marker", "rounds"), "round"),
}
_MARK: Final = re.compile(r"§(\d+)")
#: A list item of a page: ``- `` or ``1. ``.
_ITEM: Final = re.compile(r"(?:- |\d+\. )")


@cache
def pages() -> dict[str, str]:
    """Topic → page text, in the order of the file. The text before the first topic is
    stored under ``""`` (the introduction)."""
    text = resources.files("client").joinpath("rules_pages.md").read_text(encoding="utf-8")
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip().lower()
            out[current] = []
        elif not line.startswith("# "):
            # A terminal shows text, not markdown: bold markers would print as stars.
            out[current].append(line.replace("**", ""))
    return {topic: reflow(lines).strip() for topic, lines in out.items()}


def reflow(lines: list[str]) -> str:
    """The lines of a page with each paragraph and each list item (``- `` or ``1. ``) joined
    into one line: the file is wrapped for reading it, a screen wraps to its own width."""
    out: list[str] = []
    for line in lines:
        text = line.strip()
        joins = (out and out[-1] and text and not _ITEM.match(line)
                 and (line.startswith("  ") or not _ITEM.match(out[-1])))
        if joins:
            out[-1] += " " + text
        else:
            out.append(line.rstrip())
    return "\n".join(out)


def topics() -> list[str]:
    """The topics `rules` knows, in the order of the file."""
    return [t for t in pages() if t]


def section(word: str) -> int | None:
    """The section of the rule book ``word`` names (``4`` or ``§4``), else None."""
    found = re.fullmatch(r"§?(\d{1,2})", word.strip())
    number = int(found.group(1)) if found else None
    return number if number in SECTIONS else None


def match_topics(word: str) -> list[str]:
    """The topics ``word`` could name: the exact topic, else every topic starting with it
    (case-insensitive), else the page a common word names (:data:`ALIASES`: ``pinya``,
    ``trophy``, ``score``...); a section's number (``4``, ``§4``) names the topic of its
    page."""
    number = section(word)
    if number is not None:
        topic = SECTIONS[number][1]
        return [topic] if topic is not None else []
    w = " ".join(word.lower().split())
    return ([t for t in topics() if t == w] or ([ALIASES[w]] if w in ALIASES else [])
            or [t for t in topics() if t.startswith(w)])


def sections_note(text: str, topic: str | None = None) -> str | None:
    """What the marks (§4) in ``text`` name: the sections of the full rule book, by title,
    with the page of each (other than ``topic``'s own); None without a mark."""
    named = []
    for number in dict.fromkeys(int(n) for n in _MARK.findall(text)):
        if number not in SECTIONS:
            continue
        title, page = SECTIONS[number]
        named.append(f"§{number} {title}" + (f" (`rules {page}`)" if page and page != topic
                                              else ""))
    if not named:
        return None
    return f"Sections named here, of the full rule book (docs/rules.md): {'; '.join(named)}."


def rules_page(topic: str | None = None) -> str:
    """The page for ``topic``, ending with the sections of the full rule book its marks
    name; or, without a topic, the introduction and the topic list.

    Raises ``KeyError`` for a topic that :func:`topics` does not list.
    """
    if topic is None:
        return f"{pages()['']}\n\nTopics: {', '.join(topics())} — e.g. `rules towers`."
    page = pages()[topic]
    note = sections_note(page, topic)
    return page if note is None else f"{page}\n\n{note}"
