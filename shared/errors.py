"""The one error tree of Castell.

Every refusal the project makes is a :class:`CastellError`. Each carries a stable snake_case
``code`` (what goes on the wire) and a ``message`` written for a person. Two branches:

* :class:`RuleError` — the game's rules refused an action (``docs/rules.md``). On the wire it
  becomes an ``error`` whose ``code`` is :attr:`RuleError.wire_code` (``illegal_action`` for
  most rules) and whose ``rule`` is the rule's own code (``not_adjacent``, ...).
* :class:`ProtocolError` — a message was malformed (``docs/protocol.md``). Nothing that
  arrives from a socket raises anything else while it is decoded.
"""

from __future__ import annotations


class CastellError(Exception):
    """Root of every error Castell raises on purpose."""

    code: str = "internal_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class RuleError(CastellError):
    """Raised when the rules refuse an action; ``code`` names the rule that refused it."""

    code = "illegal_action"
    #: The error code sent on the wire; ``code`` then travels as its ``rule``.
    wire_code = "illegal_action"


class NotYourTurn(RuleError):
    """Raised when a seat acts while it is another seat's turn."""

    code = "not_your_turn"
    wire_code = "not_your_turn"


class GameOver(RuleError):
    """Raised for any action once the game has ended (after round 10)."""

    code = "game_over"
    wire_code = "game_over"


class ProtocolError(CastellError):
    """Raised when a message cannot be decoded or fails validation.

    ``code`` is one of ``bad_message``, ``unknown_type`` or ``invalid_field``; ``field`` names
    the offending field when one is to blame (``levels[1][0]`` for a nested one); ``re`` is the
    message's ``id`` when a valid one could be read, so that the reply can carry it.
    """

    code = "bad_message"

    def __init__(
        self,
        message: str,
        *,
        code: str = "bad_message",
        field: str | None = None,
        re: int | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.field = field
        self.re = re


class RoomNotFound(CastellError):
    """Raised when no room has the id or private code asked for."""

    code = "room_not_found"


class RoomMoved(CastellError):
    """Raised when the room asked for is served by another node of a cluster of servers.

    ``url`` is that node's address (``ws://host:port``), where the same request will be
    answered; None when the room is between two nodes (its server stopped and another is
    taking it over): ask again in a moment.
    """

    code = "moved"

    def __init__(self, message: str, *, url: str | None) -> None:
        super().__init__(message)
        self.url = url


#: Every error code that goes on the wire, with its meaning (``docs/protocol.md``).
#: Codes may be added, never renamed.
ERROR_CODES: dict[str, str] = {
    "bad_message": "the frame is not a MessagePack map with a string `type` (or exceeds a limit)",
    "unknown_type": "`type` names no message a client may send",
    "invalid_field": "a field is missing, unknown, of the wrong type or out of range",
    "hello_first": "a request came before `hello`",
    "already_in_room": "the connection is already in a room",
    "not_in_room": "the request needs a room and the connection is in none",
    "room_not_found": "no room has that id or code",
    "room_full": "every seat of the room is taken (as a spectator: it has all the spectators "
                 "it may)",
    "not_creator": "only the room's creator may do that",
    "seats_not_full": "the game cannot start before every seat is taken",
    "already_started": "the room's game has already started",
    "game_not_started": "the room's game has not started yet",
    "not_a_player": "spectators cannot do that",
    "not_your_turn": "it is another seat's turn",
    "illegal_action": "the rules refuse the action; `rule` names the rule",
    "game_over": "the game has ended",
    "bad_token": "the seat token matches no seat of that room",
    "rate_limited": "too many messages; slow down",
    "internal_error": "the server failed while handling the request",
    "moved": "the room is served by another node of the cluster; `url` says which",
    "name_taken": "someone in the room (a player or a spectator) already has that name, "
                  "in any case; or an account of the server has it",
    "not_signed_in": "the request needs an account: say `hello` with a `key`",
    "not_finished": "the room's game is not over yet",
    "rated_room": "a rated room seats signed-in accounts only: no bot may sit in it",
    "not_rated": "the server keeps no ratings (it runs without a store)",
    "not_found": "no account of the server has that name",
}
# The host's moderation and maintenance (docs/operations.md).
ERROR_CODES["banned"] = "the host barred that name from this server"
ERROR_CODES["muted"] = "the host muted this player: chat lines are not passed on"
ERROR_CODES["room_closed"] = "the host closed that room: it is played no more"
ERROR_CODES["kicked"] = "the host removed you from that room, for a while or for good"
ERROR_CODES["draining"] = "the server is about to stop for maintenance and makes no new rooms"
# Resigning (docs/rules.md §10).
ERROR_CODES["resigned"] = "you resigned this game: you play no more in it"
# Swiss tournaments (server.features.tournaments).
ERROR_CODES["not_organiser"] = "only the host's organisers create tournaments here, and only " \
                               "its creator starts one"
ERROR_CODES["bad_tournament"] = "the tournament asked for cannot be: its name, rounds or " \
                                "seats, or too few players to start it"
ERROR_CODES["no_tournament"] = "no tournament of the server has that id"
ERROR_CODES["tournament_busy"] = "the tournament changed meanwhile: ask again"
ERROR_CODES["tournament_started"] = "the tournament has started (or ended): it is joined " \
                                    "and started no more"
ERROR_CODES["not_entered"] = "you are not a player of that tournament"

# Challenges by name (docs/protocol.md, `challenge`).
ERROR_CODES["challenge_not_found"] = "no open challenge has that id for you (ended, expired, " \
    "or not yours)"
