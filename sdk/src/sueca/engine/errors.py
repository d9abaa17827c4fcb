"""The engine's error tree: every error is a ValueError whose message quotes the bad input.

Callers (the referee, the command line) show these messages to users as they are, so each one
must say what was wrong and what would have been right.
"""

from __future__ import annotations


class SuecaError(ValueError):
    """Base of every error the engine raises for bad input or a bad action."""


class CardError(SuecaError):
    """A card text or number that is not one of the 40 Sueca cards."""


class DeckError(SuecaError):
    """A deck that is not exactly the 40 cards once each."""


class VariantError(SuecaError):
    """An unknown variant name or a value that variant does not take."""


class IllegalPlayError(SuecaError):
    """An action the rules forbid at this moment; the game is left unchanged."""


class NotYourTurnError(IllegalPlayError):
    """A seat tried to act while another seat is to play."""


class CardNotInHandError(IllegalPlayError):
    """A seat tried to play a card it does not hold."""


class RenunciaError(IllegalPlayError):
    """A card that does not follow the led suit although the hand could (a renúncia).

    Raised only by :meth:`Deal.verify_play`; :meth:`Deal.play` applies the renúncia instead,
    as the rules do. The referee chooses which one it wants.
    """


class GameOverError(IllegalPlayError):
    """An action on a deal or match that has already ended."""


class RedealError(IllegalPlayError):
    """A weak-hand redeal call at a moment when none can be called."""


class ReplayError(SuecaError):
    """A replay record that is malformed or does not follow from its decks and plays."""
