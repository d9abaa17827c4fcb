"""The league's in-process runner (``run_local``, ``SUECA_RUNNER=local``): a bot that raises, or
whose hook raises, loses its match as its own seat's ``bot_error``, with the first line of its
error (escaped, capped) as ``fault_detail``; the match is recorded exactly once, in a real
Redis, and the task does not fail."""

from __future__ import annotations

import pytest
from kits.bots import DIR as BOT_DIR

from sueca.arena.match_job import play_and_record, run_local

BOTS = BOT_DIR / "faulty.py"


@pytest.fixture(autouse=True)
def faulty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUECA_LOCAL_BOTS", f"crash={BOTS}:RaisesOnThirdCard,"
                                           f"hooky={BOTS}:HookRaises")


@pytest.mark.parametrize("seat", range(4))
def test_a_raising_bot_is_its_seats_bot_error(seat: int) -> None:
    bots = ["random"] * 4
    bots[seat] = "crash"
    out = run_local({"bots": bots, "seed": "5", "match_id": "m"})
    assert (out["end"], out["fault_seat"], out["fault_bot"]) == ("bot_error", seat, "crash")
    assert out["winner"] == 1 - seat % 2
    assert out["fault_detail"] == r"RuntimeError: third card\x1b[31m is too many"
    tricks = out["replay"]["deals"][-1]["tricks"]  # two played, the third stopped at its turn
    last = tricks[-1]
    to_play = last["winner"] if len(last["cards"]) == 4 else \
        (last["leader"] + len(last["cards"])) % 4
    assert to_play == seat and 8 <= sum(len(t["cards"]) for t in tricks) < 12, tricks


def test_a_raising_hook_is_its_own_seats_bot_error() -> None:
    out = run_local({"bots": ["random", "random", "hooky", "random"], "seed": "5",
                     "match_id": "m"})
    assert (out["end"], out["fault_seat"], out["fault_detail"]) == ("bot_error", 2,
                                                                    "KeyError: 'hook'")


def test_the_match_is_recorded_once_as_bot_error(store) -> None:
    from sueca.arena.schedule import round_robin, tournament_spec
    spec = tournament_spec(["crash", "random"], 1, False, {})
    store.create_tournament("faulty", spec, round_robin)
    (mid,) = store.tournament_matches("faulty")
    before = store.results_count()
    done = play_and_record(store, mid, mode="local")
    assert (done["status"], done["end"]) == ("recorded", "bot_error")
    result = store.result_of(mid)
    assert result is not None and result["fault_bot"] == "crash"
    assert result["fault_detail"] == r"RuntimeError: third card\x1b[31m is too many"
    assert play_and_record(store, mid, mode="local")["status"] == "skipped"
    assert store.results_count() == before + 1
