"""Neutralising text that comes from other people before it reaches a terminal or a page.

Player names, room names and chat lines are typed by other people. Printed as they are, an
escape sequence in a name could recolour the screen, move the cursor, set the window title or
reverse the reading direction of a line. :func:`safe` removes all of that; every string the
client shows that did not originate in the client itself goes through it first; the server's
web pages (``server.web``) put the same text through it before HTML escaping, so that a page
read in a text browser, or copied into a terminal, is as safe.
"""

from __future__ import annotations

import re
from typing import Final

#: Whole escape sequences are removed, not just their introducer, so that "\x1b[31mEvil"
#: shows as "Evil" rather than "[31mEvil":
#: CSI (7-bit "ESC [" and 8-bit 0x9B) with parameters and a final byte; OSC, DCS, SOS, PM
#: and APC strings up to their terminator (BEL or ST) or the end of the text; any other
#: two-byte "ESC x" sequence.
_SEQUENCE: Final = re.compile(
    r"""
      (?:\x1b\[|\x9b) [0-?]* [ -/]* [@-~]?            # CSI ... final
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])          # OSC DCS SOS PM APC
        .*? (?:\x07|\x1b\\|\x9c|$)                     # ... up to BEL / ST / end
    | \x1b[ -~]?                                       # ESC + one byte, or a lone ESC
    """,
    re.VERBOSE | re.DOTALL,
)

#: Characters that change the direction of what follows (Trojan-source style reordering).
_BIDI: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_SPACES: Final = frozenset("\t\n\r\v\f\u2028\u2029\x85")
REPLACEMENT: Final = "\ufffd"


def _clean_char(ch: str) -> str:
    if ch in _SPACES:
        return " "
    code = ord(ch)
    if code < 0x20 or 0x7F <= code <= 0x9F:  # C0, DEL, C1
        return REPLACEMENT
    if ch in _BIDI:
        return ""
    return ch


def safe(text: object) -> str:
    """``text`` as a string that is safe to print on a terminal.

    Escape sequences are dropped whole; line breaks and tabs become spaces; any other C0 or
    C1 control character and DEL become U+FFFD; bidirectional overrides and isolates are
    dropped. Everything else, including ``[bold]``-like text, is kept as it is — callers put
    the result in ``rich.text.Text`` objects, never through markup parsing.
    """
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():
        # No escape, control, separator or direction character (each of them is one that
        # str.isprintable refuses): nothing to remove. The common case, kept quick.
        return s
    s = _SEQUENCE.sub("", s)
    return "".join(_clean_char(ch) for ch in s)
