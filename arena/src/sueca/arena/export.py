"""A competition's record for anyone to check, and the check itself.

The export is JSON lines: a header (:data:`FORMAT`: the spec, the transition log, the entries,
the seed hash published at ``open`` and, once closed, the seed key), then one line per recorded
match of the competition: its ``sueca-replay/1`` record with the result the arena logged under
``result`` (a match whose replay retention removed is a :data:`RESULT` line, the result alone,
as is one whose duplicate twin is not recorded yet, its seed left out: :data:`WITHHELD`).
``sueca-arena replay verify`` re-plays the replay lines, ``sueca-arena ratings rebuild --from``
refits the competition's rating of record from the results and compares it with the header's,
and :func:`check_seeds` (``sueca-arena competition verify``) checks the seeds against the key:

* the key hashes to the ``seed_hash`` published at ``open``, so it was fixed before any match;
* every ladder match's seed is ``derive_seed(key, match_id)``, and every match of the final the
  one its tournament's schedule gives with the secret
  :func:`~sueca.arena.final.final_secret` derives from the key (the final's pairings come from
  its recorded results); a match played again after a failed attempt is dealt the retry's seed
  (:func:`~sueca.arena.seeds.reseeded`), itself a function of the scheduled one;
* every deal of a replay is the deck that seed shuffles, so no deal was picked by hand.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, cast

from sueca.arena.competitions.results import (
    RecordRating,
    competition_results,
    final_id,
    ratings_of,
    rows_of,
)
from sueca.arena.final import final_secret
from sueca.arena.ratings.fit import fit
from sueca.arena.records import ResultEntry, TournamentSpec
from sueca.arena.seeds import derive_seed, reseeded
from sueca.arena.store import Store
from sueca.arena.store.ratings import catch_up, load_matchups, stored_config
from sueca.arena.tournaments import format_schedule
from sueca.engine.game import shuffled_deck
from sueca.engine.replay import FORMAT as REPLAY
from sueca.engine.seeding import seeded_random

__all__ = ["FORMAT", "RESULT", "ExportError", "ExportHeader", "SeedProblem", "SeedReport",
           "export_lines", "write_export", "read_export", "check_seeds", "key_matches",
           "ExportRebuild", "rebuild_from_export"]

FORMAT = "sueca-competition/1"  # the header line's format
RESULT = "sueca-result/1"  # a recorded result whose replay is no longer kept
SAME = 0.01  # Elo: two fits this close are the same (the fit converges to ~2e-4 Elo)
#: why a match's seed and replay are left out: its duplicate twin, dealt the same decks, is not
#: recorded yet (the web pages hide them until then too)
WITHHELD = "its duplicate twin is not recorded yet: its seed and replay are not exported"
MAX_ATTEMPTS = 20  # re-plays of a match looked for (a worker gives up long before)


class ExportError(ValueError):
    """An export file that cannot be read as one: the message quotes the file and the line."""


class ExportHeader(TypedDict):
    format: str
    competition: str
    spec: dict[str, Any]  # Any: a CompetitionSpec as stored, JSON values
    state: str
    created: float
    log: list[dict[str, Any]]  # Any: the Transition records, JSON values
    entries: list[dict[str, Any]]  # Any: the Entry records, JSON values
    seed_hash: str
    seed_key: str | None  # revealed at close; None before
    final: str | None  # the final tournament's id, once it is scheduled
    final_spec: dict[str, Any] | None  # Any: its TournamentSpec without the secret
    elo_initial: float
    # its rating of record when exported, by version played: fit afresh from the counts the
    # arena keeps (a page's may be warm-started, its intervals from a nearby Hessian)
    ratings: dict[str, RecordRating]
    matches: int


class SeedProblem(TypedDict):
    match_id: str
    problem: str


class SeedReport(TypedDict):
    """What :func:`check_seeds` found: ``ok`` when the key matches its hash and every seed and
    deck follows from it."""

    competition: str
    key_matches_hash: bool
    checked: int  # matches whose seed was checked
    deals: int  # deals whose deck was checked against the seed
    wrong: list[SeedProblem]
    ok: bool


def key_matches(key: str, seed_hash: str) -> bool:
    """Whether ``key`` is the seed key whose sha256 was published at ``open``."""
    return hashlib.sha256(key.encode()).hexdigest() == seed_hash


def export_lines(store: Store, name: str) -> Iterator[dict[str, Any]]:  # Any: JSON lines
    """The export of competition ``name``: its header, then a line per recorded match.
    KeyError if there is no such competition (the CLI says so first)."""
    rec = store.competitions.get(name)
    if rec is None:
        raise KeyError(name)
    catch_up(store)  # the counts the header's ratings are fit from: every result folded
    results = competition_results(store, name)
    initial = stored_config(store).elo_initial
    tid = final_id(name)
    tournament = store.tournament(tid)
    final_spec = None if tournament is None else {
        k: v for k, v in tournament["spec"].items() if k != "secret"}
    header: ExportHeader = {
        "format": FORMAT, "competition": name, "spec": dict(rec["spec"]),
        "state": str(rec["state"]), "created": rec["created"],
        "log": [dict(t) for t in rec["log"]],
        "entries": [dict(e) for e in store.competitions.entries(name).values()],
        "seed_hash": rec["seed_hash"], "seed_key": rec["seed_key"],
        "final": tid if tournament is not None else None, "final_spec": final_spec,
        "elo_initial": initial, "ratings": rows_of(fit(load_matchups(store, name), initial)),
        "matches": len(results)}
    yield dict(header)
    halves = Counter(r["pair"] for r in results if r.get("pair"))
    for start in range(0, len(results), 200):
        chunk = results[start:start + 200]
        for res, replay in zip(chunk, store.replays([r["match_id"] for r in chunk])):
            if res.get("pair") and halves[res["pair"]] < 2:  # its twin's decks: not yet
                yield {"format": RESULT, "match_id": res["match_id"], "withheld": WITHHELD,
                       "result": {k: v for k, v in res.items() if k != "seed"}}
            elif replay is None:
                yield {"format": RESULT, "match_id": res["match_id"], "result": res}
            else:
                yield {**replay, "result": res}


def write_export(store: Store, name: str, path: str | Path) -> int:
    """Write the export to ``path`` (replacing it); returns the number of match lines."""
    n = -1
    with open(path, "w", encoding="utf-8") as f:
        for line in export_lines(store, name):
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
            n += 1
    return n


def read_export(path: str | Path) -> tuple[ExportHeader, list[dict[str, Any]]]:  # Any: JSON
    """The header and the match lines of an export file, or ExportError quoting the problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ExportError(f"cannot read export {str(path)!r}: "
                          f"{getattr(err, 'strerror', None) or err}") from None
    header: ExportHeader | None = None
    matches: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise ExportError(f"{str(path)!r} line {n}: not JSON ({err.msg})") from None
        if not isinstance(obj, dict):
            raise ExportError(f"{str(path)!r} line {n}: not a JSON object")
        if header is None:
            if obj.get("format") != FORMAT:
                raise ExportError(f"{str(path)!r} is not a competition export: its first line's "
                                  f"format is {str(obj.get('format'))[:40]!r}, not {FORMAT!r}")
            header = cast(ExportHeader, obj)
        elif obj.get("format") in (REPLAY, RESULT) and isinstance(obj.get("result"), dict):
            matches.append(obj)
        else:
            raise ExportError(f"{str(path)!r} line {n}: neither a replay nor a result of the "
                              f"competition (format {str(obj.get('format'))[:40]!r})")
    if header is None:
        raise ExportError(f"{str(path)!r} is empty: an export starts with a {FORMAT} line")
    return header, matches


def check_seeds(header: ExportHeader,
                matches: Sequence[Mapping[str, Any]],  # Any: the export's JSON lines
                ) -> SeedReport:
    """Check every match's seed and decks against the revealed key (see the module's
    docstring). ValueError when the key is not revealed yet (the competition is not closed)."""
    key = header.get("seed_key")
    name = header["competition"]
    if not key:
        raise ValueError(f"competition {name!r} is {header['state']}: its seed key is "
                         "revealed when it closes; verify it then")
    report: SeedReport = {"competition": name, "checked": 0, "deals": 0, "wrong": [],
                          "key_matches_hash": key_matches(key, header["seed_hash"]), "ok": False}
    if not report["key_matches_hash"]:
        report["wrong"].append({"match_id": "", "problem": (
            f"the revealed key does not hash to the seed hash published at open "
            f"({header['seed_hash'][:16]}…): every seed is suspect")})
    final_seeds = _final_seeds(header, key, [m["result"] for m in matches])
    for m in matches:
        res: ResultEntry = m["result"]
        mid = str(res["match_id"])
        want = (final_seeds.get(mid) if res.get("tournament") == header.get("final")
                else derive_seed(key, mid))
        report["checked"] += 1
        if m.get("withheld"):
            report["wrong"].append({"match_id": mid, "problem": (
                f"{m['withheld']} when exported: export the closed competition again")})
            continue
        if want is None:
            report["wrong"].append({"match_id": mid, "problem": (
                "not in the final's schedule as its recorded results pair it")})
            continue
        played = str(res.get("seed"))
        attempt = _attempt(played, want)
        if attempt is None:
            report["wrong"].append({"match_id": mid, "problem": (
                f"seed {played[:24]} logged; the key gives {want}")})
            continue
        if m.get("format") == REPLAY:
            problem = _deals_problem(m, played)
            report["deals"] += len(m.get("deals") or [])
            if problem:
                report["wrong"].append({"match_id": mid, "problem": problem})
    report["ok"] = report["key_matches_hash"] and not report["wrong"]
    return report


def _final_seeds(header: ExportHeader, key: str, results: Sequence[ResultEntry]
                 ) -> dict[str, str]:
    """Match id -> seed of the final as its schedule gives them with the key's secret."""
    tid, spec = header.get("final"), header.get("final_spec")
    if not tid or not spec:
        return {}
    full = cast(TournamentSpec, {**spec, "secret": final_secret(key, tid)})
    mine = [r for r in results if r.get("tournament") == tid]
    return {m["id"]: str(m["spec"]["seed"]) for m in format_schedule(tid, full, mine)}


def _attempt(played: str, want: str) -> int | None:
    """The attempt that played seed ``played`` when the schedule's is ``want`` (1: the first; a
    re-played match gets :func:`~sueca.arena.schedule.reseeded`'s), or None: neither."""
    for attempt in range(1, MAX_ATTEMPTS + 1):
        if str(reseeded({"seed": want}, attempt)["seed"]) == played:
            return attempt
    return None


def _deals_problem(replay: Mapping[str, Any], seed: str) -> str | None:
    """Why the replay's decks are not the ones ``seed`` shuffles, or None when they are.
    A match given its first dealer (as the arena's are) shuffles every deck from the seed; one
    that was not drew its dealer from the same generator first."""
    if str(replay.get("seed")) != seed:
        return f"the replay was played with seed {str(replay.get('seed'))[:24]}, not {seed}"
    deals = replay.get("deals") or []
    for drawn in (False, True):
        rng = seeded_random(replay.get("seed"))
        if drawn:
            while rng.getrandbits(3) >= 4:  # the engine's draw of a first dealer
                pass
        bad = next((k for k, deal in enumerate(deals, 1)
                    if deal.get("deck") != [str(c) for c in shuffled_deck(rng)]), None)
        if bad is None:
            return None
    return f"deal {bad}'s deck is not the one seed {seed} shuffles"


class ExportRebuild(TypedDict):
    """``ratings rebuild --from FILE``: the rating of record refit from an export's results,
    against the one its header records."""

    competition: str
    results: int
    ratings: dict[str, RecordRating]
    max_diff: float  # largest absolute difference over rating, interval and games
    identical: bool


def rebuild_from_export(path: str | Path) -> ExportRebuild:
    """Refit the competition's rating of record from the export's results alone and compare it
    with the one its header records (ExportError for a file that is not an export)."""
    header, matches = read_export(path)
    results: list[ResultEntry] = [m["result"] for m in matches]
    got = ratings_of(results, float(header.get("elo_initial", 1500.0)))
    want = header.get("ratings") or {}
    diff = 0.0
    for bot in set(got) | set(want):
        a, b = got.get(bot), want.get(bot)
        if a is None or b is None:
            diff = float("inf")
            break
        diff = max(diff, abs(a["rating"] - b["rating"]), abs(a["pm"] - b["pm"]),
                   float(abs(a["games"] - b["games"])))
    return {"competition": header["competition"], "results": len(results), "ratings": got,
            "max_diff": diff, "identical": diff <= SAME}
