"""The error codes the server sends and the refusal that carries one.

Below both the Table (which refuses) and the protocol (which answers), so neither imports
the other for them.
"""

from __future__ import annotations

from enum import StrEnum

from engine import ErrorCode as EngineCode


class ErrorCode(StrEnum):
    """Every error code the server sends, in acks, connection refusals and HTTP answers."""

    BAD_REQUEST = "bad_request"
    UNKNOWN_EVENT = "unknown_event"
    RATE_LIMITED = "rate_limited"
    NOT_HOST = "not_host"
    WRONG_PHASE = "wrong_phase"
    NOT_SEATED = "not_seated"
    SEAT_TAKEN = "seat_taken"
    NO_FREE_SEAT = "no_free_seat"
    TOO_FEW_PLAYERS = "too_few_players"
    BAD_RULES = "bad_rules"
    INTERNAL = "internal_error"
    PAUSED = "paused"  # the table is paused: its server cannot reach its store for now
    # A slap sooner after the trigger reached the slapper than a person can react: it takes
    # nothing, and the seat's further slaps at that pile are refused with this.
    FALSE_START = "false_start"
    # The engine's refusals, passed through with the engine's own codes.
    BAD_SEAT = EngineCode.BAD_SEAT.value
    GAME_OVER = EngineCode.GAME_OVER.value
    OUT = EngineCode.OUT.value
    FROZEN = EngineCode.FROZEN.value
    COLLECTING = EngineCode.COLLECTING.value
    NOT_YOUR_TURN = EngineCode.NOT_YOUR_TURN.value
    SLAP_PENDING = EngineCode.SLAP_PENDING.value
    NO_CARDS = EngineCode.NO_CARDS.value
    # Connection refusals.
    BAD_AUTH = "bad_auth"
    NO_ROOM = "no_room"
    BAD_NAME = "bad_name"
    NAME_TAKEN = "name_taken"  # someone at the table has a name that reads alike
    BAD_AVATAR = "bad_avatar"
    ROOM_FULL = "room_full"
    ROOM_LOCKED = "room_locked"  # the host locked the table: nobody new without an invite
    KICKED = "kicked"  # the host removed this token's or address's person from the table
    SHUTTING_DOWN = "shutting_down"  # also refuses new rooms over HTTP
    # HTTP only.
    TOO_MANY_ROOMS = "too_many_rooms"
    STORE_UNAVAILABLE = "store_unavailable"  # a new room that could not be written
    TOO_LARGE = "too_large"


class ProtocolError(Exception):
    """A refusal the client should see: becomes an error ack (or a refused connection)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
