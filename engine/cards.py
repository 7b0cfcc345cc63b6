"""Playing cards as small interned values: `Card.parse("10h")` and `str(card)` round-trip."""

from __future__ import annotations

from dataclasses import dataclass, field

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("S", "H", "D", "C")
FACE_RANKS = frozenset({"J", "Q", "K"})


@dataclass(frozen=True, slots=True)
class Card:
    """One playing card. Compare by value; `Card.parse` returns a shared instance."""

    rank: str
    suit: str
    # "10H": what `str` returns and snapshots store, made once per card rather than on
    # every save (a snapshot writes every card of every hand).
    text: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.rank not in RANKS or self.suit not in SUITS:
            raise ValueError(f"not a card: rank {self.rank!r}, suit {self.suit!r}")
        object.__setattr__(self, "text", self.rank + self.suit)

    @classmethod
    def parse(cls, text: str) -> Card:
        """Reads "JS", "10h", "Td" (T is ten); case-insensitive, surrounding blanks ignored."""
        try:
            return _BY_TEXT[text.strip().upper()]
        except (KeyError, AttributeError):
            raise ValueError(f"not a card: {text!r}") from None

    @property
    def is_jack(self) -> bool:
        return self.rank == "J"

    @property
    def is_face(self) -> bool:
        return self.rank in FACE_RANKS

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card.parse({self.text!r})"


_BY_TEXT: dict[str, Card] = {}
for _suit in SUITS:
    for _rank in RANKS:
        _card = Card(_rank, _suit)
        _BY_TEXT[_card.text] = _card
        if _rank == "10":
            _BY_TEXT["T" + _suit] = _card


def full_deck(decks: int = 1) -> list[Card]:
    """Every card of `decks` standard 52-card decks, in a fixed order (suit by suit)."""
    return [Card.parse(r + s) for _ in range(decks) for s in SUITS for r in RANKS]


def as_card(card: Card | str) -> Card:
    """Accepts a Card or its text, for literal hands and piles."""
    return card if isinstance(card, Card) else Card.parse(card)
