"""The one exception the engine raises for an action the rules refuse."""

from enum import StrEnum


class ErrorCode(StrEnum):
    GAME_OVER = "game_over"
    BAD_SEAT = "bad_seat"
    OUT = "out"
    FROZEN = "frozen"
    NOT_YOUR_TURN = "not_your_turn"
    COLLECTING = "collecting"
    SLAP_PENDING = "slap_pending"
    NO_CARDS = "no_cards"


_MESSAGES = {
    ErrorCode.GAME_OVER: "the game is over",
    ErrorCode.BAD_SEAT: "there is no such seat",
    ErrorCode.OUT: "that seat is out of the game",
    ErrorCode.FROZEN: "frozen after a false slap",
    ErrorCode.NOT_YOUR_TURN: "it is not this seat's turn to flip",
    ErrorCode.COLLECTING: "the pile's winner is collecting it: no flip until the pause ends",
    ErrorCode.SLAP_PENDING: "a slap is pending: the pile must be slapped before the next flip",
    ErrorCode.NO_CARDS: "no cards to play",
}


class IllegalAction(ValueError):
    """An action the rules refuse; the game state is left exactly as it was."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        self.code = code
        self.message = message or _MESSAGES[code]
        super().__init__(f"{code}: {self.message}")
