"""PimcBot: perfect-information Monte Carlo, the strongest bundled bot (docs/strong-bot.md).

For each move it deals the unseen cards at random, consistently with everything the
observation shows (:mod:`.sampling`), and in each such deal plays every candidate card, then
the rest of the deal: by four ``heuristic`` players who each see only their own hand and the
public play (:func:`.playout.playout`), or exactly with every hand open
(:func:`.solver.solve`) once few tricks are left. The card
with the best total over the deals is played. The same deals serve every candidate card, so the
comparison between cards is not blurred by the luck of the draw.

Arguments (``pimc:samples=64:solve=4`` wherever a bot is named):

* ``samples`` (32): deals per move. With a samples budget play is deterministic: the same
  seed and observations give the same cards.
* ``ms`` (0 = none): a time limit per move, checked between deals; play then depends on speed.
* ``solve`` (3): tricks left (the one on the table included) at or below which the rest of the
  deal is solved exactly in each sampled deal instead of played out by heuristic players.
* ``win`` (0): bonus points for a sampled outcome above 60 card points, so the bot leans
  towards winning the deal over piling up points.
* ``infer`` (0): 1 deals the unseen cards also under what the other seats' play suggests
  (:func:`.sampling.knowledge` with ``infer``); dropped for a move where it contradicts itself.
* ``eps`` (0 = off): each deal weighted by the likelihood of the opponents' plays so far under
  ``heuristic`` with this tremble (:func:`.playout.likelihood`); ``partner`` (0) 1 judges the
  partner's plays too; ``pool`` (1) draws that many deals per deal played out and resamples
  them by weight.
* ``least`` (0 = off): an adaptive budget: at least this many deals, at most ``samples``,
  stopping once the leading card is ``z`` (2.0) standard errors ahead of the next.

Over the network the referee's clock always bounds the move: at most a quarter of
``clock.left()`` (less a margin for the round trip) is spent, whatever the budget; when even
that is too little for one deal, the bot plays the :class:`HeuristicBot` card.
"""

from __future__ import annotations

import time

from sueca.engine import Card, Observation

from ..bot import Bot, MatchInfo
from .heuristic import HeuristicBot
from .playout import history, likelihood, playout
from .sampling import Knowledge, SamplingError, knowledge, sample
from .solver import close_trick, solve

__all__ = ["PimcBot"]

CLOCK_SHARE = 0.25  # the most of the referee's clock.left() one move may use
CLOCK_MARGIN_S = 0.05  # kept back for the round trip to the referee

_SUIT_OF = tuple(c // 10 for c in range(40))
_POINTS_OF = tuple((0, 0, 0, 0, 0, 2, 3, 4, 10, 11)[c % 10] for c in range(40))


class PimcBot(Bot):
    """Perfect-information Monte Carlo over sampled deals, with an exact endgame."""

    #: The arguments a spec may give (``pimc:samples=64``): name -> type.
    ARGUMENTS: dict[str, type] = {"samples": int, "ms": float, "solve": int, "win": int,
                                  "infer": int, "eps": float, "pool": int, "partner": int,
                                  "least": int, "z": float}

    def __init__(self, samples: int = 32, ms: float = 0.0, solve: int = 3, win: int = 0,
                 infer: int = 0, *, eps: float = 0.0, pool: int = 1, partner: int = 0,
                 least: int = 0, z: float = 2.0) -> None:
        if samples < 1:
            raise ValueError(f"bad samples={samples!r}: at least 1 deal per move")
        if ms < 0:
            raise ValueError(f"bad ms={ms!r}: a time limit is 0 (none) or more milliseconds")
        if not 0 <= solve <= 10:
            raise ValueError(f"bad solve={solve!r}: tricks left, 0 (never) to 10")
        if not 0 <= eps < 1:
            raise ValueError(f"bad eps={eps!r}: a tremble from 0 (inference off) to below 1")
        if pool < 1:
            raise ValueError(f"bad pool={pool!r}: at least 1 deal drawn per deal played")
        if least < 0:
            raise ValueError(f"bad least={least!r}: 0 (a fixed budget) or more deals per move")
        self.least = least
        self.z = z
        self.eps = eps
        self.partner = bool(partner)
        self.pool = pool
        self.samples = samples
        self.ms = ms
        self.solve_tricks = solve
        self.win = win
        self.infer = bool(infer)

    def on_match_start(self, info: MatchInfo) -> None:
        self._fallback = HeuristicBot()
        self._fallback.on_match_start(info)

    def redeal(self, observation: Observation) -> bool:
        return self._fallback.redeal(observation)

    def play(self, observation: Observation) -> Card:
        obs = observation
        legal = obs.legal
        if len(legal) == 1:
            return legal[0]
        start = time.monotonic()
        deadline = start + self.ms / 1000 if self.ms else float("inf")
        clock = self.clock
        if clock is not None:
            deadline = min(deadline, start + max(0.0, clock.left() * CLOCK_SHARE - CLOCK_MARGIN_S))
        first = self._fallback.play(obs)  # the heuristic's card: tried first, kept on ties
        if time.monotonic() >= deadline:
            return first
        k = knowledge(obs, self.infer)
        rng = self.rng
        try:
            hands = sample(k, rng)
        except SamplingError:  # the inferences contradict each other: drop them
            k = knowledge(obs)
            hands = sample(k, rng)
        me = obs.seat
        out = k.unseen | (k.hands[0] | k.hands[1] | k.hands[2] | k.hands[3]) & ~k.hands[me]
        moves = _distinct(legal, out)
        if len(moves) == 1:
            return moves[0]
        moves.sort(key=lambda c: c != first)
        team = me & 1
        trump = obs.trump_suit
        trick = [int(c) for _, c in obs.trick]
        leader = obs.leader
        points = obs.points
        have = points[team]
        still_out = 120 - points[0] - points[1]  # in the hands and on the table
        exact = len(obs.hand) <= self.solve_tricks  # tricks left, the one on the table included
        win = self.win
        void = list(k.void)
        dealer, trump_card = obs.dealer, obs.trump
        totals = [0.0] * len(moves)
        done = 0
        worlds = self._read(obs, k, hands, deadline) if self.eps else None
        least = self.least
        outcomes: list[list[float]] = [[] for _ in moves]
        weight = 1.0
        while True:
            if worlds is not None:
                hands, weight = worlds[done]
            table: dict[tuple[int, ...], tuple[int, int]] = {}
            for i, c in enumerate(moves):
                h = hands[:]
                h[me] ^= 1 << c
                t = trick + [c]
                lead, closed, mine = leader, 0, 0
                if len(t) == 4:
                    lead, closed = close_trick(trump, leader, t)
                    mine = closed if (lead & 1) == team else 0
                    t = []
                if exact:
                    team0 = solve(h, trump, lead, t, table)
                else:
                    v = void[:]
                    if t and _SUIT_OF[c] != _SUIT_OF[t[0]]:
                        v[me] |= 1 << _SUIT_OF[t[0]]
                    team0 = playout(h, trump, lead, t, v, dealer, trump_card)
                total = have + mine + (team0 if not team else still_out - closed - team0)
                value = weight * (total + win if total > 60 else total)
                totals[i] += value
                if least:
                    outcomes[i].append(value)
            done += 1
            if least and done >= least and not done % 4 and self._settled(totals, outcomes):
                break
            if worlds is not None:
                if done >= len(worlds) or time.monotonic() >= deadline:
                    break
                continue
            if done >= self.samples or time.monotonic() >= deadline:
                break
            hands = sample(k, rng)
        best = max(range(len(moves)), key=lambda i: (totals[i], -i))
        return moves[best]


    def _settled(self, totals: list[float], outcomes: list[list[float]]) -> bool:
        """Whether the leading card is ahead of the next by more than ``z`` standard errors of
        the mean difference over the deals so far (the same deals for both cards)."""
        order = sorted(range(len(totals)), key=lambda i: -totals[i])
        a, b = outcomes[order[0]], outcomes[order[1]]
        n = len(a)
        diffs = [x - y for x, y in zip(a, b)]
        mean = sum(diffs) / n
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
        return mean > 0 and mean * mean * n > self.z * self.z * var

    def _read(self, obs: Observation, k: Knowledge, first: list[int],
              deadline: float) -> list[tuple[list[int], float]]:
        """The deals to play out, each with its weight: ``pool`` times ``samples`` deals drawn
        (``first`` among them; fewer when ``deadline`` passes), each weighted by how likely the
        opponents' play so far was had they held it (:func:`.playout.likelihood`); with
        ``pool`` 1 those deals and weights, else ``samples`` draws among them in proportion to
        the weights, a deal drawn more than once played out once and weighted by its count."""
        plays = history(obs)
        model = (obs.trump_suit, obs.dealer, int(obs.trump), self.eps)
        me, rng = obs.seat, self.rng
        drawn = [first]
        for _ in range(self.samples * self.pool - 1):
            if time.monotonic() >= deadline:
                break
            drawn.append(sample(k, rng))
        judged = (1 << (me + 1 & 3)) | (1 << (me + 3 & 3)) | (self.partner << (me ^ 2))
        weights = [likelihood(h, plays, judged, model) for h in drawn]
        if self.pool == 1:
            return list(zip(drawn, weights))
        picks = rng.choices(range(len(drawn)), weights=weights, k=self.samples) \
            if sum(weights) > 0 else range(min(self.samples, len(drawn)))
        counts: dict[int, int] = {}
        for j in picks:
            counts[j] = counts.get(j, 0) + 1
        return [(drawn[j], float(n)) for j, n in counts.items()]


def _distinct(legal: tuple[Card, ...], out: int) -> list[Card]:
    """The legal cards that play differently: of cards of one suit with the same points and
    no card between them left in another hand, only the lowest (it keeps the others back)."""
    moves: list[Card] = []
    prev = -1
    for c in legal:  # weakest first within a suit
        if (prev >= 0 and _SUIT_OF[prev] == _SUIT_OF[c] and _POINTS_OF[prev] == _POINTS_OF[c]
                and not out & ((1 << c) - (2 << prev))):
            continue
        moves.append(c)
        prev = c
    return moves
