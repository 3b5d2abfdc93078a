"""A finished game's record in pages that each fit in one frame (the ``record`` request).

A record holds every action of its game: a long game's (more than the array limit of 1,024
items, or more bytes than a frame holds) would not fit in one reply. :func:`record_page`
answers ``record`` with the record's settings and the actions from ``from`` on, as many as
fit in a frame and the array limit; ``next`` says where the following page starts (None on
the last). A game short enough is one page, as the ``record`` reply always was.
"""

from __future__ import annotations

from shared import messages as m
from shared.codec import MAX_ARRAY, MAX_FRAME, encode
from shared.record import GameRecordFile


def record_page(re: int, game: GameRecordFile, start: int = 0, *, frame: int = MAX_FRAME,
                array: int = MAX_ARRAY) -> m.Record:
    """The ``record`` reply to the request ``re`` holding ``game``'s actions from ``start``
    on: as many as fit in ``frame`` bytes and ``array`` items (at least one, unless none
    is left)."""
    data = game.to_data()
    actions = data["actions"]
    start = min(start, len(actions))
    count = min(len(actions) - start, array)
    while True:
        end = start + count
        page = {**data, "actions": actions[start:end]}
        reply = m.Record(re=re, game=page, next=end if end < len(actions) else None)
        size = len(encode(reply))
        if size <= frame or count <= 1:
            return reply
        count = max(1, min(count - 1, count * frame // size))
