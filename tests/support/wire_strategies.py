"""Hypothesis strategies for valid messages and for arbitrary MessagePack values."""

from __future__ import annotations

from hypothesis import strategies as st

from shared import messages as m
from shared.actions import Build, Dismantle, EndTurn, Move, Recruit, Special, Train, Undo
from shared.board import REGIONS, TILES
from shared.errors import ERROR_CODES
from shared.wire import MAX_LEVEL_WIDTH, MAX_LEVELS, printable

ids = st.integers(0, 2**31 - 1)
seats = st.integers(0, 3)
regions = st.sampled_from(REGIONS)
tiles = st.sampled_from(sorted(TILES))
sizes = st.integers(1, 10)


def texts(lo: int, hi: int) -> st.SearchStrategy[str]:
    """Printable text of ``lo`` to ``hi`` characters."""
    return st.text(
        st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")),
        min_size=lo, max_size=hi,
    ).filter(printable)


names = texts(1, 24)
room_names = texts(1, 40)
room_ids = texts(1, 64)
plain = texts(0, 60)

effects = st.one_of(
    st.builds(lambda r: {"effect": "move", "region": r}, regions),
    st.builds(lambda s: {"effect": "recruit", "size": s}, sizes),
    st.builds(lambda t: {"effect": "perform", "tile": t}, tiles),
)

actions = st.one_of(
    st.builds(Move, regions),
    st.builds(Recruit, st.lists(sizes, min_size=1, max_size=2)),
    st.builds(lambda c, e: Train(c, **e), st.sampled_from(["region", "all"]),
              st.one_of(st.just({}), effects)),
    st.builds(lambda e: Special(**e), effects),
    st.builds(Build, st.lists(st.lists(sizes, min_size=1, max_size=MAX_LEVEL_WIDTH),
                              min_size=1, max_size=MAX_LEVELS)),
    st.just(Dismantle()),
    st.just(EndTurn()),
    st.just(Undo()),
)

requests = st.one_of(
    st.builds(m.Hello, ids, names, st.none() | texts(32, 128), st.booleans()),
    st.builds(m.ListRooms, ids, st.none() | room_ids),
    st.builds(m.CreateRoom, ids, room_names, st.integers(2, 4),
              st.sampled_from(["normal", "advanced"]),
              st.none() | st.integers(10, 7 * 24 * 3600), st.booleans(), st.booleans()),
    st.builds(m.JoinRoom, ids, room_ids, st.sampled_from(["player", "spectator"]),
              st.none() | texts(1, 128)),
    st.builds(m.LeaveRoom, ids),
    st.builds(m.AddBot, ids, st.sampled_from(["easy", "normal", "hard", "random", "greedy"])),
    st.builds(m.StartGame, ids),
    st.builds(m.Chat, ids, texts(1, 200)),
    st.builds(m.ActionRequest, ids, actions),
    st.builds(m.HistoryRequest, ids, st.none() | st.integers(0, 2**53 - 1), st.integers(1, 500)),
    st.builds(m.Resync, ids),
    st.builds(m.ResignRequest, ids),
    st.builds(m.MyGames, ids, st.none() | st.sampled_from(["playing", "finished"]),
              st.integers(1, 100)),
    st.builds(m.Rematch, ids),
    st.builds(m.RecordRequest, ids, room_ids),
    st.builds(m.Leaderboard, ids, st.integers(1, 100), st.booleans()),
    st.builds(m.ProfileRequest, ids, names),
    st.builds(m.QuickMatch, ids, st.lists(st.integers(2, 4), min_size=1, max_size=3),
              st.booleans(), st.none() | st.integers(0, 600)),
    st.builds(m.CancelMatch, ids),
    st.builds(m.Follow, ids, names),
    st.builds(m.Unfollow, ids, names),
    st.builds(m.FriendsRequest, ids),
    st.builds(m.PresenceRequest, ids, st.booleans()),
    st.builds(m.Block, ids, names),
    st.builds(m.Unblock, ids, names),
    st.builds(m.InboxRequest, ids, st.booleans()),
)

# Plain data as it may sit in a view or an event.
json_like = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | plain,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(plain, inner, max_size=4),
    max_leaves=12,
)
flat_maps = st.dictionaries(plain, json_like, max_size=6)

summaries = st.builds(
    m.RoomSummary, room_ids, room_names, st.integers(2, 4), st.integers(0, 4),
    st.sampled_from(["normal", "advanced"]), st.sampled_from(["waiting", "playing", "finished"]),
    st.none() | st.integers(10, 3600), st.booleans(),
)

friends = st.builds(m.Friend, names, st.booleans(),
                    st.sampled_from(["lobby", "playing", "watching", "offline", "hidden"]),
                    st.none() | room_ids, st.none() | room_names,
                    st.none() | st.floats(0, 2e9))
notes = st.builds(m.Note, st.integers(0, 2**53 - 1), st.sampled_from(m.NOTE_KINDS),
                  texts(1, 300), st.floats(0, 2e9), st.booleans(), st.none() | room_ids,
                  st.none() | names, st.none() | room_ids)

server_messages = st.one_of(
    st.builds(m.Welcome, ids, plain, plain, st.integers(1, 3)),
    st.builds(m.Rooms, ids, st.lists(summaries, max_size=4), st.none(), st.booleans()),
    st.builds(m.Joined, ids, room_ids, st.none() | seats, st.none() | texts(1, 128),
              st.none() | room_ids),
    st.builds(m.Ok, ids, st.none() | st.integers(0, 2**53 - 1)),
    st.builds(m.Error, st.none() | ids, st.sampled_from(sorted(ERROR_CODES)), plain,
              st.none() | plain, st.none() | plain),
    st.builds(m.StatePush, room_ids, st.integers(0, 2**53 - 1), flat_maps,
              st.lists(flat_maps, max_size=4)),
    st.builds(m.ChatPush, room_ids, st.none() | seats, names, texts(1, 200)),
    st.builds(m.NoticePush, room_ids, texts(1, 200)),
    st.builds(m.Patch, room_ids, st.integers(0, 2**53 - 1), st.integers(0, 2**53 - 1),
              st.lists(st.lists(json_like, min_size=1, max_size=4), max_size=4),
              st.lists(flat_maps, max_size=4)),
    st.builds(m.History, ids, st.lists(
        st.builds(m.HistoryEntry, st.integers(0, 2**53 - 1), st.lists(flat_maps, max_size=3)),
        max_size=3)),
    st.builds(m.LeaderboardReply, ids, st.lists(st.builds(
        m.LeaderEntry, st.integers(1, 1000), names, st.integers(0, 3000), st.integers(0, 99),
        st.integers(0, 99)), max_size=3)),
    st.builds(m.ProfileReply, ids, names, st.integers(0, 3000), st.integers(0, 99),
              st.integers(0, 99), st.none() | st.integers(1, 99),
              st.lists(st.builds(m.SeatsRecord, st.integers(2, 4), st.integers(0, 9),
                                 st.integers(0, 9)), max_size=3),
              st.lists(st.builds(m.RatedResult, room_ids, st.integers(2, 4), st.integers(1, 4),
                                 st.integers(0, 3000), st.integers(0, 3000),
                                 st.floats(0, 2e9)), max_size=3)),
    st.builds(m.MatchedPush, room_ids, seats, texts(1, 128), st.none() | texts(1, 60)),
    st.builds(m.MatchWaitingPush, st.integers(0, 4), st.integers(2, 4)),
    st.builds(m.RemovedPush, st.none() | room_ids, st.sampled_from(["closed", "kicked",
                                                                     "banned"]),
              texts(1, 200), st.none() | st.floats(0, 2e9)),
    st.builds(m.FriendsReply, ids, st.lists(friends, max_size=3).map(tuple),
              st.lists(names, max_size=3).map(tuple), st.booleans()),
    st.builds(m.InboxReply, ids, st.lists(notes, max_size=3).map(tuple),
              st.integers(0, 2**31 - 1)),
    st.builds(m.NotePush, notes),
    st.builds(m.InboxNewPush, st.integers(1, 100), st.lists(notes, max_size=3).map(tuple)),
)

messages = requests | server_messages

# Any MessagePack value at all (within msgpack's own ranges).
msgpack_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats()
    | st.text(max_size=20) | st.binary(max_size=20),
    lambda inner: st.lists(inner, max_size=5)
    | st.dictionaries(st.text(max_size=8) | st.integers(0, 5), inner, max_size=5),
    max_leaves=20,
)
