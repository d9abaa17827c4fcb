"""HeuristicBot: the habits of a decent club player, in a page of rules.

It remembers every card played in the deal (from ``observation.tricks`` and ``.trick``) and who
has shown out of a suit, and from that knows which cards are still unseen. Then:

* leading: draw trumps when it holds the top trump and at least as many trumps as are still out;
  cash a side-suit ace (or a 7 whose ace is gone) while the suit is still likely to go round;
  otherwise lead its cheapest card, never a 7 whose ace is still out;
* following: when the partner is sure to take the trick, give it points (a smear); when an
  opponent is winning, take the trick with the cheapest card that cannot be beaten any more
  (any card when playing last), trumping only tricks worth it; otherwise play its cheapest card.

Card numbers are ``suit * 10 + strength`` (see :mod:`sueca.engine.cards`), so within a suit a
bigger number is a better card and sets of cards are bit masks.
"""

from __future__ import annotations

from collections.abc import Sequence

from sueca.engine import Card, Observation, trick_keys
from sueca.engine.cards import POINTS, SUIT_MASKS, mask_of

from ..bot import Bot, MatchInfo

_ACE, _SEVEN = 9, 8  # strengths (2 3 4 5 6 Q J K 7 A -> 0..9)
TRUMP_WORTH = 4  # card points a trick must carry before a side card is trumped
SMEAR_BONUS_SEVEN = 5  # a 7 whose ace is still out is at risk: better given to the partner now


def _above(c: int) -> int:
    """Mask of the cards of c's suit that beat c."""
    return SUIT_MASKS[c // 10] & ~((2 << c) - 1)


class HeuristicBot(Bot):
    """A rule-based player: card memory, trump counting, smears, cheap wins."""

    def on_match_start(self, info: MatchInfo) -> None:
        self._deal = -1

    def redeal(self, observation: Observation) -> bool:
        """Variant weak_hand_redeal (asked only with 10 card points or less): throw the hand
        in unless four or more trumps make up for the missing points."""
        trump = observation.trump_suit
        return sum(1 for c in observation.hand if c // 10 == trump) < 4

    # -- memory ----------------------------------------------------------------------------
    def _remember(self, obs: Observation) -> None:
        """Bring the played-card mask and the known voids up to date with the finished tricks."""
        if obs.deal_number != self._deal:
            self._deal = obs.deal_number
            self._seen_tricks = 0
            self._played = 0
            self._void = [0, 0, 0, 0]  # per seat, a bit per suit it has shown out of
        tricks = obs.tricks
        for t in tricks[self._seen_tricks:]:
            self._note(t.leader, t.cards)
        self._seen_tricks = len(tricks)

    def _note(self, leader: int, cards: Sequence[int]) -> None:
        if not cards:
            return
        led = cards[0] // 10
        for i, c in enumerate(cards):
            self._played |= 1 << c
            if c // 10 != led:
                self._void[(leader + i) & 3] |= 1 << led

    # -- the decision ----------------------------------------------------------------------
    def play(self, observation: Observation) -> Card:
        obs = observation
        legal = obs.legal
        if len(legal) == 1:
            return legal[0]
        self._remember(obs)
        trick = obs.trick  # (seat, card) pairs
        on_table = 0
        void = list(self._void)
        if trick:
            led = trick[0][1] // 10
            for seat, c in trick:
                on_table |= 1 << c
                if c // 10 != led:
                    void[seat] |= 1 << led
        self.me = obs.seat
        self.trump = obs.trump_suit
        self.hand = mask_of(obs.hand)
        self.unseen = ~(self._played | on_table | self.hand) & ((1 << 40) - 1)
        self.void = void
        # the turned trump card is public while the dealer holds it
        self.known_card = obs.trump if obs.trump_held and obs.dealer != self.me else -1
        self.dealer = obs.dealer
        if not trick:
            return self._lead(legal)
        return self._follow(legal, trick)

    # -- helpers ---------------------------------------------------------------------------
    def _unseen_for(self, seat: int) -> int:
        """Cards ``seat`` may hold: unseen ones, minus the turned trump if another seat has it."""
        if self.known_card >= 0 and seat != self.dealer:
            return self.unseen & ~(1 << self.known_card)
        return self.unseen

    def _is_master(self, c: int) -> bool:
        """No card still out can beat c in its own suit."""
        return not self.unseen & _above(c)

    def _protected_seven(self, c: int) -> bool:
        """A 7 whose ace is still out: keep it back (the ace would capture it)."""
        return c % 10 == _SEVEN and bool(self.unseen >> (c + 1) & 1)

    def _cost(self, c: int) -> tuple[int, int]:
        """How much it hurts to throw c away: points, trumps and guarded 7s are dear."""
        dear = POINTS[c]
        if c // 10 == self.trump:
            dear += 6 + c % 10
        if self._protected_seven(c):
            dear += 15
        return (dear, c % 10)

    def _could_beat(self, seat: int, c: int, led: int) -> bool:
        """Could ``seat``, playing after us, beat card c in a trick led in suit ``led``?"""
        trump, void = self.trump, self.void[seat]
        held = self._unseen_for(seat)
        trumps_out = held & SUIT_MASKS[trump] and not void >> trump & 1
        if c // 10 == trump:
            if not held & _above(c) or void >> trump & 1:
                return False
            return led == trump or bool(void >> led & 1)
        if not void >> led & 1:
            return bool(held & _above(c))
        return bool(trumps_out)

    def _safe(self, c: int, led: int, after: Sequence[int]) -> bool:
        """c would take the trick whatever the opponents still to play hold (as far as known)."""
        return not any(self._could_beat(s, c, led) for s in after if (s ^ self.me) & 1)

    # -- leading ---------------------------------------------------------------------------
    def _lead(self, legal: Sequence[Card]) -> Card:
        trump = self.trump
        tmask = SUIT_MASKS[trump]
        mine, out = self.hand & tmask, self.unseen & tmask
        if mine and out:
            top = mine.bit_length() - 1
            if self._is_master(top) and mine.bit_count() >= out.bit_count():
                return self._card(legal, top)  # draw trumps while we hold the top one
        opponents = (self.me + 1) & 3, (self.me + 3) & 3
        cash = []
        for c in legal:
            s = c // 10
            if s == trump or POINTS[c] < 10 or not self._is_master(c):
                continue
            ruffable = out and any(self.void[o] >> s & 1 and not self.void[o] >> trump & 1
                                   for o in opponents)
            if not ruffable and (not out or (self.unseen & SUIT_MASKS[s]).bit_count() >= 3):
                cash.append(c)
        if cash:
            return max(cash, key=lambda c: (POINTS[c], c))
        partner = self.me ^ 2

        def lead_key(c: Card) -> tuple[int, int, int]:
            s = c // 10
            opp_ruffs = any(self.void[o] >> s & 1 for o in opponents) and bool(out)
            partner_ruffs = bool(self.void[partner] >> s & 1) and not opp_ruffs
            return (int(opp_ruffs), self._cost(c)[0] - 3 * partner_ruffs, c % 10)

        return min(legal, key=lead_key)

    # -- following -------------------------------------------------------------------------
    def _follow(self, legal: Sequence[Card], trick: Sequence[tuple[int, Card]]) -> Card:
        trump = self.trump
        led = trick[0][1] // 10
        key = trick_keys(trump, led).__getitem__  # the engine's rule: the highest key wins

        win_seat, win_card = max(trick, key=lambda sc: key(sc[1]))
        pts = sum(POINTS[c] for _, c in trick)
        after = [(self.me + k) & 3 for k in range(1, 4 - len(trick))]
        cheapest = min(legal, key=self._cost)

        if win_seat == self.me ^ 2:  # the partner is winning
            if not after or self._safe(win_card, led, after):
                return self._smear(legal)
            return cheapest

        beaters = [c for c in legal if key(c) > key(win_card)]
        if not after:
            beaters.sort(key=self._cost)
        else:
            beaters = sorted((c for c in beaters if self._safe(c, led, after)), key=self._cost)
        for c in beaters:
            if c // 10 == trump and led != trump:
                # trump only a trick worth it, or one the partner may still load with points
                partner_to_play = (self.me ^ 2) in after
                if pts < TRUMP_WORTH and not partner_to_play:
                    continue
                if self._protected_seven(c) and pts < 10:
                    continue
            return c
        return cheapest

    def _smear(self, legal: Sequence[Card]) -> Card:
        """Give the partner's trick the most points we can spare."""
        def value(c: Card) -> int:
            v = POINTS[c]
            if c // 10 == self.trump:
                v -= 10  # trumps win tricks of their own later
            elif self._protected_seven(c):
                v += SMEAR_BONUS_SEVEN
            elif c % 10 == _ACE and self._is_master(c):
                v -= 2  # a master ace could still take a trick of its own; give a 7 first
            return v

        best = max(legal, key=lambda c: (value(c), -(c % 10)))
        return best if value(best) > 0 else min(legal, key=self._cost)

    @staticmethod
    def _card(legal: Sequence[Card], c: int) -> Card:
        for x in legal:
            if x == c:
                return x
        return legal[0]
