"""The Sueca rules engine: pure Python, standard library only, no I/O.

Everything the referee, the bots and the tools agree on — cards, variants, deals, scoring,
observations, replays — lives here. See docs/rules.md for the rules and their sources.
"""

from .cards import CARDS, RANKS, SUITS, Card, card, cards_of, parse_card, parse_cards
from .errors import (
    CardError,
    CardNotInHandError,
    DeckError,
    GameOverError,
    IllegalPlayError,
    NotYourTurnError,
    RedealError,
    RenunciaError,
    ReplayError,
    SuecaError,
    VariantError,
)
from .game import (
    Deal,
    DealResult,
    End,
    Match,
    Play,
    Trick,
    deal_game_points,
    legal_mask,
    shuffled_deck,
    team_of,
    trick_keys,
)
from .observation import Observation, SeatView, Snapshot
from .playout import BotFailed, Player, play_match
from .variant import DEFAULT, Variant

__all__ = [
    "CARDS", "SUITS", "RANKS", "Card", "card", "cards_of", "parse_card", "parse_cards",
    "CardError", "CardNotInHandError", "DeckError", "GameOverError", "IllegalPlayError",
    "NotYourTurnError", "RedealError", "RenunciaError", "ReplayError", "SuecaError",
    "VariantError", "Deal", "DealResult", "Match", "Play", "Trick", "deal_game_points",
    "shuffled_deck", "team_of", "Observation", "SeatView", "Snapshot", "play_match", "DEFAULT",
    "Variant", "End", "legal_mask", "trick_keys", "Player", "BotFailed",
]
