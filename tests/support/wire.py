"""Seated clients playing a game over a real websocket, as players do: each action chosen
among the legal actions the actor computes from its own view, sent, acknowledged, and seen by
every client before the next."""

from __future__ import annotations

import random
from collections.abc import Sequence

from client.net.net import GameClient
from shared import engine
from shared.actions import EndTurn
from shared.view import state_from_view


async def caught_up(client: GameClient, version: int, timeout: float = 10.0) -> None:
    """Wait until ``client`` has seen the room at ``version`` (or later); a client that has
    just joined may not have read its first view yet."""
    if client.state is None or client.state.version < version:
        await client.wait_state(lambda p: p.version >= version, timeout=timeout)


async def play_legal(clients: Sequence[GameClient | None], rng: random.Random, *,
                     actions: int | None = None, turns: int | None = None,
                     end_bias: float = 0.0, timeout: float = 10.0) -> int:
    """The seated clients (``clients[i]`` holds seat i; None for a bot's seat) play random
    legal actions until the game is over, or ``actions`` actions, or ``turns`` whole turns,
    are played (a bot's turns are waited for, and not counted).

    ``end_bias`` is the chance of ending the turn whenever one may (so that every seat gets
    to play); ``timeout`` bounds each wait for a push. Returns how many actions were played.
    """
    seated = [c for c in clients if c is not None]
    lead = seated[0]
    played = ended = 0
    while (actions is None or played < actions) and (turns is None or ended < turns):
        assert lead.state is not None
        if lead.state.view["status"] != "playing":
            break
        seat = lead.state.view["turn"]
        actor = clients[seat]
        if actor is None:  # a bot's turn: it plays on the server
            await lead.wait_state(lambda p, v=lead.state.version: p.version > v, timeout)
            continue
        await caught_up(actor, lead.state.version, timeout)
        assert actor.state is not None
        legal = engine.legal_actions(state_from_view(actor.state.view), seat)
        assert legal, "it is the actor's turn, so there is at least end_turn"
        ends = [a for a in legal if isinstance(a, EndTurn)]
        ending = bool(end_bias and ends) and rng.random() < end_bias
        action = ends[0] if ending else rng.choice(legal)
        version = await actor.act(action)
        for client in seated:
            await caught_up(client, version, timeout)
        played += 1
        ended += isinstance(action, EndTurn)
    return played
