"""Real recorded matches for the web tests: a duplicate round-robin of the example bots, each
match played by the league's own runner (in-process bots) and recorded and rated as a worker
does it, plus a ladder match left running and a tournament whose twin halves are half done."""

from __future__ import annotations

from typing import Any

BOTS = ("random", "heuristic", "reckless")


def seed_league(store: Any, k: int = 2, tid: str = "tweb") -> dict[str, Any]:
    from sueca.arena.match_job import play_and_record
    from sueca.arena.schedule import match_spec
    from sueca.arena.tournaments import new_spec, prepare_tournament

    registry = store.bots
    for b in BOTS:
        if not registry.exists(b):
            registry.add(b)
    tid, _ = prepare_tournament(store, new_spec(list(BOTS), k, duplicate=True), tid=tid)
    mids = store.tournament_matches(tid)
    for mid in mids:
        play_and_record(store, mid, mode="local")
    store.set_tournament_status(tid, "done")
    # a second tournament with only the first half of its first pair played
    half, _ = prepare_tournament(store, new_spec(["random", "heuristic"], 2, duplicate=True),
                                 tid=tid + "-half")
    half_ids = store.tournament_matches(half)
    play_and_record(store, half_ids[0], mode="local")
    # a ladder match still running: its seats and status are public, its seed is not
    running = "ladder-running-1"
    store.create_match(running, match_spec(running, ["random", "heuristic"] * 2, seed="12345",
                                           first_dealer=0, variant={}), tournament="ladder")
    store.start_attempt(running)
    return {"tournament": tid, "matches": mids, "half": half, "half_done": half_ids[0],
            "half_pending": half_ids[1], "running": running}
