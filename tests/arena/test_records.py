"""The league's records as a real Redis holds them have exactly the keys their TypedDicts
(sueca.arena.records) name: every required key, and nothing the type does not name. A key
added to a record without its type, or a type key no record writes any more, fails here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sueca.arena import records


def _conforms(record: Mapping[str, Any] | None, kind: Any) -> None:
    assert record is not None
    keys = set(record)
    missing = kind.__required_keys__ - keys
    extra = keys - kind.__required_keys__ - kind.__optional_keys__
    assert not missing and not extra, (kind.__name__, sorted(missing), sorted(extra), record)


def test_notrequired_keys_are_optional_at_runtime() -> None:
    """What the checks below rest on (strings as annotations would make them required)."""
    # fault_detail is written only for a match a bot's own error ended; competition and
    # versions only for a match of a competition, or of a bot past its first version
    assert records.ResultEntry.__optional_keys__ == {"seed", "stats", "seconds", "fault_detail",
                                                     "competition", "versions"}
    assert "hist" in records.SeatStats.__optional_keys__
    assert records.SeatStats.__required_keys__ == {"moves"}


def test_a_recorded_match_and_its_tournament_match_their_types(store) -> None:
    from sueca.arena.leaderboard import BoardRow, leaderboard
    from sueca.arena.match_job import play_and_record
    from sueca.arena.schedule import round_robin, tournament_spec
    from sueca.arena.tournaments import _counts

    spec = tournament_spec(["random", "heuristic"], 2, True, {})
    store.create_tournament("typed", spec, round_robin)
    _conforms(store.tournament("typed"), records.TournamentRecord)
    first, second = store.tournament_matches("typed")
    _conforms(store.match(first), records.MatchRecord)          # pending
    _conforms(store.progress("typed"), records.Progress)
    attempt, running = store.start_attempt(first, referee="local")
    assert attempt == 1
    _conforms(running, records.MatchRecord)                     # running, leased
    store.release_lease(first, running["owner"])
    for job in (play_and_record(store, first, mode="local"),
                play_and_record(store, second, mode="local"),
                play_and_record(store, second, mode="local")):  # recorded, recorded, skipped
        _conforms(job, records.JobResult)
        assert isinstance(job["status"], records.JobStatus)
    done = store.match(second)
    _conforms(done, records.MatchRecord)                        # recorded
    assert {"result", "end", "referee", "owner"} <= set(done)
    for m in store.recent_matches(tournament="typed"):
        _conforms(m, records.MatchRecord)

    entries = [e for _, e in store.results()] + store.tournament_results("typed")
    entries.append(store.result_of(first))
    assert len(entries) == 5
    for entry in entries:
        _conforms(entry, records.ResultEntry)
        assert {"seed", "stats", "seconds"} <= set(entry)       # a new entry has them all
        for seat in entry["stats"]:
            _conforms(seat, records.SeatStats)
    progress = store.progress("typed")
    _conforms(progress, records.Progress)
    assert progress == _counts(dict.fromkeys((first, second), "done"))
    for health in store.bot_stats(["random", "heuristic", "never-played"]).values():
        _conforms(health, records.BotHealth)

    registry = store.bots
    for name in ("random", "heuristic"):
        registry.add(name)
    rows = leaderboard(store)
    assert [r["bot"] for r in rows] and len(rows) == 2
    for row in rows:
        _conforms(row, BoardRow)


def test_a_local_outcome_matches_its_type() -> None:
    """What match_job.run_match returns (here the in-process runner): an Outcome, its end an End."""
    from sueca.arena.match_job import run_match
    from sueca.engine import End
    out = run_match({"match_id": "o1", "bots": ["random", "heuristic"] * 2, "seed": 3},
                    "local")
    _conforms(out, records.Outcome)
    assert isinstance(out["end"], End) and out["replay"] is not None


def test_seat_stats_with_turn_times_and_every_fault_match_their_type() -> None:
    """The referee's turn times (which the local runner has not) and each fault kind."""
    from sueca.arena.botstats import seat_stats
    times = {0: [1200, 3400, 90_000], 1: [500]}
    for end in ("timeout", "disconnect", "renuncia"):
        stats = seat_stats(4, end, fault_seat=1, replay=None, times=times)
        for seat in stats:
            _conforms(seat, records.SeatStats)
        assert {"turns", "p50_ms", "p99_ms", "max_ms", "hist"} <= set(stats[0])
        assert end + "s" in stats[1]


def test_an_entry_written_before_stats_and_seed_still_conforms(store) -> None:
    """An old arena's entry (no seed, stats or seconds) is read back as a ResultEntry."""
    old = {"match_id": "old", "tournament": "", "pair": "", "seats": ["a", "b", "a", "b"],
           "end": "normal", "winner": 0, "game_points": [1, 0], "fault_seat": None,
           "fault_bot": None, "deals": 1, "referee": "", "replicas": 0, "variant": {},
           "time": 1.0, "rated": True}
    store.create_match("old", {"bots": old["seats"]})
    assert store.record_result("old", old)[0]
    _conforms(store.result_of("old"), records.ResultEntry)
