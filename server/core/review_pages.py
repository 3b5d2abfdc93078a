"""A game's review in pages that each fit in one frame (the ``review`` request).

A 4-seat game's review is about 35 KB of MessagePack, its largest turn under 1 KB: within
one frame (64 KiB), so it is one reply. One larger than a frame would not fit in one:
:func:`review_page` answers ``review`` with the review's summary and its turns from
``from`` on, as many as fit in a frame and the array limit; ``next`` says where the
following page starts (None on the last), as the ``record`` reply does for a record's
actions (:mod:`server.core.record_pages`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared import messages as m
from shared.codec import MAX_ARRAY, MAX_FRAME, encode


def review_page(re: int, review: Mapping[str, Any], start: int = 0, *,
                frame: int = MAX_FRAME, array: int = MAX_ARRAY) -> m.Review:
    """The ``review`` reply to the request ``re`` holding ``review``'s turns (its plain
    data, :meth:`shared.review.Review.to_data`) from ``start`` on: as many as fit in
    ``frame`` bytes and ``array`` items (at least one, unless none is left)."""
    turns = list(review["turns"])
    start = min(start, len(turns))
    count = min(len(turns) - start, array)
    while True:
        end = start + count
        page = {**review, "turns": turns[start:end]}
        reply = m.Review(re=re, review=page, next=end if end < len(turns) else None)
        size = len(encode(reply))
        if size <= frame or count <= 1:
            return reply
        count = max(1, min(count - 1, count * frame // size))
