"""The tournament director on a real in-process server (its real store and lobby): the
rooms of a round are made with the paired accounts seated."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from server.features.tournaments import CANCELLED, LISTED, RUNNING, Tournaments
from shared import codec
from shared import messages as m
from shared.errors import CastellError, ProtocolError
from tests.support.servers import serving


async def test_starting_pairs_round_one_into_seated_rooms() -> None:
    async with serving() as (server, _url):
        told: list[tuple[str, Any]] = []

        async def tell(account: str, push: Any) -> None:
            told.append((account, push))

        accounts = {}
        for name in ("Anna", "Bea", "Cai", "Dov", "Eli"):
            record = await server.accounts.sign_in("k" * 20 + name, name)
            accounts[name] = record.account
        director = Tournaments(server.store, server.directory, tell)
        t = await director.create(accounts["Anna"], "Spring cup", 3, 2, 30, False)
        for name, account in accounts.items():
            await director.join(account, name, t.id)
        t = await director.begin(accounts["Anna"], t.id)
        assert t.status == RUNNING
        (r1,) = t.played
        by = {v: k for k, v in accounts.items()}
        # seeds by joining order: Anna-Bea, Cai-Dov, Eli the bye (server.core.swiss)
        assert [[by[a] for a in table["players"]] for table in r1["tables"]] == [
            ["Anna", "Bea"], ["Cai", "Dov"]]
        assert by[r1["bye"]] == "Eli"
        for table in r1["tables"]:
            runner = server.lobby.rooms[table["room"]]
            assert runner.room.status == "playing"
            assert [s.name for s in runner.room.seats if s is not None] == [
                by[a] for a in table["players"]]
        assert sorted(by[a] for a, push in told if push.room is not None) == [
            "Anna", "Bea", "Cai", "Dov"]
        # no game is over yet: a tick records nothing, and the stored state is the same
        assert await director.tick() == 0
        assert (await director.get(t.id)).played == t.played


def test_a_tournament_create_without_a_timer_gets_five_minutes_and_nil_is_refused() -> None:
    frame = {"type": "tournament_create", "id": 1, "name": "Cup"}
    made = codec.decode_request(msgpack.packb(frame))
    assert made.turn_seconds == m.TOURNAMENT_TURN_SECONDS == 300
    with pytest.raises(ProtocolError) as refused:
        codec.decode_request(msgpack.packb({**frame, "turn_seconds": None}))
    assert (refused.value.code, refused.value.field) == ("invalid_field", "turn_seconds")


async def test_every_table_of_a_tournament_has_a_turn_timer() -> None:
    """A table without a timer never ends when a player stays away, and the tournament
    waits on it for ever: the director refuses a tournament without one, and the default
    request's timer reaches every room of a round."""
    async with serving() as (server, _url):
        async def tell(account: str, push: Any) -> None:
            pass

        accounts = [(await server.accounts.sign_in("k" * 20 + n, n)).account
                    for n in ("Anna", "Bea", "Cai")]
        director = Tournaments(server.store, server.directory, tell)
        with pytest.raises(CastellError) as refused:
            await director.create(accounts[0], "Cup", 2, 2, None, False)
        assert refused.value.code == "bad_tournament"
        asked = m.TournamentCreate(id=1, name="Cup", rounds=2, seats=2)
        t = await director.create(accounts[0], asked.name, asked.rounds, asked.seats,
                                  asked.turn_seconds, asked.rated)
        for account, name in zip(accounts, ("Anna", "Bea", "Cai"), strict=True):
            await director.join(account, name, t.id)
        t = await director.begin(accounts[0], t.id)
        assert (await director.get(t.id)).turn_seconds == 300
        (table,) = t.played[0]["tables"]
        assert server.lobby.rooms[table["room"]].room.turn_seconds == 300


async def test_the_director_moves_every_tournament_however_many_and_lists_the_newest() -> None:
    """Past fifty open tournaments the director still moves the newest (they start at
    their time: with nobody entered, called off), and ``tournaments`` shows the newest."""
    async with serving() as (server, _url):
        async def tell(account: str, push: Any) -> None:
            pass

        now = [1000.0]
        account = (await server.accounts.sign_in("k" * 20 + "Anna", "Anna")).account
        director = Tournaments(server.store, server.directory, tell, clock=lambda: now[0])
        made = []
        for i in range(LISTED + 5):
            now[0] += 1
            made.append((await director.create(account, f"Cup {i}", 1, 2, 60, False,
                                               starts_at=now[0] + 10)).id)
        assert [t.id for t in await director.listed()] == made[::-1][:LISTED]
        now[0] += 100
        assert await director.tick() == LISTED + 5
        assert [(await director.get(tid)).status for tid in made] == [CANCELLED] * len(made)
