"""A competition's final event: its top entrants by the competition's rating of record, seeded
in that order, play the format its spec names (a knockout, a double elimination or a round
robin; each tie ``best_of`` duplicate pairs) as the tournament :func:`final_id`, with the
competition's variant and limits and the versions frozen at the freeze.

The tournament's secret is :func:`final_secret` of the competition's seed key, so its seeds are
committed by the hash published at ``open`` like the ladder's, and the key revealed at close
recomputes them all (:func:`sueca.arena.export.check_seeds`). Everything here is
idempotent: :func:`start` finds the stored final, and :func:`advance` pairs the next round only
once the last is recorded, so the scheduler's loop and ``competition final --wait`` may both
call them, any number of times, after any crash.
"""

from __future__ import annotations

import hashlib
import time
from typing import TypedDict

from sueca.arena import lifecycle, tournaments
from sueca.arena.brackets import FORMATS
from sueca.arena.competitions.results import final_id
from sueca.arena.lifecycle import CompetitionError, State
from sueca.arena.records import CompetitionRecord, TournamentSpec
from sueca.arena.schedule import same_tournament
from sueca.arena.store import Store, TournamentConflict
from sueca.arena.store.fairplay import suspended_in
from sueca.arena.store.ratings import fit_of_record
from sueca.arena.tournaments import (
    TournamentError,
    new_spec,
    prepare_tournament,
    schedule_of,
    wait_for,
)
from sueca.engine import Variant

__all__ = ["FINAL_FORMATS", "FinalProgress", "final_id", "final_secret", "seeding", "final_spec",
           "start", "advance", "wait", "progress", "check_closable", "tick"]

#: the finals a competition can hold (the spec's ``final.format`` may also be ``none``)
FINAL_FORMATS = tuple(f for f in lifecycle.FINAL_FORMATS if f != "none")


class FinalProgress(TypedDict):
    competition: str
    tournament: str
    format: str
    seeds: list[str]  # best first
    total: int  # matches scheduled so far
    recorded: int
    failed: int
    done: bool  # every round played: nothing left to pair or to play


def final_secret(key: str, tid: str) -> str:
    """The final tournament's secret: from the competition's seed key, so that the key revealed
    at close recomputes every seed of the final as well."""
    return hashlib.sha256(f"{key}:{tid}".encode()).hexdigest()[:32]


def seeding(store: Store, name: str) -> list[str]:
    """The entrants who play the final, best first: by the competition's rating of record (of
    the versions fixed at the freeze; unrated entrants last, in the order they entered), the
    first ``final.top`` of them. A bot suspended when the final starts does not qualify (it
    could not be scheduled): the next one takes its place."""
    rec = _competition(store, name)
    entries = store.competitions.entries(name)
    held = suspended_in(store, list(entries), competition=name)  # as its ladder leaves out
    fit = fit_of_record(store, name)
    order = sorted((e for e in entries.values() if e["bot"] not in held), key=lambda e: (
        e["bot"] not in fit.rating, -fit.rating.get(e["bot"], 0.0), e["entered"], e["bot"]))
    top = rec["spec"]["final"].get("top")
    return [e["bot"] for e in order][:top]


def final_spec(store: Store, name: str) -> TournamentSpec:
    """The final's tournament spec, from the competition's spec, its seeding and its key."""
    rec = _competition(store, name)
    final = rec["spec"]["final"]
    if final["format"] not in FINAL_FORMATS:
        raise CompetitionError(f"competition {name!r} has no final (format "
                               f"{final['format']!r}): close it instead")
    seeds = seeding(store, name)
    try:
        spec = new_spec(seeds, 2 * int(final["best_of"]), duplicate=True,
                        variant=Variant.from_dict(rec["spec"]["variant"]),
                        limits=rec["spec"].get("limits"), fmt=final["format"],
                        best_of=int(final["best_of"]) if final["format"] in FORMATS else None)
    except TournamentError as err:
        raise CompetitionError(f"competition {name!r} cannot hold its final: {err}") from None
    spec["secret"] = final_secret(store.competitions.secret(name), final_id(name))
    spec["competition"] = name
    entries = store.competitions.entries(name)
    currents = store.versions.currents(seeds)
    spec["versions"] = {b: entries[b]["version"] or currents[b] for b in seeds}
    return spec


def start(store: Store, name: str, *, connected: bool = True) -> FinalProgress:
    """Create the final's tournament (once: a second call finds it), its first round pending;
    the scheduler's :func:`tick` (or :func:`wait`) queues it and pairs the rounds after. The
    competition must be in its final state; ``connected`` refuses bots no referee holds (a
    command says so at once; the scheduler leaves them to wait)."""
    rec = _competition(store, name)
    if rec["state"] is not State.FINAL:
        raise CompetitionError(f"competition {name!r} is {rec['state']}, not in its final: "
                               f"`sueca-arena competition final {name}` moves it there")
    tid = final_id(name)
    if store.tournament(tid) is None:
        try:
            if connected:
                prepare_tournament(store, final_spec(store, name), tid=tid)
            else:
                store.create_tournament(tid, final_spec(store, name), schedule_of(store),
                                        same_tournament)
        except (TournamentError, TournamentConflict) as err:
            raise CompetitionError(f"competition {name!r}: its final cannot start: "
                                   f"{err}") from None
    return progress(store, name)


def advance(store: Store, name: str) -> FinalProgress:
    """Pair the final's next round if the last is recorded, queue what is not queued, and say
    where it stands. Idempotent."""
    tid = final_id(name)
    t = store.tournament(tid)
    if t is None:
        raise CompetitionError(f"competition {name!r} has no final yet: "
                               f"`sueca-arena competition final {name}` starts it")
    try:
        tournaments.advance(store, tid)  # the bracket's next ties, under its lock; queued
    except TournamentError as err:
        raise CompetitionError(f"competition {name!r}: its final: {err}") from None
    return progress(store, name)


def wait(store: Store, name: str, *, timeout: float | None = None,
         quiet: bool = False) -> FinalProgress:
    """Advance the final round by round until it is over (``competition final --wait``), with
    the tournaments' progress bar on stderr; CompetitionError if a match of it failed for good
    (the bracket cannot go on: re-run when its bots are back) or ``timeout`` passes."""
    deadline = None if timeout is None else time.monotonic() + timeout
    tid = final_id(name)
    while True:
        got = advance(store, name)
        if got["done"]:
            return got
        if got["failed"]:
            raise CompetitionError(
                f"competition {name!r}: {got['failed']} match(es) of its final failed "
                f"(`sueca-arena matches --tournament {tid}` says why); the final waits for "
                f"them: re-run `sueca-arena competition final {name} --wait`")
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise CompetitionError(f"competition {name!r}: its final is not over after "
                                   f"{timeout:.0f}s ({got['recorded']} of {got['total']} "
                                   "matches recorded); it goes on: wait for it again")
        try:
            wait_for(store, tid, timeout=left, quiet=quiet, label=f"final of {name}")
        except TournamentError as err:
            raise CompetitionError(str(err)) from None


def progress(store: Store, name: str) -> FinalProgress:
    """Where the final stands (read only): it is done when every match of its schedule is
    recorded (or failed) and its recorded results pair no further round."""
    tid = final_id(name)
    t = store.tournament(tid)
    if t is None:
        raise CompetitionError(f"competition {name!r} has no final yet")
    counts = store.progress(tid)
    recorded, failed = counts["done"], counts["failed"]
    spec = t["spec"]
    paired = len(schedule_of(store)(tid, spec))
    return {"competition": name, "tournament": tid, "format": spec.get("kind", "round-robin"),
            "seeds": list(spec["bots"]), "total": counts["total"], "recorded": recorded,
            "failed": failed,
            "done": recorded + failed >= counts["total"] and paired <= counts["total"]}


def check_closable(store: Store, name: str) -> None:
    """CompetitionError unless competition ``name``'s final is over (or it has none)."""
    rec = _competition(store, name)
    if rec["spec"]["final"]["format"] not in FINAL_FORMATS:
        return
    if store.tournament(final_id(name)) is None:
        raise CompetitionError(f"competition {name!r}: its final has not started: "
                               f"`sueca-arena competition final {name}` starts it")
    p = progress(store, name)
    if not p["done"]:
        raise CompetitionError(
            f"competition {name!r}: its final is not over ({p['recorded']} of {p['total']} "
            f"matches recorded so far): close it when it is (`sueca-arena competition final "
            f"{name} --wait` waits for it)")


def tick(store: Store) -> list[FinalProgress]:
    """Start every final due (a competition the scheduler moved to its final by its time) and
    advance every final being played: the scheduler's loop calls this. A final that cannot
    start (too few entrants) is left for the organiser: ``competition final NAME`` says why."""
    out = []
    for name in store.competitions.names():
        rec = store.competitions.get(name)
        if (rec is None or rec["state"] is not State.FINAL
                or rec["spec"]["final"]["format"] not in FINAL_FORMATS):
            continue
        try:
            if store.tournament(final_id(name)) is None:
                start(store, name, connected=False)
            out.append(advance(store, name))
        except CompetitionError:
            continue
    return out


def _competition(store: Store, name: str) -> CompetitionRecord:
    return store.competitions.require(name)
