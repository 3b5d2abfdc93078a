"""Challenges' requests: ``challenge``, ``accept``, ``decline`` and ``challenge_cancel``
(server.features.challenges)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.edge.dispatch import reply
from shared import messages as m

if TYPE_CHECKING:
    from server.features.challenges import Challenges
    from server.runtime.connection import Connection


class ChallengeHandlers:
    """A signed-in player's challenges, made and answered."""

    def __init__(self, challenges: Challenges) -> None:
        self.challenges = challenges

    async def challenge(self, conn: Connection, msg: m.ChallengeRequest) -> None:
        reply(conn, await self.challenges.challenge(conn, msg))

    async def accept(self, conn: Connection, msg: m.AcceptChallenge) -> None:
        accepted = await self.challenges.accept(conn, msg.challenge)
        if accepted is not None:  # the last acceptance: the game is made (and told) first
            await self.challenges.make(accepted)
        reply(conn, m.Ok(re=msg.id))

    async def decline(self, conn: Connection, msg: m.DeclineChallenge) -> None:
        await self.challenges.decline(conn, msg.challenge)
        reply(conn, m.Ok(re=msg.id))

    async def cancel(self, conn: Connection, msg: m.CancelChallenge) -> None:
        await self.challenges.cancel(conn, msg.challenge)
        reply(conn, m.Ok(re=msg.id))
