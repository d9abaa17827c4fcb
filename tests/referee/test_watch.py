"""Spectators: one who joins a running match sees exactly what one from the start saw.

Real referee process, a raw bot holding one seat (so the test sets the pace), SDK bots in the
other seats, two ``Watch`` streams: one opened before the first card, one several tricks (and a
deal) later. Everything a spectator sees is public, so a late one is owed the whole story.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from kits.net import RawBot, sessions_of, wait_for

from sueca.referee import control

pytestmark = pytest.mark.slow

LATE_AFTER_TURNS = 12  # past the first deal (10 cards each)


def test_a_late_spectator_gets_the_match_so_far_then_the_live_events(referee, random_bots, tokens):
    spy = RawBot(referee.address, "spy", tokens["spy"])
    wait_for(lambda: sessions_of(referee.address, "spy") == 1, 10, "raw bot")
    early: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    joined = {"early": threading.Event(), "late": threading.Event()}

    def spectate(name: str, seen: list[dict[str, Any]]) -> None:
        for ev in control.watch(referee.address, "watched-late", timeout=60):
            seen.append(ev)
            joined[name].set()

    with ThreadPoolExecutor(3) as pool:
        caller: list[dict[str, Any]] = []  # RunMatch's own stream: live from before the start
        fut = pool.submit(control.run_match, referee.address,
                          {"bots": ["spy", "alice", "bob", "alice"], "seed": 11,
                           "match_id": "watched-late", "variant": {"target": 8}},
                          on_event=caller.append)
        turn = spy.next_turn()  # running, and waiting for the spy
        first = pool.submit(spectate, "early", early)
        assert joined["early"].wait(10)
        turns = 0
        second = None
        while not fut.done():
            try:
                turn = spy.next_turn(timeout=0.2) if turn is None else turn
            except TimeoutError:
                continue
            if second is None and turns >= LATE_AFTER_TURNS and turn.observation.trick:
                # join with cards on the table, a deal and more into the match
                second = pool.submit(spectate, "late", late)
                assert joined["late"].wait(10)  # joined (its catch-up is queued) before we go on
            spy.play(turn)
            turn = None
            turns += 1
        result = fut.result(30)
        first.result(30)
        assert second is not None, "never found a turn with cards on the table"
        second.result(30)
    spy.close()
    assert turns > LATE_AFTER_TURNS and result["end"] == "normal"
    assert late == early                               # the same story, event for event
    assert late == [dict(e, replay=None) if e["type"] == "result" else e for e in caller]
    kinds = [e["type"] for e in late]
    assert kinds.count("deal_end") == len(result["replay"]["deals"]) >= 2
    played = [c for d in result["replay"]["deals"] for t in d["tricks"] for c in t["cards"]]
    assert [e["card"] for e in late if e["type"] == "card"] == played
