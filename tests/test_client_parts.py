"""The client's pure parts: server addresses, TLS contexts, the seat file, lobby lines, hints."""

from __future__ import annotations

import json
import ssl
import stat

import attrs
import pytest

from client.control.commands import CommandError, parse
from client.control.hints import hint_lines
from client.control.lobby import (
    AddBots,
    CreateRoom,
    JoinRoom,
    LeaveRoom,
    ListRooms,
    Resume,
    StartGame,
    parse_lobby,
    parse_room,
    parse_timer,
)
from client.local.seats import HeldSeat, SeatStore
from client.net.address import AddressError, server_url
from client.net.tls import client_ssl_context
from shared.actions import Build, Move, Special, Train
from shared.engine import apply, legal_actions
from shared.state import Festival, GameState
from shared.tower import festival_score
from shared.view import make_view
from tests.support.games import game, on_turn, random_game, sometimes_tallest, with_player
from tests.support.rooms import room_info

# Addresses -------------------------------------------------------------------------------


@pytest.mark.parametrize(("typed", "url"), [
    ("192.168.1.5", "ws://192.168.1.5:8765"),
    ("castell.example:9000", "ws://castell.example:9000"),
    ("ws://127.0.0.1:8765", "ws://127.0.0.1:8765"),
    ("wss://castell.example", "wss://castell.example"),
    ("https://castell.example:8443/", "wss://castell.example:8443"),
    ("[::1]:9000", "ws://[::1]:9000"),
])
def test_typed_addresses_become_websocket_urls(typed, url):
    assert server_url(typed) == url


@pytest.mark.parametrize("typed", ["", "ftp://host", "ws://:80", "host:notaport"])
def test_addresses_that_name_no_server_are_refused(typed):
    with pytest.raises(AddressError):
        server_url(typed)


# TLS -------------------------------------------------------------------------------------


def test_plain_websockets_need_no_tls_context():
    assert client_ssl_context("ws://127.0.0.1:8765") is None


def test_wss_verifies_the_server_unless_told_not_to_and_then_says_so():
    said: list[str] = []
    strict = client_ssl_context("wss://castell.example", warn=said.append)
    assert strict is not None and strict.verify_mode == ssl.CERT_REQUIRED
    assert strict.check_hostname and not said
    loose = client_ssl_context("wss://castell.example", insecure=True, warn=said.append)
    assert loose is not None and loose.verify_mode == ssl.CERT_NONE
    assert not loose.check_hostname
    assert len(said) == 1 and "NOT checked" in said[0]


def test_a_missing_cafile_is_an_error_not_a_silent_fallback(tmp_path):
    with pytest.raises(OSError):
        client_ssl_context("wss://castell.example", cafile=str(tmp_path / "none.pem"))
    with pytest.raises(ValueError):
        client_ssl_context("http://castell.example")


# The seat file -----------------------------------------------------------------------------


def test_seats_are_kept_per_server_privately_and_forgotten(tmp_path):
    store = SeatStore(tmp_path / "state")
    a = HeldSeat("ws://h:1", "r1", "tok-1", "Friday night", 2)
    b = HeldSeat("ws://h:1", "r2", "tok-2", "Saturday", 0)
    other = HeldSeat("ws://elsewhere:1", "r1", "tok-3", "Elsewhere", 1)
    for seat in (a, b, other):
        store.remember(seat)
    assert store.held("ws://h:1") == [b, a]  # the latest first
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.folder.stat().st_mode) == 0o700
    store.remember(a)  # remembered again: now the latest
    assert store.held("ws://h:1") == [a, b]
    store.forget("ws://h:1", "r1")
    store.forget("ws://h:1", "r2")
    assert store.held("ws://h:1") == []
    assert SeatStore(tmp_path / "state").held("ws://elsewhere:1") == [other]
    assert not list(store.folder.glob(".seats-*"))  # no temporary file left behind


def test_friends_on_one_account_each_find_their_own_seat_of_one_room(tmp_path):
    store = SeatStore(tmp_path)
    anna = HeldSeat("ws://h:1", "r1", "tok-a", "Friday night", 0, "Anna")
    biel = HeldSeat("ws://h:1", "r1", "tok-b", "Friday night", 1, "Biel")
    store.remember(anna)
    store.remember(biel)  # Biel's seat does not replace Anna's
    assert store.held("ws://h:1", "Anna") == [anna]
    assert store.held("ws://h:1", "Biel") == [biel]
    assert store.held("ws://h:1", "Carla") == []  # a spectator is offered no one's seat
    assert store.held("ws://h:1") == [biel, anna]
    store.forget("ws://h:1", "r1", 1)
    assert store.held("ws://h:1") == [anna]
    store.forget("ws://h:1", "r1")  # every seat of the room
    assert store.held("ws://h:1") == []


def test_a_seat_file_of_an_older_client_is_still_read(tmp_path):
    store = SeatStore(tmp_path)
    store.path.write_text('{"ws://h:1": {"r1": {"token": "t", "name": "Old", "seat": 2}}}')
    old = HeldSeat("ws://h:1", "r1", "t", "Old", 2)
    assert store.held("ws://h:1", "Anna") == [old]  # no name kept: offered as before
    store.remember(HeldSeat("ws://h:1", "r1", "t", "Old", 2, "Anna"))  # rewritten in the new form
    assert store.held("ws://h:1") == [HeldSeat("ws://h:1", "r1", "t", "Old", 2, "Anna")]


def test_a_damaged_seat_file_is_read_as_empty_and_then_replaced(tmp_path):
    store = SeatStore(tmp_path)
    store.path.write_text("{not json")
    assert store.held("ws://h:1") == []
    store.remember(HeldSeat("ws://h:1", "r1", "t", "n", 0))
    assert [s.room for s in store.held("ws://h:1")] == ["r1"]


# Lobby and room lines ---------------------------------------------------------------------


def test_lobby_lines():
    assert parse_lobby("list") == ListRooms()
    assert parse_lobby("create") == CreateRoom()
    assert parse_lobby("create Friday night seats=3 timer=2m private advanced") == CreateRoom(
        "Friday night", 3, "advanced", 120, True)
    assert parse_lobby("join 2") == JoinRoom("2")
    assert parse_lobby("watch ABC123") == JoinRoom("ABC123", spectate=True)
    assert parse_lobby("resume") == Resume()
    assert parse_lobby("resume 2") == Resume(2)


@pytest.mark.parametrize("line", ["create seats=3", "create T seats=5", "create T timer=5",
                                  "create T colour=red", "join", "chat hi", "dance",
                                  "create " + "x" * 41])
def test_lobby_lines_that_cannot_work_say_why(line):
    with pytest.raises(CommandError) as info:
        parse_lobby(line)
    assert info.value.message


def test_room_lines():
    assert parse_room("bot") == AddBots("normal", 1)
    assert parse_room("bot r") == AddBots("random", 1)
    assert parse_room("fill random") == AddBots("random", None)
    assert parse_room("start") == StartGame()
    assert parse_room("leave") == LeaveRoom()
    with pytest.raises(CommandError):
        parse_room("bot clever")
    with pytest.raises(CommandError, match="for the lobby and you are in a room: `leave` it"):
        parse_room("join B62DWM")
    with pytest.raises(CommandError, match="did you mean `start`"):
        parse_room("strat")
    with pytest.raises(CommandError, match="did you mean `create`"):
        parse_lobby("craete Friday")


def test_turn_timers():
    assert parse_timer("none") is None
    assert parse_timer("90") == 90
    assert parse_timer("90s") == 90
    assert parse_timer("3m") == 180
    with pytest.raises(CommandError):
        parse_timer("9")


# Hints ---------------------------------------------------------------------------------------

def _commands(line: str) -> list[str]:
    return line.split("`")[1::2]


def _played(seed: int, rounds: int) -> GameState:
    """A seeded 3-seat game played by random moves (and tall towers) until the start of a turn
    in round ``rounds``."""
    for step in random_game(3, seed=seed, choose=sometimes_tallest(0.3)):
        if step.state.round >= rounds and not step.state.done:
            return step.state
    raise AssertionError(f"the game ended before round {rounds}")


@pytest.mark.parametrize(("seed", "rounds"), [(3, 8), (8, 6), (11, 6), (12, 8)])
def test_every_command_a_hint_gives_is_accepted_by_the_engine(seed, rounds):
    # seeds whose position offers festival towers and performances to hint at
    state = _played(seed, rounds)
    room = room_info(state)
    seat = state.turn
    lines = hint_lines(make_view(room, state), seat)
    assert lines[0] == "you can:"
    checked = 0
    for line in lines:
        commands = _commands(line)
        if not commands or not commands[0].startswith("build"):
            continue
        tower = parse(commands[0])
        assert isinstance(tower, Build)
        built, _ = apply(state, seat, tower)  # a legal tower of the player's team
        checked += 1
        if "scores" in line:  # a festival's best tower: the score said is the score got
            size = int(lines[lines.index(line) - 1].split("size ")[1].split()[0])
            assert festival_score(tower.levels, size) == int(line.split("scores ")[1].split()[0])
        for command in commands[1:]:  # then the perform: legal once the tower stands
            perform = parse(command)
            assert isinstance(perform, Special | Train) and perform.effect == "perform"
            assert perform in legal_actions(built, seat)
            apply(built, seat, perform)
    # the other players are told it is not their turn
    other = (seat + 1) % 3
    assert "turn" in hint_lines(make_view(room, state), other)[0]
    assert checked >= 1


def test_a_round_without_a_festival_hints_at_the_next_and_what_it_takes():
    state = game(3, seed=4)
    room = room_info(state)
    lines = hint_lines(make_view(room, state), state.turn)
    first = next(f for f in state.festivals if not f.done)
    i = lines.index(f"no festival this round; the next is in round {first.round}: {first.town} "
                    f"({first.region}), size {first.size}")
    # a starting team of 7 has no skill for a 4th level yet
    article = "an" if first.size == 8 else "a"
    assert lines[i + 1] == f"  no tower of your team can enter yet (it needs 4 levels and " \
                           f"{article} {first.size})"


def test_lobby_lines_count_in_the_singular_and_say_what_ranks_a_player():
    from client.control.lobby import count, leaderboard_lines

    assert count(1, "rated game") == "1 rated game" and count(3, "game") == "3 games"
    assert "5 rated games against 3 different opponents" in leaderboard_lines(())[0]


def test_seats_are_found_under_every_spelling_of_the_servers_address(tmp_path):
    from client.local.seats import same_server, server_key

    # a file written before addresses were normalised: keyed by the address as typed
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "seats.json").write_text(json.dumps({
        "ws://LocalHost:18765/": {"r1": {"room": "r1", "seat": 1, "token": "t",
                                         "name": "Friday night"}}}))
    store = SeatStore(folder)
    for spelling in ("ws://localhost:18765", "localhost:18765", "127.0.0.1:18765",
                     "ws://127.0.0.1:18765/"):
        assert [(h.room, h.seat) for h in store.held(spelling, "Anna")] == [("r1", 1)]
    assert store.held("127.0.0.1:18766") == [] and store.held("wss://127.0.0.1:18765") == []
    assert server_key("LocalHost:18765") == "ws://localhost:18765"
    assert not same_server("ws://10.0.0.1:18765", "ws://127.0.0.1:18765")

    # remembered again under another spelling: still one entry, under the new one
    store.remember(HeldSeat("ws://127.0.0.1:18765", "r1", "t", "Friday night", 1, "Anna"))
    assert list(json.loads(store.path.read_text())) == ["ws://127.0.0.1:18765"]
    assert len(store.held("localhost:18765")) == 1
    store.forget("ws://localhost:18765", "r1", 1)
    assert store.held("127.0.0.1:18765") == [] and json.loads(store.path.read_text()) == {}


def _round_ten_in_ebr(done: tuple[str, ...] = ()) -> GameState:
    """Round 10, seat 0 to act with its pawn in ebr; the last festival is in Figueres (gir),
    two steps away: `move bcn` then a special move (ebr and gir share no border)."""
    state = game(3, seed=2)
    festivals = tuple(f for f in state.festivals if f.round < 10)
    figueres = Festival(10, "gir", "Figueres", "II", 6)
    state = attrs.evolve(state, festivals=(*(attrs.evolve(f, done=True) for f in festivals),
                                           figueres))
    state = with_player(state, 0, region="ebr", tokens=2)
    return attrs.evolve(on_turn(state, 0, round=10), done=done)


def test_a_hint_reaches_a_festival_by_a_move_then_a_special_move():
    state = _round_ten_in_ebr()
    lines = hint_lines(make_view(room_info(state), state), 0)
    line = next(line for line in lines if "Figueres" in line)
    assert "out of your pawn's reach" not in line
    route = [parse(c) for c in _commands(line)]
    assert [type(a) for a in route] == [Move, Special]  # a move, then a special move
    for action in route:  # each step legal after the one before, and the pawn ends in gir
        assert action in legal_actions(state, 0)
        state, _ = apply(state, 0, action)
    assert state.players[0].region == "gir"


def test_a_hint_reaches_with_a_special_move_alone_once_the_move_is_spent():
    state = _round_ten_in_ebr(done=("move",))
    state = with_player(state, 0, region="bcn")
    line = next(line for line in hint_lines(make_view(room_info(state), state), 0)
                if "Figueres" in line)
    assert line.endswith("— get there with `special move gir`")
    # without a token nor the move, the festival is out of reach
    state = with_player(state, 0, region="ebr", tokens=0)
    line = next(line for line in hint_lines(make_view(room_info(state), state), 0)
                if "Figueres" in line)
    assert line.endswith("— out of your pawn's reach this turn")


def test_a_game_the_host_closed_is_listed_as_closed_never_as_lost():
    from client.control.lobby import game_lines
    from shared.messages import GameEntry

    closed = GameEntry(room="r1", name="Friday", status="closed", seat=0, turn=None,
                       your_turn=False, round=None, players=("Anna", "Biel"),
                       finished_at=5.0)
    (line,) = game_lines((closed,))
    assert "closed by the host" in line and "lost" not in line and "round" not in line
