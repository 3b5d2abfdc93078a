"""The schema of each backend, as the list of migrations that builds it from nothing.

:data:`MIGRATIONS` builds the SQLite file, :data:`POSTGRES_MIGRATIONS` the PostgreSQL schema;
both lists have the same length and migration *n* means the same change in both, so that a
schema version names one set of tables whatever the backend.

Migration *n* takes a database at schema version *n − 1* to version *n*; version 0 is an empty
file (or an empty PostgreSQL schema). A database is only ever changed by appending a migration
here, never by editing one that has shipped: a database written by an older Castell is brought
up to date at open, in the same transaction that checks it, and one written by a newer Castell
is refused untouched.

A step of a migration is an SQL statement, or a :class:`Rewrite` of one column's values that
SQL cannot express (each backend runs it row by row). The versions:

1. rooms, their seats, their actions in order, and the results of finished games; an action
   stored as the whole ``action`` request frame that carried it (``type``, ``id`` 0, ``kind``
   and the action's fields);
2. an action stored as its fields only (:func:`shared.codec.pack_action`): every stored action
   rewritten by :func:`action_fields_from_frame`;
3. what a room's history needs besides its actions (:mod:`server.core.history`): whether an action
   was the turn timer's (``actions.timed_out``), the version at which the game started
   (``rooms.started_version``; nil for a game started before), and the room's chat lines
   (``chat``, the last :data:`~server.store.base.CHAT_KEPT` of each room);
4. players' accounts (``accounts``: a name unique as compared, a key stored as its hash) and
   the seats that belong to them (``account_seats``);
5. ratings: whether a room is rated (``rooms.rated``), each account's rating (``ratings``:
   openskill's mu and sigma, rated games and wins) and every rated game's change of it
   (``rated_games``), written in the transaction that stores the game's result;
6. bans the host set (``bans``);
7. what the server itself is (``server_meta``, a name and a value a row): its identity,
   ``server_id``, made once at the first open and sent in every ``welcome`` (nodes of a
   cluster, sharing the database, share it);
8. rematches (:mod:`server.features.rematch`): the seats a room offers to the players of the game it
   is a rematch of (``rooms.offers``, stored with the room), and the rematch of each finished
   room (``rematches``: one per room; gone with either room);
9. when each account was last seen (``accounts.last_seen``, at first its ``created_at``),
   the accounts registered within the last hour by address and network
   (``registrations``), and the version of the way stored name keys are made
   (``name_keys``: when it is not :data:`server.core.names.KEY_VERSION`, the store makes every
   account's ``name_key`` and every ban by name anew at open);
10. mutes (``mutes``: a name as compared) and kicks (``kicks``: a player kept out of one room,
    gone with the room) the host set;
11. where each game stands (:class:`~server.store.base.Progress`): its round and whose turn
    it is (``rooms.round``, ``rooms.turn``), stored by the write that moves the game, so that
    ``my_games`` lists an account's games without replaying them. A game stored before has
    them nil until it is first listed: it is replayed once then and they are written back
    (:meth:`~server.store.base.Store.fill_progress`).
12. the name a ban, a mute or a kick was set on as the host typed it (``bans.name``,
    ``mutes.name``, ``kicks.name``; nil for one set before), which the host's lists show.
13. finished games' reviews (``reviews``: one per room, the MessagePack bytes of
    :meth:`shared.review.Review.to_data`, gone with the room), computed once by
    :mod:`server.features.reviews` and served from here after.
14. Swiss tournaments (:mod:`server.features.tournaments`, ``tournaments``): one row each,
    its state as a JSON document (players, rounds, tables and their results) and a version
    every write expects, so that a director that lost its lease writes nothing.
15. friends, blocks and the inbox (:mod:`server.features.social`,
    :mod:`server.features.inbox`): who follows whom (``follows``), who blocks whom
    (``blocks``), the accounts that hide their presence (``presence_hidden``), and each
    account's notifications until read or cleared (``notes``).
16. challenges by name (:mod:`server.features.challenges`): each challenge (``challenges``,
    open until ended: accepted, declined, expired or cancelled) and who accepted it
    (``challenge_accepts``).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import msgpack


@attrs.frozen
class Rewrite:
    """A migration step: every value of ``table.column`` becomes ``change(value)``.

    Rows are visited in the order of ``key`` (the table's primary key), a batch at a time.
    When ``change`` returns None it cannot read the value: the value is left as it was and the
    backend logs the row's key.
    """

    table: str
    key: tuple[str, ...]
    column: str
    change: Callable[[bytes], bytes | None]


#: A step of a migration: an SQL statement, or a :class:`Rewrite`.
Step = str | Rewrite


def action_fields_from_frame(frame: bytes) -> bytes | None:
    """One stored action from schema 1's form to schema 2's, or None when ``frame`` is not a
    schema-1 action.

    Schema 1 stored the MessagePack ``action`` request that carried the action
    (``{"type": "action", "id": 0, "kind": ..., ...fields}``); schema 2 stores the map of the
    action's fields alone, in the same order (``{"kind": ..., ...fields}``: the bytes
    :func:`shared.codec.pack_action` gives). The fields are moved as they are, not checked:
    reading them is the job of :func:`shared.codec.unpack_action`, after the migration as
    before it.
    """
    try:
        value = msgpack.unpackb(frame, raw=False)
    except Exception:  # msgpack's own errors, whatever the bytes provoke in it
        return None
    if type(value) is not dict or value.get("type") != "action":
        return None
    fields = {k: v for k, v in value.items() if k not in ("type", "id")}
    return msgpack.packb(fields, use_bin_type=True)


#: Migration 2's step, the same for both backends.
_ACTIONS_AS_FIELDS = Rewrite("actions", ("room", "seq"), "action", action_fields_from_frame)

#: ``PRAGMA application_id`` of a Castell database ("CSTL"): tells our file from another
#: program's SQLite file even when that one happens to have a ``schema_version`` table.
APPLICATION_ID = 0x4353544C

#: ``MIGRATIONS[n - 1]`` holds the steps of migration n, run in order.
MIGRATIONS: tuple[tuple[Step, ...], ...] = (
    # 1: rooms, their seats, their actions in order, and the results of finished games.
    (
        f"PRAGMA application_id = {APPLICATION_ID}",
        "CREATE TABLE schema_version (version INTEGER NOT NULL)",
        "INSERT INTO schema_version (version) VALUES (0)",
        """CREATE TABLE rooms (
            room TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            seats INTEGER NOT NULL,
            variant TEXT NOT NULL,
            turn_seconds INTEGER,
            private INTEGER NOT NULL CHECK (private IN (0, 1)),
            code TEXT,
            seed INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('waiting', 'playing', 'finished')),
            version INTEGER NOT NULL,
            created_at REAL NOT NULL,
            started_at REAL,
            finished_at REAL
        )""",
        "CREATE INDEX rooms_by_status ON rooms (status, finished_at)",
        """CREATE TABLE seats (
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            seat INTEGER NOT NULL CHECK (seat >= 0),
            name TEXT NOT NULL,
            bot INTEGER NOT NULL CHECK (bot IN (0, 1)),
            bot_level TEXT,
            token_hash BLOB,
            PRIMARY KEY (room, seat)
        ) WITHOUT ROWID""",
        """CREATE TABLE actions (
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            seq INTEGER NOT NULL CHECK (seq >= 0),
            seat INTEGER NOT NULL,
            action BLOB NOT NULL,
            at REAL NOT NULL,
            version INTEGER NOT NULL,
            PRIMARY KEY (room, seq)
        ) WITHOUT ROWID""",
        """CREATE TABLE results (
            room TEXT PRIMARY KEY REFERENCES rooms (room) ON DELETE CASCADE,
            result BLOB NOT NULL
        ) WITHOUT ROWID""",
    ),
    # 2: an action stored as its fields, not as the request frame that carried it.
    (_ACTIONS_AS_FIELDS,),
    # 3: what a room's history needs besides its actions.
    (
        "ALTER TABLE rooms ADD COLUMN started_version INTEGER",
        "ALTER TABLE actions ADD COLUMN timed_out INTEGER NOT NULL DEFAULT 0 "
        "CHECK (timed_out IN (0, 1))",
        """CREATE TABLE chat (
            line INTEGER PRIMARY KEY,
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            version INTEGER NOT NULL,
            seat INTEGER,
            name TEXT NOT NULL,
            text TEXT NOT NULL,
            at REAL NOT NULL
        )""",
        "CREATE INDEX chat_by_room ON chat (room, line)",
    ),
    # 4: players' accounts, and the seats that belong to them.
    (
        """CREATE TABLE accounts (
            account TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            name_key TEXT NOT NULL UNIQUE,
            key_hash BLOB NOT NULL UNIQUE,
            created_at REAL NOT NULL
        ) WITHOUT ROWID""",
        """CREATE TABLE account_seats (
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            seat INTEGER NOT NULL CHECK (seat >= 0),
            account TEXT NOT NULL REFERENCES accounts (account),
            PRIMARY KEY (room, seat)
        ) WITHOUT ROWID""",
        "CREATE INDEX account_seats_by_account ON account_seats (account, room)",
    ),
    # 5: ratings.
    (
        "ALTER TABLE rooms ADD COLUMN rated INTEGER NOT NULL DEFAULT 0 CHECK (rated IN (0, 1))",
        """CREATE TABLE ratings (
            account TEXT PRIMARY KEY REFERENCES accounts (account),
            mu REAL NOT NULL,
            sigma REAL NOT NULL,
            games INTEGER NOT NULL DEFAULT 0,
            wins INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID""",
        """CREATE TABLE rated_games (
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            seat INTEGER NOT NULL CHECK (seat >= 0),
            account TEXT NOT NULL REFERENCES accounts (account),
            seats INTEGER NOT NULL,
            place INTEGER NOT NULL,
            mu_before REAL NOT NULL,
            sigma_before REAL NOT NULL,
            mu_after REAL NOT NULL,
            sigma_after REAL NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY (room, seat)
        ) WITHOUT ROWID""",
        "CREATE INDEX rated_games_by_account ON rated_games (account, at)",
    ),
    # 6: bans the host set (server.features.moderation): by a name as compared, or by an address.
    (
        """CREATE TABLE bans (
            kind TEXT NOT NULL CHECK (kind IN ('name', 'address')),
            value TEXT NOT NULL,
            until REAL,
            reason TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (kind, value)
        ) WITHOUT ROWID""",
    ),
    # 7: what the server itself is (server.features.identity): its id, made once.
    (
        """CREATE TABLE server_meta (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID""",
    ),
    # 8: rematches (server.features.rematch): a room's offered seats, and each finished room's
    # rematch.
    (
        "ALTER TABLE rooms ADD COLUMN offers BLOB",
        """CREATE TABLE rematches (
            room TEXT PRIMARY KEY REFERENCES rooms (room) ON DELETE CASCADE,
            rematch TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE
        ) WITHOUT ROWID""",
        "CREATE INDEX rematches_by_rematch ON rematches (rematch)",
    ),
    # 9: names and registrations (server.core.names, server.features.accounts): when each account
    # was
    # last seen, the accounts registered lately by address and network, and the way the
    # stored name keys were made (they are made anew at open when it changed).
    (
        "ALTER TABLE accounts ADD COLUMN last_seen REAL NOT NULL DEFAULT 0",
        "UPDATE accounts SET last_seen = created_at",
        """CREATE TABLE registrations (
            address TEXT NOT NULL,
            network TEXT NOT NULL,
            at REAL NOT NULL
        )""",
        "CREATE INDEX registrations_by_address ON registrations (address, at)",
        "CREATE INDEX registrations_by_network ON registrations (network, at)",
        "CREATE INDEX registrations_by_time ON registrations (at)",
        "CREATE TABLE name_keys (version TEXT NOT NULL)",
    ),
    # 10: mutes and kicks the host set (server.features.moderation), stored like bans so that they
    # outlive a restart and reach every node.
    (
        """CREATE TABLE mutes (
            value TEXT PRIMARY KEY,
            until REAL,
            reason TEXT NOT NULL,
            created_at REAL NOT NULL
        ) WITHOUT ROWID""",
        """CREATE TABLE kicks (
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            value TEXT NOT NULL,
            account TEXT,
            seat INTEGER NOT NULL,
            until REAL,
            reason TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (room, value)
        ) WITHOUT ROWID""",
    ),
    # 11: where each game stands (its round, whose turn it is), stored with the room by the
    # write that moves it: my_games lists games without replaying them.
    (
        "ALTER TABLE rooms ADD COLUMN round INTEGER",
        "ALTER TABLE rooms ADD COLUMN turn INTEGER",
    ),
    # 12: the name a ban, a mute or a kick was set on, as the host typed it (the lists show
    # it; ``value`` stays the name as compared, for matching).
    (
        "ALTER TABLE bans ADD COLUMN name TEXT",
        "ALTER TABLE mutes ADD COLUMN name TEXT",
        "ALTER TABLE kicks ADD COLUMN name TEXT",
    ),
    # 13: finished games' reviews (server.features.reviews): one per room, computed once.
    (
        """CREATE TABLE reviews (
            room TEXT PRIMARY KEY REFERENCES rooms (room) ON DELETE CASCADE,
            data BLOB NOT NULL,
            made_at REAL NOT NULL
        ) WITHOUT ROWID""",
    ),
    # 14: Swiss tournaments (server.features.tournaments): each one's state as a document.
    (
        """CREATE TABLE tournaments (
            tournament TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at REAL NOT NULL,
            version INTEGER NOT NULL,
            doc TEXT NOT NULL
        )""",
        "CREATE INDEX tournaments_by_status ON tournaments (status, created_at)",
    ),
    # 15: friends, blocks and the inbox (server.features.social, server.features.inbox).
    (
        """CREATE TABLE follows (
            account TEXT NOT NULL REFERENCES accounts (account) ON DELETE CASCADE,
            target TEXT NOT NULL REFERENCES accounts (account) ON DELETE CASCADE,
            created_at REAL NOT NULL,
            PRIMARY KEY (account, target)
        ) WITHOUT ROWID""",
        "CREATE INDEX follows_by_target ON follows (target)",
        """CREATE TABLE blocks (
            account TEXT NOT NULL REFERENCES accounts (account) ON DELETE CASCADE,
            target TEXT NOT NULL REFERENCES accounts (account) ON DELETE CASCADE,
            created_at REAL NOT NULL,
            PRIMARY KEY (account, target)
        ) WITHOUT ROWID""",
        """CREATE TABLE presence_hidden (
            account TEXT PRIMARY KEY REFERENCES accounts (account) ON DELETE CASCADE
        ) WITHOUT ROWID""",
        """CREATE TABLE notes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            account TEXT NOT NULL REFERENCES accounts (account) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            data TEXT NOT NULL,
            created_at REAL NOT NULL,
            read INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX notes_by_account ON notes (account, id)",
    ),
    # 16: challenges by name and who accepted them (server.features.challenges).
    (
        """CREATE TABLE challenges (
            id TEXT PRIMARY KEY,
            from_account TEXT NOT NULL,
            from_name TEXT NOT NULL,
            to_accounts TEXT NOT NULL,
            to_names TEXT NOT NULL,
            seats INTEGER NOT NULL,
            variant TEXT NOT NULL,
            turn_seconds INTEGER,
            rated INTEGER NOT NULL,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            ended TEXT,
            ended_at REAL
        )""",
        "CREATE INDEX challenges_by_sender ON challenges (from_account, created_at)",
        """CREATE TABLE challenge_accepts (
            challenge TEXT NOT NULL REFERENCES challenges (id) ON DELETE CASCADE,
            account TEXT NOT NULL,
            PRIMARY KEY (challenge, account)
        ) WITHOUT ROWID""",
    ),
)

#: The name a Castell PostgreSQL schema records in its ``schema_version`` table: tells our
#: tables from another program's that happen to have one (PostgreSQL has no application_id).
APPLICATION = "castell"

#: ``POSTGRES_MIGRATIONS[n - 1]`` holds the PostgreSQL steps of migration n. They run with
#: ``search_path`` set to the store's schema, so the tables are created there.
POSTGRES_MIGRATIONS: tuple[tuple[Step, ...], ...] = (
    # 1: rooms, their seats, their actions in order, and the results of finished games.
    (
        "CREATE TABLE schema_version (application TEXT NOT NULL, version INTEGER NOT NULL)",
        f"INSERT INTO schema_version (application, version) VALUES ('{APPLICATION}', 0)",
        """CREATE TABLE rooms (
            room TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            seats INTEGER NOT NULL,
            variant TEXT NOT NULL,
            turn_seconds INTEGER,
            private BOOLEAN NOT NULL,
            code TEXT,
            seed BIGINT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('waiting', 'playing', 'finished')),
            version BIGINT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            started_at DOUBLE PRECISION,
            finished_at DOUBLE PRECISION
        )""",
        "CREATE INDEX rooms_by_status ON rooms (status, finished_at)",
        """CREATE TABLE seats (
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            seat INTEGER NOT NULL CHECK (seat >= 0),
            name TEXT NOT NULL,
            bot BOOLEAN NOT NULL,
            bot_level TEXT,
            token_hash BYTEA,
            PRIMARY KEY (room, seat)
        )""",
        """CREATE TABLE actions (
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            seq INTEGER NOT NULL CHECK (seq >= 0),
            seat INTEGER NOT NULL,
            action BYTEA NOT NULL,
            at DOUBLE PRECISION NOT NULL,
            version BIGINT NOT NULL,
            PRIMARY KEY (room, seq)
        )""",
        """CREATE TABLE results (
            room TEXT PRIMARY KEY REFERENCES rooms (room) ON DELETE CASCADE,
            result BYTEA NOT NULL
        )""",
    ),
    # 2: an action stored as its fields, not as the request frame that carried it.
    (_ACTIONS_AS_FIELDS,),
    # 3: what a room's history needs besides its actions.
    (
        "ALTER TABLE rooms ADD COLUMN started_version BIGINT",
        "ALTER TABLE actions ADD COLUMN timed_out BOOLEAN NOT NULL DEFAULT FALSE",
        """CREATE TABLE chat (
            line BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            version BIGINT NOT NULL,
            seat INTEGER,
            name TEXT NOT NULL,
            text TEXT NOT NULL,
            at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX chat_by_room ON chat (room, line)",
    ),
    # 4: players' accounts, and the seats that belong to them.
    (
        """CREATE TABLE accounts (
            account TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            name_key TEXT NOT NULL UNIQUE,
            key_hash BYTEA NOT NULL UNIQUE,
            created_at DOUBLE PRECISION NOT NULL
        )""",
        """CREATE TABLE account_seats (
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            seat INTEGER NOT NULL CHECK (seat >= 0),
            account TEXT NOT NULL REFERENCES accounts (account),
            PRIMARY KEY (room, seat)
        )""",
        "CREATE INDEX account_seats_by_account ON account_seats (account, room)",
    ),
    # 5: ratings.
    (
        "ALTER TABLE rooms ADD COLUMN rated BOOLEAN NOT NULL DEFAULT FALSE",
        """CREATE TABLE ratings (
            account TEXT PRIMARY KEY REFERENCES accounts (account),
            mu DOUBLE PRECISION NOT NULL,
            sigma DOUBLE PRECISION NOT NULL,
            games INTEGER NOT NULL DEFAULT 0,
            wins INTEGER NOT NULL DEFAULT 0
        )""",
        """CREATE TABLE rated_games (
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            seat INTEGER NOT NULL CHECK (seat >= 0),
            account TEXT NOT NULL REFERENCES accounts (account),
            seats INTEGER NOT NULL,
            place INTEGER NOT NULL,
            mu_before DOUBLE PRECISION NOT NULL,
            sigma_before DOUBLE PRECISION NOT NULL,
            mu_after DOUBLE PRECISION NOT NULL,
            sigma_after DOUBLE PRECISION NOT NULL,
            at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (room, seat)
        )""",
        "CREATE INDEX rated_games_by_account ON rated_games (account, at)",
    ),
    # 6: bans the host set (server.features.moderation): by a name as compared, or by an address.
    (
        """CREATE TABLE bans (
            kind TEXT NOT NULL CHECK (kind IN ('name', 'address')),
            value TEXT NOT NULL,
            until DOUBLE PRECISION,
            reason TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (kind, value)
        )""",
    ),
    # 7: what the server itself is (server.features.identity): its id, made once.
    (
        """CREATE TABLE server_meta (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL
        )""",
    ),
    # 8: rematches (server.features.rematch): a room's offered seats, and each finished room's
    # rematch.
    (
        "ALTER TABLE rooms ADD COLUMN offers BYTEA",
        """CREATE TABLE rematches (
            room TEXT PRIMARY KEY REFERENCES rooms (room) ON DELETE CASCADE,
            rematch TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE
        )""",
        "CREATE INDEX rematches_by_rematch ON rematches (rematch)",
    ),
    # 9: names and registrations (server.core.names, server.features.accounts): when each account
    # was
    # last seen, the accounts registered lately by address and network, and the way the
    # stored name keys were made (they are made anew at open when it changed).
    (
        "ALTER TABLE accounts ADD COLUMN last_seen DOUBLE PRECISION NOT NULL DEFAULT 0",
        "UPDATE accounts SET last_seen = created_at",
        """CREATE TABLE registrations (
            address TEXT NOT NULL,
            network TEXT NOT NULL,
            at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX registrations_by_address ON registrations (address, at)",
        "CREATE INDEX registrations_by_network ON registrations (network, at)",
        "CREATE INDEX registrations_by_time ON registrations (at)",
        "CREATE TABLE name_keys (version TEXT NOT NULL)",
    ),
    # 10: mutes and kicks the host set (server.features.moderation), stored like bans so that they
    # outlive a restart and reach every node.
    (
        """CREATE TABLE mutes (
            value TEXT PRIMARY KEY,
            until DOUBLE PRECISION,
            reason TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL
        )""",
        """CREATE TABLE kicks (
            room TEXT NOT NULL REFERENCES rooms (room) ON DELETE CASCADE,
            value TEXT NOT NULL,
            account TEXT,
            seat INTEGER NOT NULL,
            until DOUBLE PRECISION,
            reason TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (room, value)
        )""",
    ),
    # 11: where each game stands (its round, whose turn it is), stored with the room by the
    # write that moves it: my_games lists games without replaying them.
    (
        "ALTER TABLE rooms ADD COLUMN round INTEGER",
        "ALTER TABLE rooms ADD COLUMN turn INTEGER",
    ),
    # 12: the name a ban, a mute or a kick was set on, as the host typed it (the lists show
    # it; ``value`` stays the name as compared, for matching).
    (
        "ALTER TABLE bans ADD COLUMN name TEXT",
        "ALTER TABLE mutes ADD COLUMN name TEXT",
        "ALTER TABLE kicks ADD COLUMN name TEXT",
    ),
    # 13: finished games' reviews (server.features.reviews): one per room, computed once.
    (
        """CREATE TABLE reviews (
            room TEXT PRIMARY KEY REFERENCES rooms (room) ON DELETE CASCADE,
            data BYTEA NOT NULL,
            made_at DOUBLE PRECISION NOT NULL
        )""",
    ),
    # 14: Swiss tournaments (server.features.tournaments): each one's state as a document.
    (
        """CREATE TABLE tournaments (
            tournament TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            version INTEGER NOT NULL,
            doc TEXT NOT NULL
        )""",
        "CREATE INDEX tournaments_by_status ON tournaments (status, created_at)",
    ),
    # 15: friends, blocks and the inbox (server.features.social, server.features.inbox).
    (
        """CREATE TABLE follows (
            account TEXT NOT NULL REFERENCES accounts (account) ON DELETE CASCADE,
            target TEXT NOT NULL REFERENCES accounts (account) ON DELETE CASCADE,
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (account, target)
        )""",
        "CREATE INDEX follows_by_target ON follows (target)",
        """CREATE TABLE blocks (
            account TEXT NOT NULL REFERENCES accounts (account) ON DELETE CASCADE,
            target TEXT NOT NULL REFERENCES accounts (account) ON DELETE CASCADE,
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (account, target)
        )""",
        """CREATE TABLE presence_hidden (
            account TEXT PRIMARY KEY REFERENCES accounts (account) ON DELETE CASCADE
        )""",
        """CREATE TABLE notes (
            id BIGSERIAL PRIMARY KEY,
            account TEXT NOT NULL REFERENCES accounts (account) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            data TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            read BOOLEAN NOT NULL DEFAULT FALSE
        )""",
        "CREATE INDEX notes_by_account ON notes (account, id)",
    ),
    # 16: challenges by name and who accepted them (server.features.challenges).
    (
        """CREATE TABLE challenges (
            id TEXT PRIMARY KEY,
            from_account TEXT NOT NULL,
            from_name TEXT NOT NULL,
            to_accounts TEXT NOT NULL,
            to_names TEXT NOT NULL,
            seats INTEGER NOT NULL,
            variant TEXT NOT NULL,
            turn_seconds INTEGER,
            rated BOOLEAN NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            ended TEXT,
            ended_at DOUBLE PRECISION
        )""",
        "CREATE INDEX challenges_by_sender ON challenges (from_account, created_at)",
        """CREATE TABLE challenge_accepts (
            challenge TEXT NOT NULL REFERENCES challenges (id) ON DELETE CASCADE,
            account TEXT NOT NULL,
            PRIMARY KEY (challenge, account)
        )""",
    ),
)

#: The tables a Castell schema holds: a schema that has one of them but no ``schema_version``
#: of ours belongs to another program.
POSTGRES_TABLES = ("schema_version", "rooms", "seats", "actions", "results", "chat",
                   "accounts", "account_seats", "ratings", "rated_games", "bans",
                   "server_meta", "rematches", "registrations", "name_keys", "mutes",
                   "kicks", "reviews", "tournaments", "follows", "blocks",
                   "presence_hidden", "notes", "challenges", "challenge_accepts")

#: The schema version this Castell writes, and the newest it can read.
LATEST = len(MIGRATIONS)
assert len(POSTGRES_MIGRATIONS) == LATEST, "every migration exists for every backend"
