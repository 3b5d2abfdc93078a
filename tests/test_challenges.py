"""Challenges by name over real sockets (server/features/challenges.py, docs/protocol.md
``challenge``): accepted (the game made, everyone seated, bots in the free seats, started),
declined, expired (on a virtual clock), cancelled; the limits (guests refused, the hourly
cap); a pending challenge kept across a restart; and one crossing two cluster nodes.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import pytest

from client.net.net import GameClient, ServerError
from server.store import open_store
from shared import messages as m
from tests.support.servers import run_out, serving, virtual_time
from tests.support.services import REDIS_URL

pytestmark = pytest.mark.timeout(60)


async def player(url: str, name: str, key: str | None = "") -> GameClient:
    client = await GameClient.connect(url)
    await client.hello(name, secrets.token_urlsafe(48) if key == "" else key)
    return client


async def pushed(client: GameClient, cls: type, timeout: float = 10.0):
    """The next push of type ``cls`` (others are let by)."""
    async with asyncio.timeout(timeout):
        while True:
            push = await client.pushes.get()
            if isinstance(push, cls):
                return push


async def ended_of(client: GameClient, challenge: str) -> m.ChallengeEndedPush:
    """The ``challenge_ended`` push about ``challenge`` (others are let by)."""
    while True:
        push = await pushed(client, m.ChallengeEndedPush)
        if push.challenge == challenge:
            return push


async def refused(client: GameClient, cls: type, **fields) -> str:
    with pytest.raises(ServerError) as caught:
        await client.request(cls, **fields)
    return caught.value.code


async def take_seat(client: GameClient, matched: m.MatchedPush) -> dict:
    joined = await client.request(m.JoinRoom, room=matched.room, token=matched.token)
    assert joined.seat == matched.seat
    push = await client.wait_state(lambda p: p.room == matched.room)
    return push.view


async def test_an_accepted_challenge_seats_both_players_and_a_bot_and_starts(tmp_path: Path):
    async with serving(open_store(tmp_path / "c.sqlite3")) as (_, url):
        anna, biel = await player(url, "Anna"), await player(url, "Biel")
        sent = await anna.request(m.ChallengeRequest, to=["biel"], seats=3)
        told = await pushed(biel, m.ChallengePush)
        assert (told.challenge, told.from_, told.to, told.seats) == \
            (sent.challenge, "Anna", ("Biel",), 3)
        await biel.request(m.AcceptChallenge, challenge=sent.challenge)
        got = [await pushed(c, m.MatchedPush) for c in (anna, biel)]
        assert got[0].room == got[1].room and (got[0].seat, got[1].seat) == (0, 1)
        ended = await pushed(anna, m.ChallengeEndedPush)
        assert (ended.why, ended.room) == ("accepted", got[0].room)
        views = [await take_seat(c, p) for c, p in ((anna, got[0]), (biel, got[1]))]
        assert views[1]["status"] == "playing"
        players = views[1]["players"]
        assert [p["name"] for p in players[:2]] == ["Anna", "Biel"]
        assert players[2]["bot"] is not None
        # Accepted once: it is no longer open.
        assert await refused(biel, m.AcceptChallenge, challenge=sent.challenge) \
            == "already_in_room"


async def test_declined_cancelled_limited_and_refused_to_guests():
    async with serving(challenges_per_hour=2) as (_, url):
        anna, biel = await player(url, "Anna"), await player(url, "Biel")
        guest = await player(url, "Gil", key=None)
        assert await refused(guest, m.ChallengeRequest, to=["Anna"]) == "not_signed_in"
        assert await refused(anna, m.ChallengeRequest, to=["Nobody"]) == "not_found"
        assert await refused(anna, m.ChallengeRequest, to=["Anna"]) == "not_found"
        assert await refused(anna, m.ChallengeRequest, to=["Biel"], seats=3,
                             rated=True) == "rated_room"
        first = await anna.request(m.ChallengeRequest, to=["Biel"])
        await biel.request(m.DeclineChallenge, challenge=first.challenge)
        ended = await pushed(anna, m.ChallengeEndedPush)
        assert (ended.challenge, ended.why, ended.by) == (first.challenge, "declined", "Biel")
        assert await refused(biel, m.AcceptChallenge, challenge=first.challenge) \
            == "challenge_not_found"
        second = await anna.request(m.ChallengeRequest, to=["Biel"])
        # Only its challenger cancels it.
        assert await refused(biel, m.CancelChallenge, challenge=second.challenge) \
            == "challenge_not_found"
        await anna.request(m.CancelChallenge, challenge=second.challenge)
        assert (await ended_of(biel, second.challenge)).why == "cancelled"
        # Two in the hour: the third is refused, though both ended.
        assert await refused(anna, m.ChallengeRequest, to=["Biel"]) == "rate_limited"


async def test_a_challenge_expires_on_the_servers_clock():
    async with serving() as (server, url):
        clock = virtual_time(server)
        anna, biel = await player(url, "Anna"), await player(url, "Biel")
        sent = await anna.request(m.ChallengeRequest, to=["Biel"])
        assert sent.expires == pytest.approx(clock.now + 600)
        day = await anna.request(m.ChallengeRequest, to=["Biel"], turn_seconds=86_400)
        assert day.expires == pytest.approx(clock.now + 86_400)
        assert await run_out(clock) == pytest.approx(sent.expires)
        for client in (anna, biel):
            ended = await pushed(client, m.ChallengeEndedPush)
            assert (ended.challenge, ended.why) == (sent.challenge, "expired")
        assert await refused(biel, m.AcceptChallenge, challenge=sent.challenge) \
            == "challenge_not_found"
        await biel.request(m.AcceptChallenge, challenge=day.challenge)  # still open
        assert (await pushed(biel, m.MatchedPush)).seat == 1


async def test_a_pending_challenge_is_kept_across_a_restart(tmp_path: Path):
    db = tmp_path / "c.sqlite3"
    anna_key, biel_key = secrets.token_urlsafe(48), secrets.token_urlsafe(48)
    async with serving(open_store(db)) as (_, url):
        anna = await player(url, "Anna", anna_key)
        await player(url, "Biel", biel_key)
        sent = await anna.request(m.ChallengeRequest, to=["Biel"])
    async with serving(open_store(db)) as (_, url):
        anna, biel = await player(url, "Anna", anna_key), await player(url, "Biel", biel_key)
        await biel.request(m.AcceptChallenge, challenge=sent.challenge)
        got = [await pushed(c, m.MatchedPush) for c in (anna, biel)]
        assert got[0].room == got[1].room


async def test_a_challenge_crosses_cluster_nodes(db, prefix):
    from server.cluster.node import ClusterConfig
    from server.store.postgres import PostgresStore

    def node():
        return serving(PostgresStore(db, shared=True, pool_size=2),
                       cluster=ClusterConfig(REDIS_URL, prefix=prefix, lease_ms=1500))

    async with node() as (_, a_url), node() as (_, b_url):
        anna, biel = await player(a_url, "Anna"), await player(b_url, "Biel")
        sent = await anna.request(m.ChallengeRequest, to=["Biel"])
        told = await pushed(biel, m.ChallengePush)
        assert told.challenge == sent.challenge
        await biel.request(m.AcceptChallenge, challenge=sent.challenge)
        mine, theirs = await pushed(anna, m.MatchedPush), await pushed(biel, m.MatchedPush)
        assert mine.room == theirs.room
        assert mine.url is not None and mine.url != a_url  # the room is on Biel's node
        await anna.close()
        anna = await player(mine.url, "x", key=None)  # the token is enough
        view = await take_seat(anna, mine)
        assert [p["name"] for p in view["players"]] == ["Anna", "Biel"]


async def test_a_challenge_outlives_the_node_it_was_made_on(db, prefix):
    """Two node processes: Anna challenges Biel (on the other node), then Anna's node is
    killed (SIGKILL); Biel accepts on his; Anna, back on Biel's node, finds the game among
    her games and takes her seat by her account."""
    from tests.support.servers import ServerProcess

    args = ("--db", db, "--redis", REDIS_URL, "--redis-prefix", prefix, "--lease-ms", "1500",
            "--bot-delay", "0", "--log-level", "warning")
    a, b = await asyncio.gather(*(asyncio.to_thread(ServerProcess, *args) for _ in "ab"))
    with a, b:
        anna_key = secrets.token_urlsafe(48)
        anna, biel = await player(a.url, "Anna", anna_key), await player(b.url, "Biel")
        sent = await anna.request(m.ChallengeRequest, to=["Biel"])
        assert (await pushed(biel, m.ChallengePush)).challenge == sent.challenge
        await asyncio.to_thread(a.kill)
        await biel.request(m.AcceptChallenge, challenge=sent.challenge)
        matched = await pushed(biel, m.MatchedPush)
        anna = await player(b.url, "Anna", anna_key)
        games = (await anna.request(m.MyGames, status="playing")).entries
        assert [(g.room, g.seat) for g in games] == [(matched.room, 0)]
        await anna.request(m.JoinRoom, room=matched.room)
        await take_seat(biel, matched)
        view = (await anna.wait_state(lambda p: p.room == matched.room and all(
            q["connected"] for q in p.view["players"]))).view
        assert view["status"] == "playing"
        assert [p["name"] for p in view["players"]] == ["Anna", "Biel"]


async def test_a_challenge_waits_in_the_inbox_and_a_blocked_challenger_is_nobody(
        tmp_path: Path):
    async with serving(open_store(tmp_path / "c.sqlite3")) as (_, url):
        anna, biel, carme = [await player(url, n) for n in ("Anna", "Biel", "Carme")]
        sent = await anna.request(m.ChallengeRequest, to=["Biel"], seats=2)
        await pushed(biel, m.ChallengePush)
        # the challenge is kept in Biel's inbox, for when he was away
        listed = await biel.request(m.InboxRequest)
        kept = [n for n in listed.notes if n.kind == "challenge"]
        assert len(kept) == 1 and kept[0].ref == sent.challenge
        assert "Anna challenges you" in kept[0].text
        # Biel blocks Carme: her challenge is refused as if he were nobody, and he hears none
        await biel.request(m.Block, name="Carme")
        assert await refused(carme, m.ChallengeRequest, to=["Biel"], seats=2) == "not_found"
        await biel.request(m.InboxRequest)  # (a round trip: whatever was pushed has come)
        while not biel.pushes.empty():
            assert not isinstance(biel.pushes.get_nowait(), m.ChallengePush)
