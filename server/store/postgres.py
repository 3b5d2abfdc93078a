"""A :class:`~server.store.base.Store` in PostgreSQL, on ``asyncpg``: the store that several
server nodes share.

    store = open_store("postgresql://castell@db.example/castell?schema=castell")

:class:`PostgresStore` is made of one part per thing it keeps, each on the machinery of
:class:`~server.store.postgres_core.PostgresCore` (how the store keeps its promises — its own
schema, migrations under a lock, acknowledged means durable, one server or one cluster, writes
about one room in order, group commit — is told there):

* :mod:`server.store.postgres_games` — rooms, seats, actions, results, progress, chat and
  rematches;
* :mod:`server.store.postgres_accounts` — accounts, registrations, account seats, server
  identity;
* :mod:`server.store.postgres_ratings` — ratings, rated games and the leaderboard;
* :mod:`server.store.postgres_moderation` — bans, mutes and kicks;
* :mod:`server.store.postgres_reviews` — finished games' reviews.
* :mod:`server.store.postgres_tournaments` — Swiss tournaments.
* :mod:`server.store.postgres_social` — follows, blocks, hidden presence and the inbox.

``asyncpg`` is imported when a store opens, so a server on SQLite never needs it.
"""

from __future__ import annotations

from server.store.base import Store
from server.store.postgres_accounts import PostgresAccounts
from server.store.postgres_challenges import PostgresChallenges
from server.store.postgres_core import DEFAULT_SCHEMA, PostgresCore, redact, split_schema
from server.store.postgres_games import PostgresGameExtras, PostgresGames
from server.store.postgres_moderation import PostgresModeration
from server.store.postgres_ratings import PostgresRatings
from server.store.postgres_reviews import PostgresReviews
from server.store.postgres_social import PostgresSocial
from server.store.postgres_tournaments import PostgresTournaments

__all__ = ["DEFAULT_SCHEMA", "PostgresCore", "PostgresStore", "redact", "split_schema"]


class PostgresStore(PostgresGames, PostgresGameExtras, PostgresAccounts, PostgresRatings,
                    PostgresModeration, PostgresReviews, PostgresTournaments, PostgresSocial,
                    PostgresChallenges, Store):
    """A :class:`Store` in the PostgreSQL database at ``url`` (``postgresql://…``).

    ``schema`` (or ``?schema=`` in the URL) is the PostgreSQL schema that holds the tables;
    ``shared`` lets other stores opened ``shared`` (the other nodes of a cluster) use the
    schema at the same time; ``pool_size`` the most connections this store opens (besides
    the one holding the lock); ``connect_timeout`` how long, in seconds, open waits for the
    server before giving up with ``cannot_open``.
    """
