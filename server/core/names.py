"""Players' names: what a name may be, and when two names are one (docs/security.md, "Names").

* :func:`clean_name` is the name a ``hello`` goes by: spaces before and after it trimmed, and
  refused (``invalid_field``, field ``name``) when it holds an invisible or format character
  (Unicode's Default_Ignorable_Code_Point, control, format, private-use, unassigned
  characters, line and paragraph separators, any space but U+0020) or mixes scripts;
* :func:`name_key` is a name as names are compared: the UTS #39 confusables *skeleton* of the
  name after NFKC normalisation and case folding, with invisible characters dropped and runs
  of spaces made one. ``Anna``, ``ANNA``, ``Ａｎｎａ`` and a Cyrillic ``Аnnа`` have one key.

The skeleton is built from the confusables data that the ``confusable-homoglyphs`` package
ships (Unicode's confusables.txt, each line stored both ways): every source character maps
to its prototype, as UTS #39 says (:func:`skeleton`). The scripts of characters are that
package's too (Unicode's Scripts.txt); invisible characters are the ``regex`` package's
``\\p{Default_Ignorable_Code_Point}``.

Keys are stored (accounts' names, bans by name): :data:`KEY_VERSION` names the way they are
made, and a store whose keys were made another way makes them again when it opens
(:func:`rekeyed`).
"""

from __future__ import annotations

import functools
import importlib.metadata
import unicodedata
from collections.abc import Iterable

import regex
from confusable_homoglyphs import categories, confusables

from shared.errors import ProtocolError

#: The way keys are made: this module's rules and the versions of the Unicode data they
#: use. A store whose keys were made under another version makes them again at open.
KEY_VERSION = (f"skeleton-1 unicode-{unicodedata.unidata_version} confusable-homoglyphs-"
               f"{importlib.metadata.version('confusable-homoglyphs')} "
               f"regex-{importlib.metadata.version('regex')}")

#: Scripts that go with any other (digits, punctuation, combining marks).
_ANY_SCRIPT = frozenset({"COMMON", "INHERITED"})
#: Script sets one name may mix (UTS #39 "highly restrictive"): Japanese, Chinese with
#: Bopomofo, Korean, each also with Latin.
_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
#: General categories no name may hold: controls, format characters, surrogates, private
#: use, unassigned code points, line and paragraph separators.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")
_SPACES = regex.compile(r"\s+")
#: A key that no name has: a key made unique where two stored names turned out one.
KEY_APART = "\x1f"
#: The left-to-right marks the confusables data wraps right-to-left characters in.
_LRM = "\u200e"


def _glyph(text: str) -> str:
    return text.replace(_LRM, "") if len(text) > 1 else text


@functools.cache
def prototypes() -> dict[str, str]:
    """Each confusable character and its prototype (a character or a short string).

    The data holds each line ``source → prototype`` of confusables.txt both ways. A
    prototype never is a source (the skeleton is idempotent), so a source appears with
    exactly one entry, its prototype; a character with several entries is a prototype. A
    pair alone (one source, one prototype that nothing else maps to) is told apart by the
    order of the data: a source's entry is made when its line is read, before its
    prototype's when the prototype is new."""
    data = {_glyph(k): [_glyph(e["c"]) for e in v]
            for k, v in confusables.confusables_data.items()}
    order = {k: n for n, k in enumerate(data)}
    out: dict[str, str] = {}
    for char, entries in data.items():
        if len(char) != 1 or len(entries) != 1:
            continue
        target = entries[0]
        back = data.get(target, [])
        if len(target) != 1 or len(back) > 1 or order[char] < order.get(target, -1):
            out[char] = target
    return out


def skeleton(text: str) -> str:
    """UTS #39's skeleton of ``text``: NFD, each character by its prototype, NFD again
    (repeated until nothing changes, a few rounds at most)."""
    table = prototypes()
    out = unicodedata.normalize("NFD", text)
    for _ in range(4):
        mapped = unicodedata.normalize("NFD", "".join(table.get(c, c) for c in out))
        if mapped == out:
            break
        out = mapped
    return out


def name_key(name: str) -> str:
    """A name as names are compared (see the module docstring)."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    visible = _IGNORABLE.sub("", folded)
    return skeleton(_SPACES.sub(" ", visible).strip())


def scripts(name: str) -> set[str]:
    """The scripts of ``name``'s characters, but those that go with any script."""
    return {categories.alias(c) for c in name} - _ANY_SCRIPT


def mixed_scripts(name: str) -> bool:
    """Whether ``name`` mixes scripts that one name may not mix (see :data:`_MIXES`)."""
    used = scripts(name)
    return len(used) > 1 and not any(used <= allowed for allowed in _MIXES)


def invisible(char: str) -> bool:
    """Whether ``char`` cannot be seen, or is not a character a name may hold: a default
    ignorable one, a control or format character, and any space but U+0020."""
    return (unicodedata.category(char) in _REFUSED_CATEGORIES
            or _IGNORABLE.match(char) is not None
            or (char.isspace() and char != " "))


def clean_name(name: str, field: str = "name") -> str:
    """The name ``name`` goes by: trimmed of spaces (NFC); refused (``invalid_field``,
    ``field``) when it holds an invisible character, mixes scripts, or is empty."""
    trimmed = unicodedata.normalize("NFC", name.strip())
    bad = next((c for c in trimmed if invisible(c)), None)
    if bad is not None:
        raise ProtocolError(f"a name cannot hold U+{ord(bad):04X} "
                            f"({unicodedata.name(bad, 'an unnamed character')}): it would not "
                            "be seen, and could pass for another name", code="invalid_field",
                            field=field)
    if not trimmed:
        raise ProtocolError("a name needs a character other than spaces",
                            code="invalid_field", field=field)
    if mixed_scripts(trimmed):
        raise ProtocolError(f"{trimmed!r} mixes the scripts " + ", ".join(
            sorted(s.lower() for s in scripts(trimmed))) + ": write a name in one script",
            code="invalid_field", field=field)
    return trimmed


def rekeyed(accounts: Iterable[tuple[str, str, float]]) -> dict[str, str]:
    """The key of each stored account (``(account, name, created_at)``), made anew: where
    two names now are one, the account made first keeps the key and the others get one no
    name has (their name holds no longer: it is the first one's)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for account, name, _ in sorted(accounts, key=lambda a: (a[2], a[0])):
        key = name_key(name)
        if key in taken:
            key = key + KEY_APART + account
        taken.add(key)
        out[account] = key
    return out
