"""The default :class:`~server.store.base.Store`: one SQLite file, on the stdlib ``sqlite3``.

:class:`SQLiteStore` is made of one part per thing it keeps, each on the machinery of
:class:`~server.store.sqlite_core.SQLiteCore` (how the store keeps its promises — one worker
thread, acknowledged means durable, group commit, one server per file — is told there):

* :mod:`server.store.sqlite_games` — rooms, seats, actions, results, progress, chat and rematches;
* :mod:`server.store.sqlite_accounts` — accounts, registrations, account seats, server identity;
* :mod:`server.store.sqlite_ratings` — ratings, rated games and the leaderboard;
* :mod:`server.store.sqlite_moderation` — bans, mutes and kicks;
* :mod:`server.store.sqlite_reviews` — finished games' reviews.
* :mod:`server.store.sqlite_tournaments` — Swiss tournaments.
* :mod:`server.store.sqlite_social` — follows, blocks, hidden presence and the inbox.
"""

from __future__ import annotations

from server.store.base import Store
from server.store.sqlite_accounts import SQLiteAccounts
from server.store.sqlite_challenges import SQLiteChallenges
from server.store.sqlite_core import MEMORY, SYNCHRONOUS, SQLiteCore, default_db_path
from server.store.sqlite_games import SQLiteGameExtras, SQLiteGames
from server.store.sqlite_moderation import SQLiteModeration
from server.store.sqlite_ratings import SQLiteRatings
from server.store.sqlite_reviews import SQLiteReviews
from server.store.sqlite_social import SQLiteSocial
from server.store.sqlite_tournaments import SQLiteTournaments

__all__ = ["MEMORY", "SYNCHRONOUS", "SQLiteCore", "SQLiteStore", "default_db_path"]


class SQLiteStore(SQLiteGames, SQLiteGameExtras, SQLiteAccounts, SQLiteRatings, SQLiteModeration,
                  SQLiteReviews, SQLiteTournaments, SQLiteSocial, SQLiteChallenges, Store):
    """A :class:`Store` in the SQLite file at ``path`` (``":memory:"`` for a throwaway one).

    ``synchronous`` is the SQLite setting for every commit (``FULL`` unless you are measuring);
    ``busy_timeout`` how long, in seconds, open waits for another holder of the file to let go
    before it gives up with ``database_in_use``. ``thread`` says whether calls run on the
    worker thread: by default yes for a file, and no for ``":memory:"``, which never waits on a
    disk — there a hop to the thread and back would only add latency (and GIL hand-offs with
    the event loop) to every acknowledged action.
    """
