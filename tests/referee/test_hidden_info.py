"""No message to a bot ever carries another seat's unplayed card: checked on the wire bytes.

A raw gRPC bot sits in two seats of many concurrent matches and keeps every RefereeMessage as
the exact bytes received. Afterwards each message is decoded and every card in it is checked
against the match's replay: a card is either the seat's own, already played at that moment, or
the turned trump card (public by the rules). Every field that appears must be one this test
knows, so a new field cannot slip past it unreviewed.
"""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from netkit import RawBot, sessions_of, wait_for

from referee import control
from referee.engine import parse_card
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
    "turns.observation.deal_number", "events.game_id", "events.match_start.match_id",
    "events.match_start.seat", "events.match_start.seats", "events.match_start.bot_seed",
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
        deadline = time.monotonic() + 120
        while not all(f.done() for f in futures) and time.monotonic() < deadline:
            try:
                msg = spy.next_message(timeout=0.5)
            except Exception:
                continue
            assert msg is not None, spy.status
            actions = [pb.Action(game_id=t.game_id, request_id=t.request_id,
                                 card=rng.choice(list(t.observation.legal))) for t in msg.turns]
            if actions:
                spy.send(pb.BotMessage(actions=actions))
        results = {r["match_id"]: r for r in (f.result(10) for f in futures)}
    spy.close()
    assert all(r["end"] == "normal" for r in results.values())

    turns_checked = 0
    for data in spy.raw:
        msg = pb.RefereeMessage.FromString(data)  # the bytes as they came off the wire
        paths = {p for p, _ in fields(msg)}
        assert paths <= CARD_FIELDS | OTHER_FIELDS, paths - CARD_FIELDS - OTHER_FIELDS
        for turn in msg.turns:
            check_turn(turn, results)
            turns_checked += 1
        for ev in msg.events:
            if ev.HasField("trick_end"):
                check_trick_event(ev, results)
    assert turns_checked > MATCHES * 2 * 10


def _deal(results, game_id, number):
    match_id, _, seat = game_id.rpartition("/")
    return results[match_id]["replay"]["deals"][number], int(seat)


def check_turn(turn, results):
    obs = turn.observation
    deal, seat = _deal(results, turn.game_id, obs.deal_number)
    assert obs.seat == seat
    start_hand = {int(parse_card(c)) for c in deal["hands"][seat]}
    tricks = [list(t.cards) for t in obs.tricks]
    replay_tricks = [[int(parse_card(c)) for c in t["cards"]] for t in deal["tricks"]]
    assert tricks == replay_tricks[:len(tricks)]  # completed tricks: exactly the public record
    current = [p.card for p in obs.trick]
    assert current == replay_tricks[len(tricks)][:len(current)]
    played = {c for t in tricks for c in t} | set(current)
    mine_played = {c for t in obs.tricks for k, c in enumerate(t.cards)
                   if (t.leader + k) % 4 == seat} | {p.card for p in obs.trick if p.seat == seat}
    assert set(obs.hand) == start_hand - mine_played
    assert set(obs.legal) <= set(obs.hand)
    trump = int(parse_card(deal["trump"]))
    assert obs.trump == trump
    for path, value in fields(turn, "turns."):
        if path in CARD_FIELDS:
            assert value in start_hand or value in played or value == trump, (
                f"{turn.game_id}: {path} carries card {value}, another seat's unplayed card")


def check_trick_event(ev, results):
    match_id = ev.game_id.rpartition("/")[0]
    tricks = [[int(parse_card(c)) for c in t["cards"]]
              for d in results[match_id]["replay"]["deals"] for t in d["tricks"]]
    assert list(ev.trick_end.cards) in tricks
