"""Whole Swiss tournaments over real sockets: eight accounts on an in-process server play
three rounds at 2-seat tables to the end, and nine at 3-seat tables (two resignations end
each game), each game decided by resignations the test chooses, and the pairings and final
standings are checked against the pure module (server.core.swiss) fed the results this test
decided and read back from the store."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from client.local.keys import new_key
from client.net.net import GameClient, ServerError
from server.core import swiss
from shared import messages as m
from tests.support.accounts import clients
from tests.support.console import admin, admin_run
from tests.support.servers import TEST_CONFIG, server_url, serving

NAMES = ["P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8"]


#: The 8-player tournament's tables, round by round, worked out by hand from the results
#: :func:`loser` decides. Round 1: top-down by seed; the odd numbers win. Round 2: P1 P3 P5
#: P7 on 1 point, then the rest (Buchholz 1 each), by seed; the lower numbers lose. Round
#: 3: P3 P7 on 2; P1 P4 P5 P8 on 1; P2 P6 on 0 (every Buchholz 2): top-down, no repeats.
BY_HAND = [
    [("P1", "P2"), ("P3", "P4"), ("P5", "P6"), ("P7", "P8")],
    [("P1", "P3"), ("P2", "P4"), ("P5", "P7"), ("P6", "P8")],
    [("P1", "P4"), ("P2", "P6"), ("P3", "P7"), ("P5", "P8")],
]
#: Its final standings by hand: P3 3 points; P7 P1 P5 2 (Buchholz 6, 5, 3); P4 P8 P2 1
#: (6, 4, 3); P6 0.
FINAL_BY_HAND = [("P3", 3, 5), ("P7", 2, 6), ("P1", 2, 5), ("P5", 2, 3), ("P4", 1, 6),
                 ("P8", 1, 4), ("P2", 1, 3), ("P6", 0, 4)]


def loser(a: str, b: str, number: int) -> str:
    """Who resigns at a table of round ``number``: chosen by the test, not by the server
    (the higher player number loses in odd rounds, the lower in even ones)."""
    low, high = sorted((a, b), key=lambda n: int(n[1:]))
    return high if number % 2 else low


async def push_of(client: GameClient, kind: type) -> Any:
    """The next push of type ``kind`` (the games' own pushes in between skipped)."""
    async with asyncio.timeout(10):
        while True:
            push = await client.pushes.get()
            if isinstance(push, kind):
                return push


async def until_moved(server: Any, tid: str, played: int) -> Any:
    """Tick the director until the tournament has ``played`` rounds paired (or ended):
    each tick reads the results the store holds; a game's end is stored before its
    resignation is answered, so this waits for no timer."""
    for _ in range(200):
        await server.tournaments.tick()
        t = await server.tournaments.get(tid)
        if len(t.played) >= played or t.status != "running":
            return t
        await asyncio.sleep(0.02)
    raise AssertionError("the director did not move on")


async def test_an_8_player_swiss_of_3_rounds_is_played_to_its_end_over_sockets() -> None:
    # The director moves when the test ticks it, not on its own timer.
    config = attrs.evolve(TEST_CONFIG, tournament_interval=3600.0)
    async with serving(config=config) as (server, _url), \
            clients(server_url(server)) as connect:
        players = {name: await connect(name, new_key()) for name in NAMES}
        guest = await connect("Guest")
        try:
            await guest.request(m.TournamentCreate, name="x")
        except ServerError as exc:
            assert exc.code == "not_signed_in"
        else:
            raise AssertionError("a guest created a tournament")
        made = await players["P1"].request(m.TournamentCreate, name="Spring cup", rounds=3,
                                           seats=2, turn_seconds=60)
        tid = made.tournament
        for name in NAMES:
            await players[name].request(m.TournamentJoin, tournament=tid)
        listed = await guest.request(m.TournamentsRequest)
        assert [(e.tournament, e.players, e.status) for e in listed.entries] == [
            (tid, 8, "open")]
        started = await players["P1"].request(m.TournamentStart, tournament=tid)
        assert started.status == "running" and started.round == 1

        seeds = {name: i + 1 for i, name in enumerate(NAMES)}
        rounds: list[swiss.Round] = []  # the test's own record, from its own results
        for number in (1, 2, 3):
            pushes = {name: await push_of(c, m.TournamentTablePush) for name, c in players.items()}
            assert all(p.round == number and not p.bye for p in pushes.values())
            tables: dict[str, list[str]] = {}
            for name, push in sorted(pushes.items(), key=lambda kv: kv[1].seat or 0):
                assert push.room is not None
                tables.setdefault(push.room, []).append(name)
            expected = swiss.pair_round(seeds, rounds, 2)
            # by hand (the pairing rules of docs/protocol.md, "Swiss tournaments", worked
            # out from the results the test decides: games resigned at once score 0-0, so
            # ties of points and Buchholz go by seed)
            assert sorted(tables.values()) == sorted(map(list, BY_HAND[number - 1]))
            assert sorted(tables.values()) == sorted(list(t.players)
                                                     for t in expected.tables)
            played = []
            for room, (a, b) in tables.items():
                for name in (a, b):
                    push = pushes[name]
                    await players[name].request(m.JoinRoom, room=room, token=push.token)
                out = loser(a, b, number)
                await players[out].request(m.ResignRequest)
                for name in (a, b):
                    await players[name].request(m.LeaveRoom)
                record = await server.store.load(room)
                assert record is not None and record.result is not None
                won = 1 - [a, b].index(out)
                assert list(record.result["winners"]) == [won]  # stored as decided
                places = (1, 2) if won == 0 else (2, 1)
                played.append(swiss.Table((a, b), places, None))
            rounds.append(swiss.Round(tuple(played), None))
            t = await until_moved(server, tid, number + 1)

        assert t.status == "finished"
        ended = {name: await push_of(c, m.TournamentEndedPush) for name, c in players.items()}
        final = await guest.request(m.TournamentRequest, tournament=tid)
        assert final.status == "finished" and final.round == 3
        # The standings, by the pure module from the results the test decided (scores:
        # the games' totals do not enter the test's record, so compare what does not
        # depend on them, and the ranks where points and Buchholz already separate).
        want = swiss.standings(seeds, rounds)
        got = {s.name: s for s in final.standings}
        for s in want:
            assert (got[s.player].points, got[s.player].buchholz, got[s.player].games) == (
                s.points, s.buchholz, 3), s.player
        assert [s.name for s in final.standings] == sorted(
            got, key=lambda n: (-got[n].points, -got[n].buchholz, -got[n].score, seeds[n]))
        # Everyone won or lost each game: 12 points in all, and the winner of all three
        # (a 3-0 is unique in 8 players over 3 rounds) is first.
        assert sum(s.points for s in final.standings) == 12
        top = [s.player for s in want if s.points == 3]
        assert len(top) == 1 and final.standings[0].name == top[0]
        for name, push in ended.items():
            assert push.status == "finished" and push.rank == got[name].rank
        # and the final standings worked out by hand: (name, points, Buchholz)
        assert [(s.name, s.points, s.buchholz) for s in final.standings] == FINAL_BY_HAND
        # what the pushes said is kept in each player's inbox: three tables and the end
        first = NAMES[0]
        kept = [n for n in (await players[first].request(m.InboxRequest)).notes
                if n.kind == "tournament" and n.ref == tid]
        assert len(kept) == 4, [n.text for n in kept]
        assert kept[0].text.endswith(f"you placed {got[first].rank}")  # (newest first)


async def test_the_host_cancels_a_running_tournament_from_the_console(short_dir: Any) -> None:
    sock = str(short_dir / "a.sock")
    config = attrs.evolve(TEST_CONFIG, tournament_interval=3600.0, admin_socket=sock)
    async with serving(config=config) as (server, _url), \
            clients(server_url(server)) as connect:
        players = {name: await connect(name, new_key()) for name in NAMES[:3]}
        made = await players["P1"].request(m.TournamentCreate, name="Cup", rounds=2)
        for c in players.values():
            await c.request(m.TournamentJoin, tournament=made.tournament)
        await players["P1"].request(m.TournamentStart, tournament=made.tournament)
        said = await admin(sock, "tournament", "cancel", made.tournament)
        assert "cancelled" in said
        for c in players.values():
            ended = await push_of(c, m.TournamentEndedPush)
            assert (ended.status, ended.rank) == ("cancelled", None)
        # no more rounds: the director leaves it alone, even once its games are over
        assert await server.tournaments.tick() == 0
        t = await players["P2"].request(m.TournamentRequest, tournament=made.tournament)
        assert (t.status, t.round) == ("cancelled", 1)
        done = await asyncio.to_thread(admin_run, sock, "tournament", "cancel", "t0")
        assert done.returncode == 1 and "no such tournament" in done.stderr


NINE = [f"P{i}" for i in range(1, 10)]


def resign_order(players: list[str], number: int) -> list[str]:
    """Who resigns first and second at a 3-seat table of round ``number`` (the one left
    wins): chosen by the test, not the server — by player number, rotated by the round."""
    ranked = sorted(players, key=lambda n: int(n[1:]))
    turn = number % 3
    order = ranked[turn:] + ranked[:turn]
    return order[:2]


async def test_a_9_player_swiss_of_3_rounds_at_3_seat_tables_is_played_over_sockets() -> None:
    config = attrs.evolve(TEST_CONFIG, tournament_interval=3600.0)
    async with serving(config=config) as (server, _url), \
            clients(server_url(server)) as connect:
        players = {name: await connect(name, new_key()) for name in NINE}
        made = await players["P1"].request(m.TournamentCreate, name="Autumn three", rounds=3,
                                           seats=3, turn_seconds=60)
        tid = made.tournament
        for name in NINE:
            await players[name].request(m.TournamentJoin, tournament=tid)
        await players["P1"].request(m.TournamentStart, tournament=tid)

        seeds = {name: i + 1 for i, name in enumerate(NINE)}
        rounds: list[swiss.Round] = []  # the test's own record, from its own results
        met: set[frozenset[str]] = set()
        for number in (1, 2, 3):
            pushes = {name: await push_of(c, m.TournamentTablePush) for name, c in players.items()}
            assert all(p.round == number and not p.bye for p in pushes.values())
            tables: dict[str, list[str]] = {}
            for name, push in sorted(pushes.items(), key=lambda kv: kv[1].seat or 0):
                assert push.room is not None
                tables.setdefault(push.room, []).append(name)
            got = sorted(tables.values())
            if number == 1:  # by hand: seeds top-down, three to a table
                assert got == [["P1", "P2", "P3"], ["P4", "P5", "P6"], ["P7", "P8", "P9"]]
            else:
                # by hand: nobody meets anyone twice (9 players, 3 rounds of 3: possible),
                # and in round 2 the three winners of round 1 meet, the three seconds, the
                # three thirds (score groups whole: none of them met yet)
                pairs = {frozenset((a, b)) for t in got for a in t for b in t if a != b}
                assert not pairs & met, (number, got)
                if number == 2:
                    placed = {p: place for t in rounds[0].tables
                              for p, place in zip(t.players, t.places or (), strict=True)}
                    assert all(len({placed[p] for p in t}) == 1 for t in got), got
            assert got == sorted(list(t.players) for t in
                                 swiss.pair_round(seeds, rounds, 3).tables)
            met |= {frozenset((a, b)) for t in got for a in t for b in t if a != b}
            played = []
            for room, seated in tables.items():
                for name in seated:
                    await players[name].request(m.JoinRoom, room=room, token=pushes[name].token)
                first, second = resign_order(seated, number)
                await players[first].request(m.ResignRequest)
                await players[second].request(m.ResignRequest)
                for name in seated:
                    await players[name].request(m.LeaveRoom)
                record = await server.store.load(room)
                assert record is not None and record.result is not None, seated
                (winner,) = [n for n in seated if n not in (first, second)]
                assert list(record.result["winners"]) == [seated.index(winner)]
                places = tuple(1 if n == winner else 2 if n == second else 3 for n in seated)
                played.append(swiss.Table(tuple(seated), places, None))
            rounds.append(swiss.Round(tuple(played), None))
            t = await until_moved(server, tid, number + 1)

        assert t.status == "finished"
        ended = {name: await push_of(c, m.TournamentEndedPush) for name, c in players.items()}
        final = await players["P5"].request(m.TournamentRequest, tournament=tid)
        assert final.status == "finished" and final.round == 3
        want = swiss.standings(seeds, rounds)
        got_by = {s.name: s for s in final.standings}
        for s in want:
            assert (got_by[s.player].points, got_by[s.player].buchholz,
                    got_by[s.player].games) == (s.points, s.buchholz, 3), s.player
        assert [s.name for s in final.standings] == sorted(
            got_by, key=lambda n: (-got_by[n].points, -got_by[n].buchholz, -got_by[n].score,
                                   seeds[n]))
        # 2 + 1 + 0 points at each of 3 tables for 3 rounds
        assert sum(s.points for s in final.standings) == 27
        for name, push in ended.items():
            assert push.status == "finished" and push.rank == got_by[name].rank
