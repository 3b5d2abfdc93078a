"""Names that print as another's, and registrations without end (server/core/names.py,
server/features/registrations.py, docs/security.md "Names" and "Accounts"): the rules by value, then
over real sockets against real servers on 127.0.0.1 on real SQLite files, and the store's
part on the real SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator

import pytest

from client.local.keys import new_key
from client.net.net import GameClient, ServerError
from server.core.names import clean_name, name_key
from server.ops.admin import ask
from server.store import open_store
from server.store.base import AccountRecord, Refusal, Registration, Store, hash_token
from shared import messages as m
from shared.errors import ProtocolError
from tests.support.accounts import clients
from tests.support.servers import serving
from tests.support.services import store_schema

pytestmark = pytest.mark.timeout(90)

#: Fourteen names that print as "Anna" (or nearly: a space before or after it) and are not.
LOOK_ALIKES = {
    "cyrillic A": "\u0410nna",
    "cyrillic a": "Ann\u0430",
    "greek Alpha": "\u0391nna",
    "zero width space": "An\u200bna",
    "zero width joiner": "An\u200dna",
    "word joiner": "Anna\u2060",
    "soft hyphen": "An\u00adna",
    "byte order mark": "\ufeffAnna",
    "combining grapheme joiner": "An\u034fna",
    "variation selector 16": "Anna\ufe0f",
    "tag characters": "Anna\U000e0041\U000e007f",
    "hangul filler": "Anna\u3164",
    "leading space": " Anna",
    "trailing space": "Anna ",
}


# By value ------------------------------------------------------------------------------------


@pytest.mark.parametrize("look_alike", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_a_look_alike_of_anna_is_refused_or_is_anna(look_alike):
    assert name_key(look_alike) == name_key("Anna")
    try:
        assert clean_name(look_alike) == "Anna"  # the spaces, trimmed
    except ProtocolError as refused:
        assert (refused.code, refused.field) == ("invalid_field", "name")


@pytest.mark.parametrize("same", [("Emma", "Ernrna"), ("paypal", "\u0440\u0430\u0443\u0440\u0430l"),
                                  ("Ａｎｎａ", "anna"), ("straße", "STRASSE"), ("Zoë", "Zoe\u0308"),
                                  ("Joan  Pau", "Joan Pau")])
def test_names_that_print_alike_have_one_key(same):
    assert name_key(same[0]) == name_key(same[1])


@pytest.mark.parametrize("name", ["Anna", "Анна", "Αννα", "山田太郎", "田中さん", "김철수",
                                  "Nguyễn", "Jürgen", "O'Brien", "Anna-Maria", "Joan Pau", "R2D2"])
def test_names_in_one_script_are_names(name):
    assert clean_name(name) == name


@pytest.mark.parametrize("name", ["Anna", "Jose", "Ivan"])
def test_names_that_do_not_print_alike_stay_apart(name):
    assert name_key(name) != name_key({"Anna": "Анна", "Jose": "José", "Ivan": "Иван"}[name])


# Over sockets ----------------------------------------------------------------------------------


async def refused(client: GameClient, codes: set[str], cls: type, **fields: object) -> str:
    with pytest.raises(ServerError) as caught:
        await client.request(cls, **fields)
    assert caught.value.code in codes, caught.value
    return caught.value.code


async def test_no_look_alike_of_an_account_s_name_passes_as_a_guest_or_a_second_account(
        tmp_path):
    async with serving(open_store(tmp_path / "castell.sqlite3")) as (_, url), \
            clients(url) as connect:
        anna_key = new_key()
        await connect("Anna", anna_key)
        other = await connect("Biel")
        for look_alike in LOOK_ALIKES.values():
            # As a guest, then as a new account: never under that name.
            await refused(other, {"name_taken", "invalid_field"}, m.Hello, name=look_alike)
            await refused(other, {"name_taken", "invalid_field"}, m.Hello, name=look_alike,
                          key=new_key())
        # The connection keeps its own name and works; Anna still signs in.
        assert (await other.request(m.ListRooms)).rooms == ()
        again = await connect("whatever", anna_key)
        assert (await again.request(m.Hello, name="x", key=anna_key)).name == "Anna"


async def test_no_look_alike_of_a_guest_in_a_room_comes_in_beside_them(tmp_path):
    async with serving(open_store(tmp_path / "castell.sqlite3")) as (_, url), \
            clients(url) as connect:
        anna = await connect("Anna")  # a guest: no account has the name
        made = await anna.request(m.CreateRoom, name="Nit", seats=4)
        for look_alike in LOOK_ALIKES.values():
            other = await connect("Biel")
            try:
                welcome = await other.request(m.Hello, name=look_alike)
            except ServerError as exc:  # refused as a name at all
                assert exc.code == "invalid_field" and exc.error.field == "name", exc
                continue
            assert welcome.name == "Anna"  # trimmed: then it is Anna's name in the room
            for role in ("player", "spectator"):
                await refused(other, {"name_taken"}, m.JoinRoom, room=made.room, as_=role)


async def test_a_ban_by_name_is_not_evaded_by_a_look_alike(short_dir):
    sock = str(short_dir / "c.admin")
    async with serving(open_store(short_dir / "c.sqlite3"), admin_socket=sock) as (_, url), \
            clients(url) as connect:
        reply = await asyncio.to_thread(ask, sock, "ban", target="Anna", seconds=None,
                                        reason="banned by the host")
        assert reply["ok"], reply
        other = await connect("Biel")
        codes = set()
        for look_alike in ["Anna", "ANNA", "Ａｎｎａ", *LOOK_ALIKES.values()]:
            codes.add(await refused(other, {"banned", "invalid_field"}, m.Hello,
                                    name=look_alike))
            codes.add(await refused(other, {"banned", "invalid_field"}, m.Hello,
                                    name=look_alike, key=new_key()))
        assert codes == {"banned", "invalid_field"}
        assert (await other.request(m.Hello, name="Anneta")).name == "Anneta"


async def test_new_accounts_from_one_address_stop_at_the_limit_and_old_ones_sign_in(tmp_path):
    async with serving(open_store(tmp_path / "castell.sqlite3"), accounts_per_address=5,
                       accounts_per_network=100) as (_, url), clients(url) as connect:
        honest = new_key()
        await connect("Anna", honest)
        made = 1
        registrar = await connect("Registrar")
        with pytest.raises(ServerError) as stopped:
            for n in range(50):  # bounded: the limit is 5
                await registrar.request(m.Hello, name=f"Bot{n}", key=new_key())
                made += 1
        assert (stopped.value.code, made) == ("rate_limited", 5)
        assert "new accounts" in stopped.value.message
        # The accounts that exist still sign in, from the same address; guests still come.
        assert (await registrar.request(m.Hello, name="x", key=honest)).name == "Anna"
        assert (await registrar.request(m.Hello, name="Guest")).account is False
    # Counted in the store: a restart does not reset the count.
    async with serving(open_store(tmp_path / "castell.sqlite3"), accounts_per_address=5,
                       accounts_per_network=100) as (_, url), clients(url) as connect:
        other = await connect("Carme")
        await refused(other, {"rate_limited"}, m.Hello, name="Carme", key=new_key())


async def test_new_accounts_from_one_network_stop_at_its_limit(tmp_path):
    async with serving(open_store(tmp_path / "castell.sqlite3"), accounts_per_address=2,
                       accounts_per_network=3) as (_, url):
        opened = []

        async def register(source: str, name: str) -> str | None:
            client = await GameClient.connect(url, local_addr=(source, 0))
            opened.append(client)
            try:
                await client.hello(name, new_key())
            except ServerError as exc:
                return exc.code
            return None

        try:
            assert await register("127.0.0.1", "Anna") is None
            assert await register("127.0.0.1", "Biel") is None
            assert await register("127.0.0.1", "Carme") == "rate_limited"  # the address's 2
            assert await register("127.0.0.2", "Dolors") is None  # another address: 3
            assert await register("127.0.0.3", "Eudald") == "rate_limited"  # the /24's 3
        finally:
            for client in opened:
                await client.close()


async def test_an_unused_account_gives_up_its_name_after_the_time(tmp_path):
    path = tmp_path / "castell.sqlite3"
    old_key = new_key()
    async with serving(open_store(path)) as (_, url), clients(url) as connect:
        await connect("Anna", old_key)
        await connect("Biel", new_key())
    # Anna was last seen 31 days ago, Biel yesterday; neither finished a game.
    conn = sqlite3.connect(path)
    with conn:
        now = time.time()
        conn.execute("UPDATE accounts SET last_seen = ? WHERE name = 'Anna'", (now - 31 * 86400,))
        conn.execute("UPDATE accounts SET last_seen = ? WHERE name = 'Biel'", (now - 86400,))
    conn.close()
    async with serving(open_store(path), account_release_days=30) as (_, url), \
            clients(url) as connect:
        other = await connect("Carme")
        await refused(other, {"name_taken"}, m.Hello, name="Biel", key=new_key())
        welcome = await other.request(m.Hello, name="Anna", key=new_key())  # released
        assert (welcome.account, welcome.name) == (True, "Anna")
        # The old key's account is gone: it would register anew, and the name is taken.
        await refused(other, {"name_taken"}, m.Hello, name="Anna", key=old_key)


# The store's part, on both backends -------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
async def store(request, tmp_path) -> AsyncIterator[Store]:
    if request.param == "sqlite":
        async with open_store(tmp_path / "castell.sqlite3") as made:
            yield made
        return
    async with store_schema() as url, open_store(url) as made:
        yield made


def account(name: str, at: float) -> AccountRecord:
    return AccountRecord("a" + name.lower(), name, name_key(name), hash_token(name * 20), at)


def limits(address: str, now: float, release_before: float | None = None) -> Registration:
    return Registration(address, address.rsplit(".", 1)[0] + ".0/24", 2, 3, now - 3600,
                        release_before)


async def test_the_store_counts_registrations_and_releases_unused_names(store):
    now = time.time()
    assert await store.sign_in(account("Anna", now), limits("10.0.0.1", now)) is not None
    assert await store.sign_in(account("Biel", now), limits("10.0.0.1", now)) is not None
    assert await store.sign_in(account("Carme", now), limits("10.0.0.1", now)) \
        is Refusal.TOO_MANY
    assert await store.sign_in(account("Dolors", now), limits("10.0.0.2", now)) is not None
    assert await store.sign_in(account("Eudald", now), limits("10.0.0.3", now)) \
        is Refusal.TOO_MANY
    # An hour later, the network registers again; a known key always signs in.
    later = now + 3601
    assert await store.sign_in(account("Anna", later), limits("10.0.0.1", later)) \
        == account("Anna", now)
    assert await store.sign_in(account("Eudald", later), limits("10.0.0.3", later)) \
        is not None
    # Anna (last seen at `later`) keeps her name until release_before passes it.
    lookalike = AccountRecord("a2", "Anna", name_key("Anna"), hash_token("z" * 40), later + 1)
    assert await store.sign_in(lookalike, limits("10.0.1.1", later + 1, later)) is None
    got = await store.sign_in(lookalike, limits("10.0.1.1", later + 1, later + 0.5))
    assert got == lookalike
    assert await store.account_named(name_key("ANNA")) == lookalike


async def test_an_account_that_finished_a_game_keeps_its_name_for_good(store):
    from server.store.base import RoomRecord

    long_ago = time.time() - 400 * 86400
    anna = await store.sign_in(account("Anna", long_ago))
    biel = await store.sign_in(account("Biel", long_ago))
    await store.create_room(RoomRecord("r1", "Nit", 2, "normal", None, False, None, seed=7))
    await store.claim_seat("r1", 0, anna.account)
    await store.finish("r1", {"winners": [0]}, long_ago)
    now = time.time()
    for name in ("Anna", "Biel"):  # both unseen for 400 days; only Biel never finished
        wanted = AccountRecord("n" + name, name, name_key(name), hash_token("n" * 40 + name),
                               now)
        got = await store.sign_in(wanted, limits("10.0.0.9", now, now - 30 * 86400))
        assert got == (None if name == "Anna" else wanted)
    assert await store.account_named(name_key("Anna")) == anna
    assert await store.account_named(name_key("Biel")) != biel
