"""The client's side of friends, presence, blocks and the inbox: the full-screen client in
this process (tests/support/screens.py) against a real server, typing ``follow``, ``friends``,
``presence``, ``block`` and ``inbox``; the notes' bell and ``N new: …`` at sign-in. The 80x24
captures of ``friends`` and ``inbox`` in docs/screens are made by
``python -m tests.support.capture_social`` (the same steps)."""

from __future__ import annotations

import pytest

from client.control.commands import CommandError
from client.control.lobby import Friends, Inbox, Presence, Social, parse_lobby
from tests.support.screens import bells, enter, full_screen, notes_pane, shown, status_line, until

pytestmark = pytest.mark.timeout(60)


def test_the_lobby_reads_the_social_commands():
    assert parse_lobby("follow Anna") == Social("follow", "Anna")
    assert parse_lobby("unblock Biel") == Social("unblock", "Biel")
    assert parse_lobby("friends") == Friends()
    assert parse_lobby("presence OFF") == Presence(False)
    assert parse_lobby("inbox clear") == Inbox(clear=True)
    for wrong in ("follow", "follow a b", "presence maybe", "inbox all", "friends x"):
        with pytest.raises(CommandError):
            parse_lobby(wrong)


async def test_friends_presence_blocks_and_the_inbox_on_the_full_screen(url, tmp_path):
    async with full_screen(url, "Biel", tmp_path / "biel", columns=80, rows=24) as biel:
        await biel.controller.start()
    async with full_screen(url, "Anna", tmp_path / "anna", columns=80, rows=24) as anna:
        await anna.controller.start()
        await enter(anna, "follow Biel")
        assert "you follow Biel" in status_line(anna)
        await enter(anna, "friends")
        pane = notes_pane(anna)
        assert "You follow 1 player(s)" in pane and "Biel" in pane
        assert "offline, last seen just now" in pane
        await enter(anna, "follow Nobody")
        assert "no account of this server is called 'Nobody'" in status_line(anna)
        await enter(anna, "block Biel")
        await enter(anna, "friends")
        assert "Blocked: Biel" in notes_pane(anna)
        await enter(anna, "unblock Biel")
        await enter(anna, "presence off")
        assert "hidden" in status_line(anna)
        await enter(anna, "presence on")

        # Biel signs in: "1 new: Anna follows you", and the bell.
        async with full_screen(url, "Biel", tmp_path / "biel", columns=80,
                               rows=24) as biel:
            await biel.controller.start()
            await until(lambda: "1 new: Anna follows you" in status_line(biel))
            assert bells(biel) == 1
            await enter(biel, "follow Anna")  # Anna hears it at once, with the bell
            await until(lambda: "new: Biel follows you" in status_line(anna))
            assert bells(anna) == 1
            await enter(anna, "friends")
            assert "★ Biel  online, in the lobby" in notes_pane(anna)
            await enter(biel, "inbox")
            assert "Inbox: 1 notification(s), 1 new" in notes_pane(biel)
            assert "• Anna follows you (just now)" in notes_pane(biel)
            await enter(biel, "inbox clear")
            assert "inbox cleared (1 notification(s))" in status_line(biel)
            await enter(biel, "inbox")
            assert "Your inbox is empty." in shown(biel)


async def test_a_guest_is_told_the_social_commands_need_an_account(url, tmp_path):
    async with full_screen(url, "Pau", tmp_path / "pau", guest=True) as pau:
        await pau.controller.start()
        await enter(pau, "friends")
        assert "needs an account" in status_line(pau)
