"""Tournament formats: the pairing rules (pure: sueca.arena.pairing and the Swiss schedule of
sueca.arena.tournaments), and each format run, killed and resumed through the command line with
a real Redis, referee, worker and bots (the session's ``referee_arena``)."""

from __future__ import annotations

import json
import random
import signal
import subprocess
from collections import Counter

import pytest
from kits.arena import SUECA_ARENA, cli
from kits.wait import wait_for

from sueca.arena.pairing import (
    PairingError,
    gauntlet_pairs,
    round_robin_pairs,
    swiss_pairs,
    swiss_rounds_allowed,
)
from sueca.arena.tournaments import TournamentError, format_schedule, swiss_schedule


def _play_swiss(bots, rounds, rng):
    """A Swiss run on random outcomes; returns [(pairs, bye)] by round."""
    scores = dict.fromkeys(bots, 0.0)
    met, byes, out = set(), set(), []
    for _ in range(rounds):
        pairs, bye = swiss_pairs(bots, scores, met, byes)
        out.append((pairs, bye))
        for a, b in pairs:
            met.add(frozenset((a, b)))
            scores[rng.choice((a, b))] += 1
        if bye is not None:
            byes.add(bye)
            scores[bye] += 0.5
    return out


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16])
def test_swiss_never_repeats_a_pairing_and_seats_everyone_once_a_round(n):
    bots = [f"b{i}" for i in range(n)]
    for seed in range(60):
        seen = set()
        rounds = _play_swiss(bots, swiss_rounds_allowed(n), random.Random(seed))
        for pairs, bye in rounds:
            seated = [b for p in pairs for b in p] + ([bye] if bye else [])
            assert sorted(seated) == sorted(bots)
            assert (bye is None) == (n % 2 == 0)
            for p in pairs:
                assert frozenset(p) not in seen, (seed, rounds)
                seen.add(frozenset(p))


def test_swiss_pairs_within_score_groups_top_down():
    bots = ["a", "b", "c", "d", "e", "f"]
    scores = {"a": 0, "b": 2, "c": 0, "d": 2, "e": 1, "f": 1}
    pairs, bye = swiss_pairs(bots, scores, set(), set())
    assert pairs == [("b", "d"), ("e", "f"), ("a", "c")] and bye is None
    # b and d have met: each takes the next-ranked bot it has not met instead
    pairs, _ = swiss_pairs(bots, scores, {frozenset("bd")}, set())
    assert pairs == [("b", "e"), ("d", "f"), ("a", "c")]


def test_swiss_backtracks_rather_than_strand_the_last_pair():
    bots = ["a", "b", "c", "d"]
    # a-b and c-d met; a-c would leave b-d, which also met: a must meet d
    met = {frozenset("ab"), frozenset("cd"), frozenset("bd")}
    pairs, _ = swiss_pairs(bots, {}, met, set())
    assert pairs == [("a", "d"), ("b", "c")]


def test_byes_go_to_the_lowest_ranked_and_rotate():
    bots = ["a", "b", "c", "d", "e"]
    scores = {"a": 3, "b": 2, "c": 1, "d": 0, "e": 0}
    assert swiss_pairs(bots, scores, set(), set())[1] == "e"
    assert swiss_pairs(bots, scores, set(), {"e"})[1] == "d"
    assert swiss_pairs(bots, scores, set(), {"e", "d", "c", "b", "a"})[1] == "e"
    bots = [f"b{i}" for i in range(11)]
    for seed in range(20):
        byes = [bye for _, bye in _play_swiss(bots, swiss_rounds_allowed(11),
                                              random.Random(seed))]
        assert len(set(byes)) == len(byes) == 5  # five rounds: five different bots sit out


def test_the_rounds_allowed_are_half_the_field():
    assert [swiss_rounds_allowed(n) for n in (2, 3, 4, 5, 8, 9)] == [1, 1, 2, 2, 4, 4]


def test_repeats_only_when_no_other_pairing_exists():
    bots = ["a", "b"]
    pairs, _ = swiss_pairs(bots, {}, {frozenset("ab")}, set())
    assert pairs == [("a", "b")]


def test_gauntlet_and_round_robin_pairs():
    assert gauntlet_pairs(["x", "c", "y"], "c") == [("c", "x"), ("c", "y")]
    assert round_robin_pairs(["a", "b", "c"]) == [("a", "b"), ("a", "c"), ("b", "c")]
    with pytest.raises(PairingError, match="challenger 'zz' is not among the bots"):
        gauntlet_pairs(["a", "b"], "zz")
    with pytest.raises(PairingError, match="has no opponent"):
        gauntlet_pairs(["a"], "a")


SPEC = {"kind": "swiss", "bots": ["a", "b", "c", "d", "e"], "matches_per_pair": 2,
        "duplicate": False, "variant": {}, "limits": {}, "secret": "s", "rounds": 2}


def _result(match, winner_bot):
    seats = match["spec"]["bots"]
    return {"match_id": match["id"], "seats": seats, "winner": seats.index(winner_bot) % 2}


def test_swiss_schedule_pairs_a_round_only_once_the_last_is_recorded():
    first = format_schedule("t", SPEC)
    assert len(first) == 4  # round 1 only: two pairs of two matches, one bye
    results = [_result(m, m["spec"]["bots"][0]) for m in first[:3]]
    assert format_schedule("t", SPEC, results) == first  # one match of round 1 still to play
    results.append(_result(first[3], first[3]["spec"]["bots"][1]))
    second = format_schedule("t", SPEC, results)
    assert second[:4] == first and len(second) == 8
    assert len({m["id"] for m in second}) == 8
    assert len({m["spec"]["seed"] for m in second}) == 8
    # the same results in another order pair the same way (a resumed run)
    assert format_schedule("t", SPEC, results[::-1]) == second
    _, rounds, table = swiss_schedule("t", SPEC, results)
    assert [r["recorded"] for r in rounds] == [True, False]
    assert sum(s["score"] for s in table) == 4 + 1  # four matches won, a bye of 2 matches / 2


def test_a_bad_format_request_is_refused():
    from sueca.arena.tournaments import _shape
    spec = dict(SPEC, kind="round-robin")
    for kwargs, says in (({"fmt": "ladder"}, "bad format 'ladder'"),
                         ({"fmt": "gauntlet"}, "needs its challenger"),
                         ({"fmt": "gauntlet", "challenger": "q"}, "challenger 'q'"),
                         ({"fmt": "swiss", "rounds": 3}, "bad --rounds 3"),
                         ({"fmt": "swiss"}, "bad --rounds None"),
                         ({"fmt": "round-robin", "rounds": 2}, "--rounds 2 is for a Swiss")):
        with pytest.raises(TournamentError, match=says.replace("(", r"\(")):
            _shape(dict(spec), kwargs.pop("fmt"), kwargs.get("challenger"), kwargs.get("rounds"))


# -- through the command line, with a real arena ---------------------------------------------
def _kill_after_first_result(env, store, tid, *args):
    """Start `tournament run`, SIGKILL it once a result of ``tid`` is recorded."""
    run = subprocess.Popen([SUECA_ARENA, "tournament", "run", "--id", tid, *args], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: any(store.is_recorded(m) for m in store.tournament_matches(tid)), 60,
                 f"a first result of {tid}", interval=0.05)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(10)


@pytest.mark.slow
@pytest.mark.parametrize("fmt, args, total", [
    ("round-robin", ["--bots", "random,heuristic,reckless", "-k", "1"], 3),
    ("gauntlet", ["--bots", "heuristic,random,reckless", "-k", "2", "--format", "gauntlet",
                  "--challenger", "heuristic"], 4),
    ("swiss", ["--bots", "random,heuristic,reckless,slow,slow2", "-k", "1", "--format",
               "swiss", "--rounds", "2"], 4),
    # totals of brackets depend on the tie-breaks: checked against the bracket below
    # no two random players in one tie if it can be helped: their duplicate pairs are mirrors,
    # always level, so each such tie plays its extra pairs too
    ("knockout", ["--bots", "heuristic,random,reckless", "--format", "knockout"], None),
    ("double-elimination", ["--bots", "heuristic,random,reckless", "--format",
                            "double-elimination"], None),
])
def test_a_killed_run_is_resumed_by_its_id_and_every_match_plays_once(referee_arena, fmt, args,
                                                                      total):
    env, store = referee_arena.cli_env, referee_arena.store
    tid = f"fmt-{fmt}"
    _kill_after_first_result(env, store, tid, *args)
    report = json.loads(cli("tournament", "run", "--id", tid, "--json", env=env).stdout)
    assert report["format"] == fmt and report["failed"] == []
    if "bracket" in report:
        total = _check_bracket(report, store, tid, env)
    assert report["matches"] == report["recorded"] == total
    mids = store.tournament_matches(tid)
    assert len(mids) == total
    logged = Counter(r["match_id"] for _, r in store.results() if r.get("tournament") == tid)
    assert logged == Counter(mids)  # each match recorded exactly once
    assert all(store.match(m)["attempts"] == 1 for m in mids)
    # the cross table adds up: every recorded match counted once for each of its two bots
    assert sum(r["matches"] for r in report["standings"]) == 2 * total
    if fmt == "gauntlet":
        assert all("heuristic" in store.match(m)["spec"]["bots"] for m in mids)
    if fmt == "swiss":
        rounds = report["rounds"]
        assert [r["recorded"] for r in rounds] == [True] * 2
        pairs = [frozenset(p[:2]) for r in rounds for p in r["pairs"]]
        assert len(set(pairs)) == len(pairs) == 4  # no pair meets twice
        assert len({r["bye"] for r in rounds}) == 2  # the bye rotates
        results = [r for _, r in store.results() if r.get("tournament") == tid]
        spec = store.tournament(tid)["spec"]
        assert [m["id"] for m in format_schedule(tid, spec, results)] == mids
        table = cli("tournament", "show", tid, env=env).stdout
        assert "Swiss rounds" in table and "Swiss scores" in table
    _web_page_shows_the_format(store, tid, fmt, report)


def _check_bracket(report, store, tid, env):
    """A bracket run to its end: one champion, every tie decided, its matches those the
    bracket needs (the ids the pure schedule gives, each a duplicate pair's half); returns
    how many matches it needed."""
    b = report["bracket"]
    assert b["champion"] and all(r["decided"] for r in b["rounds"])
    places = sorted((p["place"], p["last"]) for p in b["standings"])
    assert places[0] == (1, 1) and places[-1][1] == len(b["seeds"])
    results = [r for _, r in store.results() if r.get("tournament") == tid]
    spec = store.tournament(tid)["spec"]
    scheduled = format_schedule(tid, spec, results)
    assert [m["id"] for m in scheduled] == store.tournament_matches(tid)
    assert all(m["pair"] and m["id"].startswith(f"{tid}-") for m in scheduled)
    halves = Counter(m["pair"] for m in scheduled)
    assert set(halves.values()) == {2}
    seeds = Counter(m["spec"]["seed"] for m in scheduled)
    assert set(seeds.values()) == {2} and len(seeds) == len(halves)  # a pair: one deal
    ties = [t for r in b["rounds"] for t in r["ties"] if not t["bye"]]
    assert sum(len(t["matches"]) for t in ties) == len(scheduled)
    assert [t["bye"] for t in b["rounds"][0]["ties"]] == [True, False]  # seed 1's bye
    table = cli("tournament", "show", tid, env={**env, "COLUMNS": "80"}).stdout
    assert f"Champion: {b['champion']}" in table and "Bracket standings" in table
    assert max(map(len, table.splitlines())) <= 80
    return len(scheduled)


def _web_page_shows_the_format(store, tid, fmt, report):
    from starlette.testclient import TestClient

    from sueca.arena.web.app import create_app
    with TestClient(create_app(store), raise_server_exceptions=False) as client:
        doc = client.get(f"/api/tournaments/{tid}").json()
        html = client.get(f"/tournaments/{tid}").text
    assert doc["format"]["format"] == fmt and 'id="format"' in html
    if fmt == "swiss":
        assert doc["format"]["rounds"] == json.loads(json.dumps(report["rounds"]))
        assert 'id="rounds"' in html and 'id="swiss"' in html
        for r in report["rounds"]:
            a, b, wa, wb = r["pairs"][0]
            assert f"{a} {wa}–{wb} {b}" in html
    else:
        assert 'id="rounds"' not in html
    if "bracket" in report:
        assert doc["format"]["bracket"] == json.loads(json.dumps(report["bracket"]))
        champion = report["bracket"]["champion"]
        assert f'Champion: <a href="/bots/{champion}">{champion}</a>' in html
        assert html.count("<li class=\"tie") == sum(len(r["ties"])
                                                    for r in report["bracket"]["rounds"])
    else:
        assert 'id="bracket"' not in html
    if fmt == "gauntlet":
        assert "heuristic</a> against each other bot" in html


def test_swiss_tables_fit_80_columns_with_the_bye_rule_whole() -> None:
    """The scores' explanation is a line of its own under the table, not a title cut to the
    table's width ('a bye counts' on one line, '2/2' on the next)."""
    from rich.console import Console

    from sueca.arena.cli.tournament import print_rounds
    report = {"spec": {"matches_per_pair": 2},
              "swiss": [{"bot": "heuristic", "score": 2, "byes": 0, "opponents": ["random"]},
                        {"bot": "reckless", "score": 1, "byes": 1, "opponents": []},
                        {"bot": "random", "score": 0, "byes": 0, "opponents": ["heuristic"]}],
              "rounds": [{"round": 1, "recorded": True, "bye": "reckless",
                          "pairs": [["random", "heuristic", 0, 2]]}]}
    screen = Console(width=80, record=True, color_system=None)
    print_rounds(report, screen)  # type: ignore[arg-type]
    lines = screen.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "score: matches won; a bye counts 1 (half a round's 2 matches)" in lines
    assert "Swiss scores" in lines[0] and "Swiss rounds" in "\n".join(lines)


def test_a_field_with_room_for_one_swiss_round_says_one_round() -> None:
    from sueca.arena.tournaments import _shape
    spec = dict(SPEC, kind="round-robin", bots=["a", "b", "c"])
    with pytest.raises(TournamentError, match=r"3 bots plays 1 round \(at most half"):
        _shape(spec, "swiss", None, 2)


def test_the_bot_with_the_bye_is_in_the_standings(store) -> None:
    """A Swiss round of three bots: one match and a bye; the standings (report, CLI table, web
    page) list the whole field, the bye's bot with no match yet."""
    from rich.console import Console
    from starlette.testclient import TestClient

    from sueca.arena.cli.tournament import print_table
    from sueca.arena.match_job import outcome_to_result
    from sueca.arena.tournaments import tournament_report
    from sueca.arena.web.app import create_app
    spec = {**SPEC, "bots": ["a", "b", "c"], "matches_per_pair": 1, "rounds": 1}
    store.create_tournament("bye", spec, format_schedule)
    [mid] = store.tournament_matches("bye")
    store.record_result(mid, outcome_to_result(store.match(mid), {
        "end": "normal", "winner": 0, "game_points": [4, 0], "replay": None,
        "fault_seat": None, "fault_bot": None}))
    report = tournament_report(store, "bye")
    [bye] = [r["bye"] for r in report["rounds"]]
    rows = {r["bot"]: r for r in report["standings"]}
    assert set(rows) == {"a", "b", "c"} and bye not in store.match(mid)["spec"]["bots"]
    assert (rows[bye]["units"], rows[bye]["points"], rows[bye]["win_pct"]) == (0, 0.0, None)
    screen = Console(width=80, record=True, color_system=None)
    print_table(report, screen)
    standings = screen.export_text().split("Swiss")[0]
    assert f"│ {bye} " in standings, standings
    with TestClient(create_app(store)) as client:
        html = client.get("/tournaments/bye").text
    table = html.split('id="standings"')[1].split("</table>")[0]
    assert f'href="/bots/{bye}"' in table, table


def _record_bracket(store, tid, winner_of):
    """Record every match of ``tid``'s schedule that is not recorded yet, the winner chosen by
    ``winner_of(seats)`` (a bot, or None for no winner), game points 4 to 2; returns how many."""
    from sueca.arena.match_job import outcome_to_result
    done = 0
    for mid in store.tournament_matches(tid):
        if store.is_recorded(mid):
            continue
        m = store.match(mid)
        seats = m["spec"]["bots"]
        won = winner_of(seats)
        team = None if won is None else seats.index(won) % 2
        store.record_result(mid, outcome_to_result(m, {
            "end": "normal", "winner": team,
            "game_points": [4, 2] if team == 0 else [2, 4] if team == 1 else [3, 3],
            "replay": None, "fault_seat": None, "fault_bot": None}))
        done += 1
    return done


def test_a_knockout_through_the_store_the_table_and_the_page(store) -> None:
    """A knockout of five (three byes) paired round by round by `tournament_bracket` and
    `format_schedule` from recorded results in a real Redis, the lower seed winning every
    match; its report, its CLI table at 80 columns and its web page."""
    from rich.console import Console
    from starlette.testclient import TestClient

    from sueca.arena.cli.tournament import print_table
    from sueca.arena.tournaments import new_spec, schedule_of, tournament_report
    from sueca.arena.web.app import create_app
    bots = ["a", "b", "c", "d", "e"]
    spec = new_spec(bots, 2, fmt="knockout", best_of=1)
    assert (spec["best_of"], spec["matches_per_pair"], spec["duplicate"]) == (1, 2, True)
    store.create_tournament("ko", spec, format_schedule)
    # d-e, and b-c at once: both had byes, their semi-final is ready; a waits for d or e
    assert [m.split("-", 1)[1] for m in store.tournament_matches("ko")] == [
        "W1-2-0a", "W1-2-0b", "W2-2-0a", "W2-2-0b"]
    rounds = 0
    while True:
        store.create_tournament("ko", spec, schedule_of(store))
        if not _record_bracket(store, "ko", lambda seats: max(seats)):
            break
        rounds += 1
    assert rounds == 3
    report = tournament_report(store, "ko")
    b = report["bracket"]
    assert b["champion"] == "e" and report["recorded"] == report["matches"] == 8
    assert [(p["bot"], p["place"], p["last"]) for p in b["standings"]] == [
        ("e", 1, 1), ("c", 2, 2), ("a", 3, 4), ("b", 3, 4), ("d", 5, 5)]
    screen = Console(width=80, record=True, color_system=None)
    print_table(report, screen)
    text = screen.export_text()
    assert max(map(len, text.splitlines())) <= 80
    assert "Champion: e" in text and "W1-2  d (4) 0–2 e (5): e, matches won" in text
    assert "knockout, ties of 1 duplicate pair" in text
    with TestClient(create_app(store)) as client:
        doc = client.get("/api/tournaments/ko").json()
        html = client.get("/tournaments/ko").text
    assert doc["format"]["bracket"] == json.loads(json.dumps(b))
    assert 'id="bracket"' in html and 'id="champion"' in html and 'id="tie-W3-1"' in html
    final = html.split('id="tie-W3-1"')[1].split("</li>")[0]
    assert 'class="side won"' in final and 'href="/bots/e"' in final
    assert 'href="/matches/ko-W3-1-0a"' in final
    assert html.count('class="tie"') + html.count('class="tie playing"') == 7  # 4 + 2 + 1


def test_advance_pairs_the_next_round_once_for_two_callers(store, monkeypatch) -> None:
    """`advance` from two threads at once, each time a round is recorded: the matches of the
    next round are queued once between them (the tournament's lock and the claims), and a
    call with nothing new queues nothing. The queue is Celery's, caught here: what it was
    asked to run is what is checked."""
    import threading

    import sueca.arena.tasks
    from sueca.arena.tournaments import advance, new_spec, prepare_tournament
    queued: list[str] = []
    monkeypatch.setattr(sueca.arena.tasks, "enqueue", lambda mids, mode=None: queued.extend(mids))
    for b in "abcd":
        store.bots.add(b)
    tid, _ = prepare_tournament(store, new_spec(list("abcd"), 2, fmt="double-elimination"),
                                tid="de")
    got = advance(store, tid)
    assert sorted(got) == sorted(store.tournament_matches(tid)) and len(got) == 4
    assert advance(store, tid) == []  # idempotent
    while _record_bracket(store, tid, lambda seats: min(seats)):
        answers: list[list[str]] = []
        threads = [threading.Thread(target=lambda got=answers: got.append(advance(store, tid)))
                   for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        new = [m for a in answers for m in a]
        assert len(new) == len(set(new))
    assert Counter(queued) == Counter(store.tournament_matches(tid))
    assert set(Counter(queued).values()) == {1}


def test_a_bad_bracket_request_is_refused_before_anything_is_stored() -> None:
    """--best-of belongs to the brackets, --matches-per-pair to the others: each mistake is a
    one-line error quoting the option (exit 2), said before Redis is asked."""
    from sueca.arena.tournaments import new_spec
    with pytest.raises(TournamentError, match="--best-of 2 is for a knockout"):
        new_spec(["a", "b"], 2, fmt="round-robin", best_of=2)
    with pytest.raises(TournamentError, match="bad --best-of 0"):
        new_spec(["a", "b"], 2, fmt="knockout", best_of=0)
    run = cli("tournament", "run", "--bots", "a,b", "--format", "knockout", "-k", "4",
              env={"SUECA_REDIS_URL": "redis://127.0.0.1:1/0", "PATH": "/usr/bin:/bin"},
              check=2)
    assert "--matches-per-pair 4 is not for a knockout: its ties are --best-of N" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
