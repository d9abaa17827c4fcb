"""Deals and matches: the state machine of a Sueca game, with no I/O.

Shape (after pokerkit): ``verify_play`` raises, ``can_play`` answers, ``play`` acts and returns a
small frozen record of what happened. An act that raises changes nothing.

Seats are 0..3 in playing order; team 0 is seats 0 and 2. Hands are bit masks of card numbers
(see :mod:`.cards`), which is what makes a deal cost tens of microseconds.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from enum import StrEnum
from itertools import repeat
from operator import call as _call
from typing import NamedTuple

from .cards import (
    _CHUNK_MASK,
    _T0,
    _T1,
    _T2,
    CARDS,
    FULL_DECK,
    POINTS,
    SUIT_MASKS,
    SUIT_TABLES,
    Card,
    card,
    cards_of,
    hand_points,
    validate_deck,
)
from .errors import (
    CardError,
    CardNotInHandError,
    GameOverError,
    IllegalPlayError,
    NotYourTurnError,
    RedealError,
    RenunciaError,
    VariantError,
)
from .seeding import seeded_random
from .variant import DEFAULT, Variant


class End(StrEnum):
    """How a deal or a match ended. The value is what replays, the wire and the league record."""

    NORMAL = "normal"          # ten tricks played (a match: its last deal reached the target)
    RENUNCIA = "renuncia"      # a seat did not follow suit although it could (docs/rules.md)
    REDEAL = "redeal"          # the first player threw in a weak hand (variant weak_hand_redeal)
    TIMEOUT = "timeout"        # a seat ran out of clock
    DISCONNECT = "disconnect"  # a seat's connection was lost beyond its grace time
    ABORTED = "aborted"        # stopped by the system: no winner, never a result
    BOT_ERROR = "bot_error"    # a seat's program failed and resigned the match (its code raised)


NORMAL, RENUNCIA, REDEAL, TIMEOUT, DISCONNECT, ABORTED, BOT_ERROR = End  # the hot paths use
# these names: a module global is read ten times faster than End.NORMAL (an enum class
# attribute, Python 3.11)
FAULT_ENDS = (End.RENUNCIA, End.TIMEOUT, End.DISCONNECT, End.BOT_ERROR)
_STOPS = (End.TIMEOUT, End.DISCONNECT, End.BOT_ERROR, End.ABORTED)  # the ends Match.stop gives
WEAK_HAND_POINTS = 10  # docs/rules.md § Variants (002): a first hand of 10 points or less may redeal


def team_of(seat: int) -> int:
    return seat & 1


class Trick(NamedTuple):
    """A finished trick. ``winner`` is None only for a trick cut short by a renúncia."""

    leader: int
    cards: tuple[Card, ...]
    winner: int | None
    points: int

    def seats(self) -> list[int]:
        return [(self.leader + i) & 3 for i in range(len(self.cards))]


class Play(NamedTuple):
    """What one card did: ``trick`` when it finished a trick, ``deal`` when it ended the deal."""

    seat: int
    card: Card
    trick: Trick | None = None
    deal: DealResult | None = None


class DealResult(NamedTuple):
    number: int
    dealer: int
    end: End
    points: tuple[int, int]
    game_points: tuple[int, int]
    fault_seat: int | None


# Most plays neither finish a trick nor a deal: their records are made once, here.
_PLAIN = tuple(tuple(Play(s, c) for c in CARDS) for s in range(4))
_BITS = tuple(1 << c for c in range(40))
_BIT_OF = list(_BITS).__getitem__
_new = tuple.__new__  # builds a NamedTuple without its Python-level __new__: hot path only


def legal_mask(hand: int, led_mask: int) -> int:
    """The follow-suit rule (docs/rules.md § Playing a trick), the one place it is written: a seat
    must play a card of the led suit when it holds one, any card otherwise. ``led_mask`` is the
    led suit's cards (:data:`~.cards.SUIT_MASKS`), 0 while no card is on the table (any card leads).

    Every other test of legality is this one: :meth:`Deal.legal_mask`, :meth:`Deal.is_renuncia`,
    :meth:`Match.legal_mask`; the inlined copies in :meth:`Deal.play` and
    ``playout._play_deal`` are checked against it by ``tests/engine/test_engine_playout_paths.py``
    and ``tests/engine/test_engine_properties.py``.
    """
    return hand & led_mask or hand


def trick_keys(trump_suit: int, led_suit: int) -> tuple[int, ...]:
    """Who wins a trick, the one place it is written: one number per card, the highest card
    number on the table takes the trick (see :func:`_trick_keys`). A lookup, for bots too."""
    return _KEYS[trump_suit][led_suit]


def _trick_keys(trump: int, led: int) -> tuple[int, ...]:
    """Who wins a trick, as one number per card: the highest number takes the trick.

    Trumps beat the led suit, which beats everything else (docs/rules.md § Playing a trick); within a suit the
    card number is the rank order. One lookup per card instead of comparing suits.
    """
    return tuple(20 + c % 10 if c // 10 == trump else 10 + c % 10 if c // 10 == led else -1
                 for c in range(40))


_KEYS = tuple(tuple(_trick_keys(t, led) for led in range(4)) for t in range(4))


def deal_hands(deck: Sequence[Card], dealer: int, trump_card: str) -> tuple[list[int], Card]:
    """Hands (as masks, by seat) and the turned card, from a deck listed top card first.

    ``last`` (docs/rules.md, all four texts): ten cards to each seat starting after the dealer, so the
    dealer's batch is the bottom ten and the bottom card is turned. ``first`` (``000``, ``001``, ``003``):
    the dealer takes the top ten and the top card is turned; then the seats after him in order.
    """
    bit = _BIT_OF  # list.__getitem__ is a plain C method; tuple's is a slow slot wrapper
    batches = [sum(map(bit, deck[0:10])), sum(map(bit, deck[10:20])),
               sum(map(bit, deck[20:30])), sum(map(bit, deck[30:40]))]
    if trump_card == "last":
        start = (dealer + 1) & 3
        turned = deck[39]
    else:
        start = dealer
        turned = deck[0]
    if start == 0:
        return batches, turned
    return batches[-start:] + batches[:-start], turned  # batch i goes to seat start + i


def _checked_deck(deck: Sequence[object], dealer: object, trump_card: object) -> tuple[Card, ...]:
    if dealer.__class__ is not int or not 0 <= dealer <= 3:
        raise IllegalPlayError(f"bad dealer {dealer!r}: a seat is 0, 1, 2 or 3")
    if trump_card not in ("last", "first"):
        raise VariantError(f"bad value {trump_card!r} for variant 'trump_card': valid values are "
                           "last, first")
    return validate_deck(deck)


class Deal:
    """One deal: ten tricks from a given deck and dealer."""

    __slots__ = (
        "number", "dealer", "deck", "trump", "trump_suit", "start_hands", "hands",
        "turn", "leader", "trick", "led", "led_mask", "keys", "win_key", "win_seat", "tricks",
        "points", "end", "fault_seat",
    )

    def __init__(self, deck: Sequence[Card], dealer: int, trump_card: str = "last",
                 number: int = 0) -> None:
        self.number = number
        self.dealer = dealer
        self.deck = tuple(deck)
        try:
            hands, trump = deal_hands(self.deck, dealer, trump_card)
            ok = (sum(hands) == FULL_DECK and len(self.deck) == 40 and trump.__class__ is Card
                  and dealer.__class__ is int and 0 <= dealer <= 3
                  and trump_card in ("last", "first"))
        except (TypeError, IndexError):
            ok = False
        if not ok:  # slow path: a bad deck, dealer or variant is refused with a clear error
            self.deck = _checked_deck(self.deck, dealer, trump_card)
            hands, trump = deal_hands(self.deck, dealer, trump_card)
        self.start_hands = tuple(hands)
        self.hands = hands
        self.trump: Card = trump
        self.trump_suit = trump // 10
        self.turn = self.leader = (dealer + 1) & 3
        self.trick: list[Card] = []
        self.led = -1
        self.led_mask = 0  # 0 while no card is on the table (see legal_mask)
        self.keys = _KEYS[0][0]
        self.win_key = -1
        self.win_seat = -1
        self.tricks: list[Trick] = []
        self.points = [0, 0]
        self.end: End | None = None
        self.fault_seat: int | None = None

    # -- questions -------------------------------------------------------------------------
    @property
    def tricks_won(self) -> list[int]:
        """Tricks taken by each team (counted when asked: only a bandeira needs it)."""
        won = [0, 0]
        for t in self.tricks:
            if t.winner is not None:
                won[t.winner & 1] += 1
        return won

    @property
    def trump_held(self) -> bool:
        """The turned card stays face up in the dealer's hand until he plays it (003)."""
        return bool(self.hands[self.dealer] >> self.trump & 1)

    def legal_mask(self, seat: int | None = None) -> int:
        """The cards ``seat`` (default: the seat to play) may play on the current trick."""
        return legal_mask(self.hands[self.turn if seat is None else seat], self.led_mask)

    def legal_cards(self, seat: int | None = None) -> tuple[Card, ...]:
        """:meth:`legal_mask` as cards: when following suit, one lookup in the led suit's table
        (the same cards ``cards_of`` gives; a property test compares them)."""
        hand = self.hands[self.turn if seat is None else seat]
        follow = hand & self.led_mask
        if follow:
            led = self.led
            return SUIT_TABLES[led][follow >> 10 * led]
        # cards_of(hand), inlined: read once per card played by bots with hooks
        return _T0[hand & _CHUNK_MASK] + _T1[(hand >> 14) & _CHUNK_MASK] + _T2[hand >> 28]

    def hand(self, seat: int) -> tuple[Card, ...]:
        return cards_of(self.hands[seat])

    def is_renuncia(self, value: object) -> bool:
        """Would this card, from the seat to play, fail to follow suit while the hand could?"""
        c = card(value)
        hand = self.hands[self.turn]
        return bool(hand >> c & 1) and not legal_mask(hand, self.led_mask) >> c & 1

    def verify_play(self, value: object, seat: int | None = None) -> Card:
        """Raise unless the card is a legal play now; returns it as a :class:`Card`."""
        c = card(value)
        self._verify_common(c, seat)
        if self.is_renuncia(c):
            led = "CDHS"[self.trick[0] // 10]
            raise RenunciaError(
                f"card {c} does not follow the led suit {led} although seat {self.turn} holds "
                f"{' '.join(map(str, cards_of(self.hands[self.turn] & self.led_mask)))}"
            )
        return c

    def can_play(self, value: object, seat: int | None = None) -> bool:
        try:
            self.verify_play(value, seat)
        except (IllegalPlayError, CardError):
            return False  # a question gets an answer, even about a card that does not exist
        return True

    def _verify_common(self, c: Card, seat: int | None) -> None:
        if self.end is not None:
            raise GameOverError(f"deal {self.number + 1} is over ({self.end}); no card can be "
                                "played")
        if seat is not None and seat != self.turn:
            raise NotYourTurnError(f"seat {seat} played {c} out of turn: seat {self.turn} is to play")
        if not self.hands[self.turn] >> c & 1:
            raise CardNotInHandError(f"card {c} is not in the hand of seat {self.turn}")

    # -- acts ------------------------------------------------------------------------------
    def play(self, value: object, seat: int | None = None) -> Play:
        """Play a card for the seat to move (``seat``, if given, must be that seat).

        A card that fails to follow suit although the hand could is a renúncia: it is applied as
        the rules say (the deal ends, the card is the last of the last trick). A caller that wants
        to refuse such a card instead checks :meth:`is_renuncia` or :meth:`verify_play` first.
        """
        c = value if value.__class__ is Card else card(value)
        turn = self.turn
        hands = self.hands
        hand = hands[turn]
        bit = _BITS[c]
        if not hand & bit or self.end is not None or (seat is not None and seat != turn):
            self._verify_common(c, seat)  # raises the precise error
        trick = self.trick
        if trick:
            led_mask = self.led_mask
            if not led_mask & bit and hand & led_mask:  # not legal_mask(hand, led_mask) & bit
                return self._renuncia(turn, c)
            hands[turn] = hand ^ bit
            trick.append(c)
            key = self.keys[c]
            if key > self.win_key:
                self.win_key = key
                self.win_seat = turn
            if len(trick) == 4:
                return _new(Play, (turn, c, self._close_trick(self.win_seat), None))
        else:
            self.led = led = c // 10
            self.led_mask = SUIT_MASKS[led]
            self.keys = keys = _KEYS[self.trump_suit][led]
            self.win_key = keys[c]
            self.win_seat = turn
            hands[turn] = hand ^ bit
            trick.append(c)
        self.turn = (turn + 1) & 3
        return _PLAIN[turn][c]

    def _close_trick(self, winner: int) -> Trick:
        """Score the complete trick on the table, taken by ``winner``, who leads next (also ends
        the deal). ``playout._play_deal`` has a copy inlined for speed, checked against this one
        by ``tests/engine/test_engine_playout_paths.py`` (every trick, hand, score and mask)."""
        trick = self.trick
        a, b, c, d = trick
        pts = POINTS[a] + POINTS[b] + POINTS[c] + POINTS[d]
        t = _new(Trick, (self.leader, (a, b, c, d), winner, pts))
        tricks = self.tricks
        tricks.append(t)
        self.points[winner & 1] += pts
        trick.clear()  # led and keys mean nothing until the next lead sets them
        self.led_mask = 0
        self.turn = self.leader = winner
        if len(tricks) == 10:
            self.end = NORMAL
        return t

    def _renuncia(self, seat: int, c: Card) -> Play:
        self.hands[seat] ^= 1 << c
        self.trick.append(c)
        t = Trick(self.leader, tuple(self.trick), None, 0)
        self.tricks.append(t)
        self.trick.clear()
        self.led_mask = 0
        self.end = RENUNCIA
        self.fault_seat = seat
        return Play(seat, c, t)

    def stop(self, end: End, seat: int | None) -> None:
        """End the deal early for a reason outside the rules (timeout, disconnect, bot error,
        abort)."""
        if self.end is None:
            self.end = end
            self.fault_seat = seat


def shuffled_deck(rng: random.Random) -> tuple[Card, ...]:
    """A uniformly shuffled deck: the cards sorted by 40 random floats.

    Twice as fast as ``rng.shuffle`` (it calls ``random()`` 40 times and sorts in C); a tie
    between two 53-bit floats, the only source of bias, has odds of about 1 in 10**13.
    """
    keys = list(map(_call, repeat(rng.random, 40)))  # 40 rng.random() calls, no Python loop
    return tuple(sorted(CARDS, key=keys.__getitem__))


def deal_game_points(points: Sequence[int], tricks_won: Sequence[int], bandeira: str) -> tuple[int, int]:
    """Game points of a finished deal before tie hold-over, by team (docs/rules.md § Scoring a deal).

    61-90 -> 1, 91-120 -> 2, every trick -> 4 (``all_tricks``: 000, 001, 002) or 120 points -> 4
    (``all_points``: 003's table); 60-60 -> (0, 0), a tie.
    """
    for team in (0, 1):
        p = points[team]
        if p > 60:
            if (bandeira == "all_tricks" and tricks_won[team] == 10) or (
                    bandeira == "all_points" and p == 120):
                gp = 4
            elif p >= 91:
                gp = 2
            else:
                gp = 1
            return (gp, 0) if team == 0 else (0, gp)
    return (0, 0)


class Match:
    """A match: deals until a team reaches the target, with dealer rotation and tie hold-over.

    Decks come first from ``decks`` (replays, duplicate pairs), then from shuffles seeded by
    ``seed``. Two matches with the same seed and decks therefore see the same cards, whatever bots
    sit where: that is what duplicate play needs.
    """

    __slots__ = ("variant", "seed", "rng", "decks", "first_dealer", "deals", "results", "deal",
                 "game_points", "held", "winner", "end", "fault_seat", "awaiting_redeal")

    def __init__(self, variant: Variant = DEFAULT, seed: int | str | None = None,
                 decks: Iterable[Iterable[object]] = (), first_dealer: int | None = None) -> None:
        self.variant = variant
        self.seed = seed
        self.rng = rng = seeded_random(seed)
        self.decks = [validate_deck(d) for d in decks] if decks != () else []
        if first_dealer is None:
            # docs/rules.md: the first dealer is drawn at random. This is rng.randrange(4), inlined
            # (Random._randbelow: 3-bit draws until one is below 4): the same draws, same seat.
            first_dealer = rng.getrandbits(3)
            while first_dealer >= 4:
                first_dealer = rng.getrandbits(3)
        elif first_dealer.__class__ is not int or first_dealer not in (0, 1, 2, 3):
            raise IllegalPlayError(f"bad first dealer {first_dealer!r}: a seat is 0, 1, 2 or 3")
        self.first_dealer = first_dealer
        self.deals: list[Deal] = []
        self.results: list[DealResult] = []
        self.game_points = [0, 0]
        self.held = 0  # ties in a row not yet paid out
        self.winner: int | None = None
        self.end: End | None = None
        self.fault_seat: int | None = None
        self.awaiting_redeal = False
        self._start(first_dealer)

    # -- state -----------------------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.end is not None

    @property
    def turn(self) -> int | None:
        """The seat to act: to play, or to answer the redeal question; None when over."""
        return None if self.end is not None else self.deal.turn

    def _next_deck(self) -> tuple[Card, ...]:
        n = len(self.deals)
        return self.decks[n] if n < len(self.decks) else shuffled_deck(self.rng)

    def _start(self, dealer: int) -> None:
        deal = Deal(self._next_deck(), dealer, self.variant.trump_card, len(self.deals))
        self.deals.append(deal)
        self.deal = deal
        self.awaiting_redeal = (
            self.variant.weak_hand_redeal
            and hand_points(deal.hands[deal.turn]) <= WEAK_HAND_POINTS)

    def legal_mask(self, seat: int) -> int:
        """The cards ``seat`` may play now: none unless it is that seat's turn to play (not to
        answer the redeal question, not after the end)."""
        deal = self.deal
        if deal.turn != seat or self.end is not None or self.awaiting_redeal:
            return 0
        return legal_mask(deal.hands[seat], deal.led_mask)

    def legal_cards(self, seat: int) -> tuple[Card, ...]:
        """:meth:`legal_mask` as cards (the same test, the fast decoding of
        :meth:`Deal.legal_cards`)."""
        deal = self.deal
        if deal.turn != seat or self.end is not None or self.awaiting_redeal:
            return ()
        return deal.legal_cards(seat)

    # -- acts ------------------------------------------------------------------------------
    def can_redeal(self, seat: int | None = None) -> bool:
        return self.awaiting_redeal and (seat is None or seat == self.deal.turn)

    def redeal(self, call: bool, seat: int | None = None) -> DealResult | None:
        """Answer the weak-hand question (variant ``weak_hand_redeal``, from ``002``).

        ``True`` throws the deal in: it is recorded with end ``redeal`` and the same dealer deals
        again from the next deck. ``False`` plays the hand.
        """
        if not self.awaiting_redeal:
            raise RedealError("no redeal can be called now: only the first player, before the "
                              "first card, with 10 points or less and weak_hand_redeal=on")
        if seat is not None and seat != self.deal.turn:
            raise NotYourTurnError(f"seat {seat} cannot call a redeal: seat {self.deal.turn} decides")
        self.awaiting_redeal = False
        if not call:
            return None
        deal = self.deal
        deal.stop(REDEAL, None)
        result = DealResult(deal.number, deal.dealer, REDEAL, (0, 0), (0, 0), None)
        self.results.append(result)
        self._start(deal.dealer)
        return result

    def verify_play(self, value: object, seat: int | None = None) -> Card:
        if self.end is not None:
            raise GameOverError(f"the match is over ({self.end}); no card can be played")
        if self.awaiting_redeal:
            raise RedealError(f"seat {self.deal.turn} must first answer whether to call a redeal")
        return self.deal.verify_play(value, seat)

    def can_play(self, value: object, seat: int | None = None) -> bool:
        try:
            self.verify_play(value, seat)
        except (IllegalPlayError, CardError):
            return False  # a question gets an answer, even about a card that does not exist
        return True

    def play(self, value: object, seat: int | None = None) -> Play:
        """Play a card in the current deal; a deal that ends is scored and the next one dealt."""
        if self.end is not None or self.awaiting_redeal:
            self.verify_play(value, seat)
        p = self.deal.play(value, seat)
        if self.deal.end is None:
            return p
        return p._replace(deal=self._finish_deal())

    def _finish_deal(self) -> DealResult:
        """Score the deal that just ended, pay or hold over a tie, and deal the next one unless
        a team reached the target."""
        deal = self.deal
        v = self.variant
        end = deal.end
        points = deal.points
        if end == RENUNCIA:  # the other team scores 4 (docs/rules.md § Renúncia and other faults)
            gp = (4, 0) if deal.fault_seat & 1 else (0, 4)  # type: ignore[operator]
        else:
            # only a team with all 120 points can have all ten tricks: count them only then
            gp = deal_game_points(points, deal.tricks_won if 120 in points else (0, 0),
                                  v.bandeira)
        held = self.held
        if gp == (0, 0):
            if v.tie != "none":  # tie=none (003): nothing is held over
                self.held = held + 1
        elif held:
            base = list(gp)
            team = 0 if base[0] else 1
            if v.tie == "carry":
                base[team] += held
            elif v.tie == "double":
                base[team] <<= held
            self.held = 0
            gp = (base[0], base[1])
        game_points = self.game_points
        g0 = game_points[0] = game_points[0] + gp[0]
        g1 = game_points[1] = game_points[1] + gp[1]
        result = _new(DealResult, (deal.number, deal.dealer, end, (points[0], points[1]), gp,
                                   deal.fault_seat))
        self.results.append(result)
        if g0 >= v.target or g1 >= v.target:
            self.winner = 0 if g0 >= v.target else 1
            self.end = end
            self.fault_seat = deal.fault_seat
            return result
        self._start((deal.dealer + 1) & 3)
        return result

    def stop(self, end: End | str, seat: int | None = None) -> DealResult:
        """End the match outside the rules: ``timeout``/``disconnect``/``bot_error`` by
        ``seat`` (its team loses) or ``aborted`` by the system (no winner, never a result).
        ``end`` may be given as its text (a replay's)."""
        if self.end is not None:
            raise GameOverError(f"the match is over ({self.end})")
        if end not in _STOPS:
            raise IllegalPlayError(f"bad end {end!r}: a match is stopped by timeout, disconnect, "
                                   "bot_error or aborted")
        end = End(end)
        if (end != ABORTED or seat is not None) and (
                seat.__class__ is not int or seat not in (0, 1, 2, 3)):
            raise IllegalPlayError(f"bad seat {seat!r} for a {end}: a seat is 0, 1, 2 or 3")
        deal = self.deal
        deal.stop(end, seat)
        self.awaiting_redeal = False
        result = DealResult(deal.number, deal.dealer, end, (deal.points[0], deal.points[1]),
                            (0, 0), seat)
        self.results.append(result)
        self.end = end
        self.fault_seat = seat
        self.winner = None if end == ABORTED else 1 - team_of(seat)  # type: ignore[arg-type]
        return result
