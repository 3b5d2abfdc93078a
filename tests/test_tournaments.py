"""The tournament director on a real in-process server (its real store and lobby): the
rooms of a round are made with the paired accounts seated."""

from __future__ import annotations

from typing import Any

from server.features.tournaments import RUNNING, Tournaments
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
