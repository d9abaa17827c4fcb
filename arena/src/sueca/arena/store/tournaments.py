"""Tournaments: ``tournament:{id}`` (spec, status, total), the schedule's match list and the
``tournaments`` index; a tournament's progress, results and matches read back."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from sueca.arena.records import (
    MatchRecord,
    MatchStatus,
    Progress,
    ResultEntry,
    ScheduledMatch,
    TournamentRecord,
    TournamentSpec,
)
from sueca.arena.store.client import now, text, texts
from sueca.arena.store.errors import TournamentConflict
from sueca.arena.store.matches import MatchPage, MatchStore, decoded_hash
from sueca.arena.store.results import ResultsLog
from sueca.arena.store.versions import BotVersions

__all__ = ["TournamentStore", "Schedule", "SameTournament"]

#: A tournament's matches from its id and spec (:func:`sueca.arena.schedule.round_robin`)
Schedule = Callable[[str, TournamentSpec], Sequence[ScheduledMatch]]
#: Whether a stored spec and an asked one are the same tournament
SameTournament = Callable[[TournamentSpec, TournamentSpec], bool]


class TournamentStore(MatchStore, ResultsLog):
    """Creating tournaments and reading them back."""

    def create_tournament(
            self, tid: str, spec: TournamentSpec, schedule: Schedule,
            same: SameTournament | None = None) -> tuple[bool, TournamentSpec]:
        """Store a tournament and its matches; returns (created, the stored spec).

        ``schedule(tid, spec)`` gives the matches, ``[{"id", "spec", "pair"}]``; each is
        stamped with the versions of its bots at this moment (where not 1). If the id exists,
        ``same(stored, spec)`` must hold (else :class:`TournamentConflict`) and the schedule is
        rebuilt from the *stored* spec, whose secret fixes the seeds. Safe to race and to
        re-run: the first writer's spec wins and an existing match is never overwritten, so a
        re-run never resets a recorded result.
        """
        key = self.keys.tournament(tid)
        spec_json = json.dumps(spec, sort_keys=True, separators=(",", ":"))
        created = bool(self.r.hsetnx(key, "spec", spec_json))
        stored: TournamentSpec = (spec.copy() if created
                                  else json.loads(self.r.hget(key, "spec") or "{}"))
        if not created and not (same or (lambda a, b: a == b))(stored, spec):
            raise TournamentConflict(
                f"tournament {tid!r} already exists with a different specification "
                f"({_spec_diff(stored, spec)}): give `--id {tid}` alone to resume it "
                f"as stored, or choose another --id")
        matches = list(schedule(tid, stored))
        # the versions that play: a competition's final's, fixed at its freeze (its spec's),
        # else the bots' current ones as the matches are scheduled
        seated = sorted({str(b) for m in matches for b in m["spec"].get("bots") or ()})
        fixed = stored.get("versions")
        current = (dict(fixed) if fixed is not None else
                   BotVersions(self.r, self.keys).currents(seated) if seated else {})
        for m in matches:
            versions = {str(b): current[str(b)] for b in m["spec"].get("bots") or ()
                        if current.get(str(b), 1) > 1}
            self.create_match(m["id"], m["spec"], tournament=tid, pair=m.get("pair", ""),
                              competition=stored.get("competition", ""),
                              versions=versions or None)
        ids = [m["id"] for m in matches]
        if created or self.tournament_matches(tid) != ids:
            pipe = self.r.pipeline()
            pipe.delete(self.keys.tournament_matches(tid))
            if ids:
                pipe.rpush(self.keys.tournament_matches(tid), *ids)
            pipe.hset(key, mapping={"total": len(ids), "status": "created"})
            pipe.hsetnx(key, "created", now())
            pipe.zadd(self.keys.tournaments(), {tid: time.time()}, nx=True)
            pipe.execute()
        return created, stored

    def tournament(self, tid: str) -> TournamentRecord | None:
        raw = self.r.hgetall(self.keys.tournament(tid))
        return cast(TournamentRecord, decoded_hash(raw, tid, "total")) if raw else None

    def tournament_matches(self, tid: str) -> list[str]:
        return [text(m) for m in self.r.lrange(self.keys.tournament_matches(tid), 0, -1)]

    def tournament_page(self, tid: str, start: int, count: int) -> MatchPage:
        """The tournament's match ids in schedule order from position ``start``, at most
        ``count`` of them."""
        key = self.keys.tournament_matches(tid)
        total = int(self.r.llen(key))
        return MatchPage(total, [text(m) for m in self.r.lrange(key, start, start + count - 1)])

    def set_tournament_status(self, tid: str, status: str) -> None:
        self.r.hset(self.keys.tournament(tid), mapping={"status": status, "updated": now()})

    def progress(self, tid: str) -> Progress:
        """Counts of the tournament's matches by status (plus ``total``)."""
        mids = self.tournament_matches(tid)
        counts: dict[str, int] = {**dict.fromkeys(MatchStatus, 0), "total": len(mids)}
        for st in self.statuses(mids):
            key = st or MatchStatus.PENDING
            counts[key] = counts.get(key, 0) + 1
        return cast(Progress, counts)

    def recent_matches(self, limit: int = 20, tournament: str | None = None) -> list[MatchRecord]:
        """Newest first; with ``tournament``, that tournament's matches in schedule order."""
        if tournament is not None:
            mids = self.tournament_matches(tournament)
        else:
            mids = self.match_page(0, limit).ids
        return [m for m in self.matches_of(mids) if m is not None]

    def tournament_results(self, tid: str) -> list[ResultEntry]:
        """The recorded results of a tournament, in results-log order."""
        mids = self.tournament_matches(tid)
        eids = sorted(e for e in self.entry_ids(mids) if e is not None)
        return [r for r in self.entries(eids) if r is not None]

    def tournament_archived(self, tid: str) -> int:
        """How many of the tournament's recorded results retention trimmed from the log (they
        are in the ratings checkpoint and the archive files, no longer in
        :meth:`tournament_results`)."""
        cut = self.trimmed_through()
        if cut is None:
            return 0
        return self.recorded_in(self.tournament_matches(tid), cut)

    def tournament_ids(self, limit: int = 20) -> list[str]:
        return texts(self.r.zrevrange(self.keys.tournaments(), 0, limit - 1))


def _spec_diff(old: Mapping[str, object], new: Mapping[str, object]) -> str:
    """Only the fields that differ, nested ones by their dotted name (``variant.target: 8
    stored, 4 asked``): printing both whole variants buries the one value that changed."""
    return "; ".join(_field_diffs(old, new, "")) or "same fields"


def _field_diffs(old: Mapping[str, object], new: Mapping[str, object], at: str) -> list[str]:
    out = []
    for k in sorted((set(old) | set(new)) - {"secret"}):
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out += _field_diffs(a, b, f"{at}{k}.")
        else:
            out.append(f"{at}{k}: {a!r} stored, {b!r} asked")
    return out
