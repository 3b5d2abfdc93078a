"""The short rule pages shown by the ``rules [topic]`` command.

The pages are the ``## topic`` sections of ``rules_pages.md``, shipped inside the client
package, so that the client can explain the game without a network or a checkout.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


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
    """The lines of a page with each paragraph and each list item (``- ``) joined into one
    line: the file is wrapped for reading it, a screen wraps to its own width."""
    out: list[str] = []
    for line in lines:
        text = line.strip()
        joins = (out and out[-1] and text and not line.startswith("- ")
                 and (line.startswith("  ") or not out[-1].startswith("- ")))
        if joins:
            out[-1] += " " + text
        else:
            out.append(line.rstrip())
    return "\n".join(out)


def topics() -> list[str]:
    """The topics `rules` knows, in the order of the file."""
    return [t for t in pages() if t]


def match_topics(word: str) -> list[str]:
    """The topics ``word`` could name: the exact topic, else every topic starting with it
    (case-insensitive)."""
    w = word.lower()
    return [t for t in topics() if t == w] or [t for t in topics() if t.startswith(w)]


def rules_page(topic: str | None = None) -> str:
    """The page for ``topic``, or, without a topic, the introduction and the topic list.

    Raises ``KeyError`` for a topic that :func:`topics` does not list.
    """
    if topic is None:
        return f"{pages()['']}\n\nTopics: {', '.join(topics())} — e.g. `rules towers`."
    return pages()[topic]
