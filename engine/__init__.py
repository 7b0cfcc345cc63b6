"""Slapjack rules engine: pure Python, standard library only, no clock, no global random.

from engine import Card, Rules, Game, IllegalAction
game = Game.deal(3, seed=1)
game.flip(game.next_to_play, now=0.0)
"""

from engine.cards import Card, full_deck
from engine.errors import ErrorCode, IllegalAction
from engine.events import Event, FalseSlap, Flip, Lapse, Late, Out, Take, Win
from engine.game import Game
from engine.rules import TRIGGERS, Rules

__all__ = [
    "TRIGGERS",
    "Card",
    "ErrorCode",
    "Event",
    "FalseSlap",
    "Flip",
    "Game",
    "IllegalAction",
    "Lapse",
    "Late",
    "Out",
    "Rules",
    "Take",
    "Win",
    "full_deck",
]
