"""Cards: parsing, canonical text, predicates and the full deck."""

from collections import Counter

import pytest

from engine import Card
from engine.cards import full_deck

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUITS = ["S", "H", "D", "C"]
ALL_TEXTS = [r + s for r in RANKS for s in SUITS]


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_parse_then_str_round_trips_every_card(text):
    card = Card.parse(text)
    assert str(card) == text
    assert card.rank == text[:-1]
    assert card.suit == text[-1]
    assert Card.parse(str(card)) == card


def test_the_52_texts_give_52_distinct_cards():
    assert len({Card.parse(t) for t in ALL_TEXTS}) == 52


@pytest.mark.parametrize("text", ["js", "Js", "jS", "JS"])
def test_parse_is_case_insensitive(text):
    assert Card.parse(text) == Card.parse("JS")
    assert str(Card.parse(text)) == "JS"


def test_ten_parses_from_digits_in_any_case():
    card = Card.parse("10h")
    assert str(card) == "10H"
    assert card.rank == "10"
    assert card.suit == "H"


@pytest.mark.parametrize("text", ["TD", "td", "Td", "tD"])
def test_t_is_read_as_ten(text):
    assert Card.parse(text) == Card.parse("10D")
    assert str(Card.parse(text)) == "10D"


def test_lowercase_face_and_ace_ranks_parse():
    assert str(Card.parse("qc")) == "QC"
    assert str(Card.parse("kd")) == "KD"
    assert str(Card.parse("ah")) == "AH"


def test_equal_texts_give_the_same_interned_card():
    assert Card.parse("JS") is Card.parse("js")
    assert hash(Card.parse("10h")) == hash(Card.parse("TH"))


@pytest.mark.parametrize(
    "text",
    ["", "J", "S", "1H", "0H", "11H", "1S", "BS", "JX", "JSS", "10", "100H", "HJ", "T", "joker"],
)
def test_bad_text_raises_value_error(text):
    with pytest.raises(ValueError):
        Card.parse(text)


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_is_jack_only_for_jacks(text):
    assert Card.parse(text).is_jack is text.startswith("J")


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_is_face_only_for_jacks_queens_and_kings(text):
    assert Card.parse(text).is_face is (text[0] in "JQK")


def test_full_deck_has_each_of_the_52_cards_once():
    deck = full_deck()
    assert len(deck) == 52
    assert sorted(str(c) for c in deck) == sorted(ALL_TEXTS)


def test_full_deck_of_one_deck_is_the_default():
    assert Counter(map(str, full_deck(1))) == Counter(map(str, full_deck()))


def test_full_deck_of_two_decks_has_each_card_twice():
    deck = full_deck(2)
    assert len(deck) == 104
    assert Counter(str(c) for c in deck) == Counter({t: 2 for t in ALL_TEXTS})


def test_full_deck_holds_four_jacks_and_twelve_face_cards():
    deck = full_deck()
    assert sum(c.is_jack for c in deck) == 4
    assert sum(c.is_face for c in deck) == 12
