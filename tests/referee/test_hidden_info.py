"""No message to a bot ever carries another seat's unplayed card, nor links the seats of one
match: checked on the wire bytes.

A raw gRPC bot sits in two seats of many concurrent matches and keeps every RefereeMessage as
the exact bytes received. Afterwards each message is decoded and every card in it is checked
against the match's replay: a card is either the seat's own, already played at that moment, or
the turned trump card (public by the rules). Every field that appears must be one this test
knows, so a new field cannot slip past it unreviewed.

Game ids are opaque, so these tests find a game's match the way only a referee's records allow:
the one match whose replay dealt that seat the hand of the game's first turn.

Partners: round-robin seats one program as both partners, so the protocol must not say which of
its games are one match (game ids unrelated, no match id anywhere), and two sessions of a bot get
one partner seat each.
"""

from __future__ import annotations

import os
import random
from concurrent.futures import ThreadPoolExecutor
from itertools import combinations

import pytest
from kits.net import RawBot, play_until_done, sessions_of, wait_for

from sueca.engine import parse_card
from sueca.referee import control
from sueca.v1 import sueca_pb2 as pb

pytestmark = pytest.mark.slow

MATCHES = 24
AT_ONCE = 6

# Every field path a bot may receive; the ones holding cards are checked card by card.
CARD_FIELDS = {"turns.observation.hand", "turns.observation.legal", "turns.observation.trump",
               "turns.observation.trick.card", "turns.observation.tricks.cards",
               "events.trick_end.cards"}
OTHER_FIELDS = {
    "turns.game_id", "turns.request_id", "turns.kind", "turns.deadline_ms", "turns.move_ms",
    "turns.bank_ms", "turns.observation.seat", "turns.observation.trump_suit",
    "turns.observation.trump_held", "turns.observation.dealer", "turns.observation.leader",
    "turns.observation.trick.seat", "turns.observation.tricks.leader",
    "turns.observation.tricks.winner", "turns.observation.tricks.points",
    "turns.observation.points", "turns.observation.game_points", "turns.observation.held_over",
    "turns.observation.deal_number", "events.game_id", "events.match_start.seat", "events.match_start.seats", "events.match_start.bot_seed",
    "events.match_start.variant.trump_card", "events.match_start.variant.tie",
    "events.match_start.variant.bandeira", "events.match_start.variant.target",
    "events.match_start.variant.weak_hand_redeal", "events.match_start.variant.direction",
    "events.trick_end.leader", "events.trick_end.winner", "events.trick_end.points",
    "events.deal_end.number", "events.deal_end.dealer", "events.deal_end.end",
    "events.deal_end.points", "events.deal_end.game_points", "events.deal_end.fault_seat",
    "events.match_end.game_points", "events.match_end.winner", "events.match_end.end",
    "events.match_end.fault_seat", "events.match_end.fault_bot", "welcome.referee_id",
    "welcome.capacity", "errors.game_id", "errors.request_id", "errors.code", "errors.message",
}


def fields(msg, prefix=""):
    """(path, value) for every scalar set anywhere in ``msg``."""
    for fd, value in msg.ListFields():
        path = f"{prefix}{fd.name}"
        items = value if fd.is_repeated else [value]
        for item in items:
            if fd.message_type is not None:
                yield from fields(item, path + ".")
            else:
                yield path, item


def test_no_message_carries_another_seats_unplayed_card(referee, random_bots, tokens):
    spy = RawBot(referee.address, "spy", tokens["spy"], capacity=2 * AT_ONCE)
    wait_for(lambda: sessions_of(referee.address, "spy") == 1, 10, "spy session")
    rng = random.Random(5)
    specs = [{"bots": ["spy", "alice", "spy", "bob"] if k % 2 else ["bob", "spy", "alice", "spy"],
              "seed": 1000 + k, "match_id": f"hidden-{k}"} for k in range(MATCHES)]
    with ThreadPoolExecutor(AT_ONCE) as pool:
        futures = [pool.submit(control.run_match, referee.address, s, 120) for s in specs]
        play_until_done([spy], futures, rng)
        results = {r["match_id"]: r for r in (f.result(10) for f in futures)}
    spy.close()
    assert all(r["end"] == "normal" for r in results.values())

    games = games_of(spy.raw, results)
    assert len(games) == MATCHES * 2
    turns_checked = 0
    for data in spy.raw:
        msg = pb.RefereeMessage.FromString(data)  # the bytes as they came off the wire
        paths = {p for p, _ in fields(msg)}
        assert paths <= CARD_FIELDS | OTHER_FIELDS, paths - CARD_FIELDS - OTHER_FIELDS
        for turn in msg.turns:
            check_turn(turn, games)
            turns_checked += 1
        for ev in msg.events:
            if ev.HasField("trick_end"):
                check_trick_event(ev, games)
    assert turns_checked > MATCHES * 2 * 10


def _mine_played(obs, seat):
    """The cards ``seat`` has played this deal, as the observation shows them."""
    return ({c for t in obs.tricks for k, c in enumerate(t.cards) if (t.leader + k) % 4 == seat}
            | {p.card for p in obs.trick if p.seat == seat})


def _dealt(result, number, seat):
    """The cards ``seat`` was dealt in deal ``number`` of a match (none if it had no such deal)."""
    deals = result["replay"]["deals"]
    if number >= len(deals):
        return set()
    return {int(parse_card(c)) for c in deals[number]["hands"][seat]}


def games_of(raw, results):
    """Game id -> (the result of its match, its seat), from the bytes a raw bot received: the
    seat from the game's match start, the match as the only one whose replay dealt that seat the
    hand of the game's first turn. Fails if a game fits no match, or several."""
    seats, games = {}, {}
    for data in raw:
        msg = pb.RefereeMessage.FromString(data)
        for ev in msg.events:
            if ev.HasField("match_start"):
                seats.setdefault(ev.game_id, ev.match_start.seat)
        for turn in msg.turns:
            gid, obs = turn.game_id, turn.observation
            if gid in games:
                continue
            seat = seats[gid]  # the match start comes first
            held = set(obs.hand) | _mine_played(obs, seat)
            fits = [r for r in results.values() if _dealt(r, obs.deal_number, seat) == held]
            assert len(fits) == 1, f"game {gid} fits {len(fits)} matches"
            games[gid] = (fits[0], seat)
    return games


def check_turn(turn, games):
    obs = turn.observation
    result, seat = games[turn.game_id]
    deal = result["replay"]["deals"][obs.deal_number]
    assert obs.seat == seat
    start_hand = _dealt(result, obs.deal_number, seat)
    tricks = [list(t.cards) for t in obs.tricks]
    replay_tricks = [[int(parse_card(c)) for c in t["cards"]] for t in deal["tricks"]]
    assert tricks == replay_tricks[:len(tricks)]  # completed tricks: exactly the public record
    current = [p.card for p in obs.trick]
    assert current == replay_tricks[len(tricks)][:len(current)]
    played = {c for t in tricks for c in t} | set(current)
    assert set(obs.hand) == start_hand - _mine_played(obs, seat)
    assert set(obs.legal) <= set(obs.hand)
    trump = int(parse_card(deal["trump"]))
    assert obs.trump == trump
    for path, value in fields(turn, "turns."):
        if path in CARD_FIELDS:
            assert value in start_hand or value in played or value == trump, (
                f"{turn.game_id}: {path} carries card {value}, another seat's unplayed card")


def check_trick_event(ev, games):
    result, _ = games[ev.game_id]
    tricks = [[int(parse_card(c)) for c in t["cards"]]
              for d in result["replay"]["deals"] for t in d["tricks"]]
    assert list(ev.trick_end.cards) in tricks


# -- partners are not linked -------------------------------------------------------------------

def _common_affix(a: str, b: str) -> int:
    """The longer of the common prefix and the common suffix of two strings."""
    prefix = len(os.path.commonprefix([a, b]))
    suffix = len(os.path.commonprefix([a[::-1], b[::-1]]))
    return max(prefix, suffix)


def test_game_ids_are_opaque_and_no_bot_is_told_the_match_id(referee, tokens):
    """Two raw bots hold all four seats of three matches, each bot both partners of its team on
    one stream: the four ids of a match are unrelated random strings, and the match id is in no
    byte either bot receives. The operator's side (RunMatch) still names the match."""
    north = RawBot(referee.address, "north", tokens["north"], capacity=6)
    east = RawBot(referee.address, "east", tokens["east"], capacity=6)
    for name in ("north", "east"):
        wait_for(lambda n=name: sessions_of(referee.address, n) == 1, 10, f"{name} session")
    specs = [{"bots": ["north", "east", "north", "east"], "seed": 300 + k,
              "match_id": f"linked-match-{k}"} for k in range(3)]
    operator_events: list[dict] = []
    with ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(control.run_match, referee.address, s, 120,
                               on_event=operator_events.append if k == 0 else None)
                   for k, s in enumerate(specs)]
        play_until_done([north, east], futures, random.Random(8))
        results = {r["match_id"]: r for r in (f.result(10) for f in futures)}
    north.close()
    east.close()
    assert all(r["end"] == "normal" for r in results.values())

    raw = north.raw + east.raw
    for data in raw:
        assert b"linked-match" not in data, data  # not in an event, a turn, nor an error
    games = games_of(north.raw, results) | games_of(east.raw, results)
    assert len(games) == 12
    for mid in results:
        ids = {seat: gid for gid, (r, seat) in games.items() if r["match_id"] == mid}
        assert sorted(ids) == [0, 1, 2, 3], ids
        for a, b in combinations(ids.values(), 2):
            # 64 random bits each: six shared characters at either end is a 1 in 16 million
            # chance per pair; "{match_id}/{seat}" would share the whole match id
            assert _common_affix(a, b) < 6, (mid, a, b)
        assert all(len(gid) >= 16 and mid not in gid for gid in ids.values()), ids
    assert operator_events and {e["match_id"] for e in operator_events} == {"linked-match-0"}
    assert operator_events[0]["type"] == "started" and operator_events[-1]["type"] == "result"


def _seats_on(bot: RawBot) -> list[int]:
    """The seats whose match start reached this raw bot's stream so far (already-read
    messages count too: ``raw`` keeps every one)."""
    return sorted(e.match_start.seat for data in bot.raw
                  for e in pb.RefereeMessage.FromString(data).events
                  if e.HasField("match_start"))


def test_partner_seats_go_to_different_sessions_of_their_bot(referee, random_bots, tokens):
    """A bot with two sessions gets one partner seat on each, even when one session has far
    more room (by room alone both would go to the big one); with one session, both go there."""
    big = RawBot(referee.address, "twin", tokens["twin"], capacity=8)
    wait_for(lambda: sessions_of(referee.address, "twin") == 1, 10, "first twin session")
    small = RawBot(referee.address, "twin", tokens["twin"], capacity=2)
    wait_for(lambda: sessions_of(referee.address, "twin") == 2, 10, "second twin session")
    with ThreadPoolExecutor(2) as pool:
        for k, bots in enumerate((["twin", "alice", "twin", "bob"],
                                  ["alice", "twin", "bob", "twin"])):
            fut = pool.submit(control.run_match, referee.address,
                              {"bots": bots, "seed": 400 + k, "match_id": f"twin-{k}"}, 60)
            play_until_done([big, small], [fut])
            assert fut.result(10)["end"] == "normal"
        assert _seats_on(big) == [0, 1] and _seats_on(small) == [2, 3]

        small.close()
        wait_for(lambda: sessions_of(referee.address, "twin") == 1, 10, "one twin session")
        fut = pool.submit(control.run_match, referee.address,
                          {"bots": ["twin", "alice", "twin", "bob"], "seed": 402}, 60)
        play_until_done([big], [fut])
        assert fut.result(10)["end"] == "normal"
        assert _seats_on(big) == [0, 0, 1, 2]  # the fallback: both partners on one session
    big.close()
