"""Retention: keep the league's Redis bounded by moving old records out of it.

A recorded match costs a few KB in Redis for ever (its hash, its compressed replay, its results
entry). ``sueca-arena retention run --older-than DAYS`` takes out what was recorded more than
DAYS ago:

* **replays and match hashes** of recorded matches — written to
  ``ARCHIVE/matches/YYYY-MM-DD.jsonl.gz`` (UTC day of the recording; one JSON object a line:
  ``id``, ``entry``, ``match`` (the hash, ``spec`` parsed), ``replay`` (the sueca-replay/1
  document) and deleted from Redis. A tournament's match keeps ``recorded:{id}``, the
  idempotency key (a ~100-byte tombstone), so a re-run of the tournament never plays it again;
  a ladder match loses it too (nothing creates a ladder id twice; a late task finds no match
  and gives up).
  Never touched: a match not recorded, in flight or holding a lease (re-checked atomically at
  deletion, :meth:`sueca.arena.store.Store.forget_matches`).
* **results-log entries**: written to ``ARCHIVE/results/YYYY-MM-DD.jsonl.gz`` (``entry``,
  ``data``), then :func:`sueca.arena.store.ratings.checkpoint` stores the ratings' whole state at the
  last of them and trims the log up to it in one transaction, so ``ratings rebuild`` =
  checkpoint + tail gives the same numbers as before. The log is trimmed only as far as the live
  ratings have folded it.

Crash safety: a file is written whole to a temporary name, fsynced, renamed over the day's file
(and the directory fsynced) *before* anything is deleted from Redis. A day's file that already
exists is merged (records already in it are not written twice), so a run that died between the
rename and the deletion, or a second run, archives nothing twice and loses nothing. Without an
archive directory, records are dropped only when the caller says so (``--drop``).

On a schedule: ``sueca-arena serve`` runs it every hour (:class:`Schedule`, its policy and last
run kept in Redis for the web's ``/api/health``), archiving into ``DIR/archive`` and removing
archive files older than their own limit (:func:`prune_archive`), so that a club's arena stays
bounded with nobody running retention by hand.

Views that read the trimmed history lose it (the ratings do not, they start from the
checkpoint): a tournament's table and cross table count only its retained results (the
report's ``archived`` says how many are missing), ``matches show`` of an archived match finds
nothing in Redis (``zcat ARCHIVE/matches/DAY.jsonl.gz`` has it), and the web pages' per-bot
counts and rating history start at the checkpoint.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Required, TypedDict, cast

from sueca.arena.records import ResultEntry
from sueca.arena.store import Store
from sueca.arena.store.client import entry_key
from sueca.arena.store.ratings import CheckpointReport, checkpoint

__all__ = ["RetentionError", "run", "memory", "archived_results", "DAY", "Schedule",
           "prune_archive", "schedule_status"]

DAY = 86_400.0
_BATCH = 1000
_LOCK = "retention"
_LOCK_SECONDS = 3600.0


#: what ``progress(total, label)`` gives: a context yielding ``advance(n)``
Progress = contextlib.AbstractContextManager[Callable[[int], None]]


class RetentionReport(TypedDict, total=False):
    """What :func:`run` did (or, in a dry run, would do); ``--json`` prints it."""

    older_than_days: Required[float]
    cutoff: Required[str]  # the cutoff instant, ISO 8601 (UTC)
    archive: Required[str | None]
    dry_run: Required[bool]
    memory_before: Required[int]
    memory_after: Required[int]
    seconds: Required[float]
    matches: int  # matches recorded before the cutoff
    days: list[str]
    archived_matches: int
    removed_matches: int
    deferred_matches: int  # old, but their results-log entry is not in the checkpoint yet
    checkpoint_before: str | None
    checkpoint: str | None
    results_to_trim: int  # a dry run's
    trimmed_results: int
    archived_results: int
    checkpoint_seconds: float
    files: list[str]


class RunSummary(TypedDict, total=False):
    """One scheduled run (:meth:`Schedule.run_once`): its figures, or the ``error`` it met."""

    at: Required[str]
    matches_archived: int
    results_trimmed: int
    memory_after: int
    seconds: float
    error: str
    archive_files_removed: int


class ScheduleStatus(TypedDict):
    """The scheduled retention's policy and its last run, as the web's health shows them."""

    retain_days: float
    archive: str
    archive_days: float
    every_seconds: float
    last_run: RunSummary | None


class RetentionError(ValueError):
    """A retention run that cannot start as asked; the message says why."""


def memory(store: Store) -> int:
    """Bytes Redis has allocated (``INFO memory`` used_memory)."""
    return store.used_memory()


def _day(eid: str) -> str:
    ms = int(eid.partition("-")[0])
    return datetime.fromtimestamp(ms / 1000.0, UTC).strftime("%Y-%m-%d")


def check_archive(path: str) -> Path:
    """The archive directory, created if missing; :class:`RetentionError` quoting it when it
    cannot be written (checked before anything is read or removed)."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / f".probe.{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise RetentionError(f"cannot write archive directory {path!r}: "
                             f"{err.strerror or err}") from None
    return p


def write_day(path: Path, key: str, lines: Iterable[tuple[str, bytes]]) -> int:
    """Write ``path`` (gzip JSON lines) as its old lines plus the new ``(key, line)`` whose key
    is not among them yet; atomic (temporary file, fsync, rename, fsync of the directory).
    ``key`` names the field that identifies a line. Returns how many new lines were written."""
    if not path.parent.is_dir():  # a new folder's own entry must reach the disk too
        path.parent.mkdir(parents=True, exist_ok=True)
        _fsync_dir(path.parent.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    seen: set[str] = set()
    written = 0
    try:
        with open(tmp, "wb") as raw:
            # level 4: ~1.05 KB a match at ~50 us; level 6 saves 17% for 3.7 times the CPU
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=4, mtime=0) as gz:
                if path.exists():
                    with gzip.open(path, "rb") as old:
                        for line in old:
                            seen.add(str(json.loads(line)[key]))
                            gz.write(line)
                for k, line in lines:
                    if k in seen:
                        continue
                    seen.add(k)
                    gz.write(line)
                    written += 1
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # the day's file is as it was; Redis still has everything
        raise
    _fsync_dir(path.parent)
    return written


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _match_line(mid: str, eid: str, h: dict[str, str], blob: bytes | None) -> bytes:
    """One archive line. The replay's JSON is embedded as stored (decompressed, not parsed and
    written again: that took most of a run's time)."""
    match: dict[str, Any] = dict(h)
    match["spec"] = json.loads(match.get("spec") or "{}")
    head = json.dumps({"id": mid, "entry": eid, "match": match}, separators=(",", ":"))
    try:
        replay = b"null" if blob is None else zlib.decompress(blob)
    except zlib.error:  # keep what is there rather than lose it
        replay = json.dumps({"zlib_hex": (blob or b"").hex()}).encode()
    return head[:-1].encode() + b',"replay":' + replay + b"}\n"


def _by_day(pairs: list[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    days: dict[str, list[tuple[str, str]]] = {}
    for mid, eid in pairs:
        days.setdefault(_day(eid), []).append((mid, eid))
    return dict(sorted(days.items()))


def _archive_matches(store: Store, archive: Path | None, days: dict[str, list[tuple[str, str]]],
                     advance: Callable[[int], None]) -> tuple[int, int, list[str]]:
    """(archived, removed, files): each day written whole before its matches are deleted."""
    archived = removed = 0
    files = []
    for day, pairs in days.items():
        if archive is not None:
            def lines(pairs: list[tuple[str, str]] = pairs) -> Iterator[tuple[str, bytes]]:
                for i in range(0, len(pairs), _BATCH):
                    chunk = pairs[i:i + _BATCH]
                    rows = store.archive_rows([m for m, _ in chunk])
                    for (mid, eid), (h, blob) in zip(chunk, rows):
                        if h or blob is not None:
                            yield mid, _match_line(mid, eid, h, blob)
            path = archive / "matches" / f"{day}.jsonl.gz"
            archived += write_day(path, "id", lines())
            files.append(str(path))
        for i in range(0, len(pairs), _BATCH):
            chunk = [m for m, _ in pairs[i:i + _BATCH]]
            removed += store.forget_matches(chunk)
            advance(len(chunk))
    return archived, removed, files


def _archive_results(store: Store, archive: Path, after: str | None,
                     through: str, advance: Callable[[int], None]) -> tuple[int, list[str]]:
    """Write the log's entries (after, through] to per-day files; (new lines, files)."""
    written = 0
    files: list[str] = []
    entries = store.results(after=after, through=through)
    pending: list[tuple[str, ResultEntry]] = []
    for eid, res in entries:
        if pending and _day(pending[0][0]) != _day(eid):
            written += _flush_results(archive, pending, files)
            pending = []
        pending.append((eid, res))
        advance(1)
    if pending:
        written += _flush_results(archive, pending, files)
    return written, files


def _flush_results(archive: Path, entries: list[tuple[str, ResultEntry]],
                   files: list[str]) -> int:
    path = archive / "results" / f"{_day(entries[0][0])}.jsonl.gz"
    files.append(str(path))
    return write_day(path, "entry", ((eid, (json.dumps({"entry": eid, "data": res},
                                                       separators=(",", ":")) + "\n").encode())
                                     for eid, res in entries))


def archived_results(archive: str) -> Iterator[tuple[str, ResultEntry]]:
    """Every results-log entry in ``ARCHIVE/results/*.jsonl.gz``, in log order, each once (for
    :func:`sueca.arena.store.ratings.rebuild`'s ``trimmed``)."""
    files = sorted(Path(archive, "results").glob("*.jsonl.gz"))
    if not files:
        raise RetentionError(f"no results archive in {archive!r} "
                             f"(expected {str(Path(archive, 'results', 'DAY.jsonl.gz'))!r})")
    last = None
    for path in files:
        with gzip.open(path, "rb") as f:
            rows = sorted(((entry_key(d["entry"]), d["entry"], d["data"])
                           for d in map(json.loads, f)), key=lambda x: x[0])
        for key, eid, data in rows:
            if last is not None and key <= last:
                continue
            last = key
            yield eid, data


@contextlib.contextmanager
def _renewing(store: Store, token: str | None, bar: Progress) -> Iterator[Callable[[int], None]]:
    """``bar``'s ``advance``, also renewing the run's lock every 5,000 steps: a long run must
    not outlive its lock (two runs merging one day's file could lose one's lines)."""
    with bar as advance:
        count = 0

        def step(n: int = 1) -> None:
            nonlocal count
            advance(n)
            count += n
            if token is not None and count >= 5000:
                count = 0
                if not store.renew_lock(_LOCK, token, _LOCK_SECONDS):
                    raise RetentionError("the retention lock was lost mid-run; run it again")
        yield step


def run(store: Store, older_than_days: float, *, archive: str | None = None, drop: bool = False,
        dry_run: bool = False, now: float | None = None,
        progress: Callable[[int, str], Progress] | None = None) -> RetentionReport:
    """Archive (or, with ``drop``, delete) what was recorded more than ``older_than_days`` ago;
    returns the report (counts, checkpoint, files, memory before and after, seconds).

    ``progress(total, label)`` is a context manager yielding ``advance(n)``
    (:func:`sueca.arena.render.progress`); None draws nothing.
    """
    if not 0 < older_than_days < 100_000:  # NaN and inf too: no cutoff date to compute
        raise RetentionError(f"bad age {older_than_days!r}: a number of days above 0 and "
                             "below 100,000")
    if archive is None and not drop and not dry_run:  # a dry run moves nothing: needs neither
        raise RetentionError("nowhere to put old records: give an archive directory "
                             "(--archive DIR or SUECA_ARCHIVE_DIR), or --drop to delete them "
                             "for good")
    if archive is not None and drop:
        raise RetentionError("--drop and an archive directory contradict each other: "
                             "give one")
    where = None if archive is None else check_archive(archive)
    started = time.perf_counter()
    now = time.time() if now is None else now
    cutoff_ms = int((now - older_than_days * DAY) * 1000)

    def bar(total: int, label: str) -> Progress:
        if progress is None:
            return contextlib.nullcontext(lambda n=1: None)
        return progress(total, label)

    report: RetentionReport = {
        "older_than_days": older_than_days,
        "cutoff": datetime.fromtimestamp(cutoff_ms / 1000.0, UTC).isoformat(timespec="seconds"),
        "archive": None if where is None else str(where), "dry_run": dry_run,
        "memory_before": memory(store), "memory_after": 0, "seconds": 0.0}
    token = None if dry_run else store.lock(_LOCK, _LOCK_SECONDS)
    if not dry_run and token is None:
        raise RetentionError("another retention run is under way (lock "
                             f"{store.lock_key(_LOCK)!r}); try again when it has finished")

    def bar_kept(total: int, label: str) -> Progress:
        return _renewing(store, token, bar(total, label))

    try:
        candidates = store.recorded_before(cutoff_ms)
        days = _by_day(candidates)
        old_cp = store.trimmed_through()
        last = store.last_result_before(cutoff_ms)
        report.update({"matches": len(candidates), "days": list(days), "archived_matches": 0,
                       "removed_matches": 0, "deferred_matches": 0, "checkpoint_before": old_cp,
                       "files": []})
        if dry_run:
            report["results_to_trim"] = 0 if last is None else store.count_results(old_cp, last)
            report.update({"checkpoint": old_cp, "trimmed_results": 0, "archived_results": 0})
        else:
            # The results log first: its entries are archived and folded into the checkpoint
            # while every match's replay is still there (an entry from before the per-bot stats
            # is counted from its replay), then only matches whose entry the checkpoint covers
            # are forgotten; the others (the live ratings had not folded them) wait for a run
            # after they have.
            archived_results = 0
            if last is not None and (old_cp is None or _after(last, old_cp)):
                if where is not None:
                    with bar_kept(store.count_results(old_cp, last),
                                  "archiving results") as adv:
                        archived_results, files = _archive_results(store, where, old_cp, last,
                                                                    adv)
                    report["files"] += files
                t0 = time.perf_counter()
                with bar_kept(store.count_results(old_cp, last),
                              "checkpointing ratings") as adv:
                    cp = checkpoint(store, last, adv)
                report["checkpoint_seconds"] = time.perf_counter() - t0
            else:
                cp = CheckpointReport(cursor=old_cp, results=0, trimmed=0)
            report.update({"checkpoint": cp["cursor"], "trimmed_results": cp["trimmed"],
                           "archived_results": archived_results})
            cursor = cp["cursor"]
            covered = [] if cursor is None else [(mid, eid) for mid, eid in candidates
                                                 if not _after(eid, cursor)]
            report["deferred_matches"] = len(candidates) - len(covered)
            with bar_kept(len(covered),
                          "archiving matches" if where else "dropping matches") as adv:
                a, r, files = _archive_matches(store, where, _by_day(covered), adv)
            report.update({"archived_matches": a, "removed_matches": r})
            report["files"] += files
    finally:
        if token is not None:
            store.unlock(_LOCK, token)
    report["memory_after"] = memory(store)
    report["seconds"] = time.perf_counter() - started
    return report


def _after(a: str, b: str) -> bool:
    return entry_key(a) > entry_key(b)


# -- on a schedule (serve) ------------------------------------------------------------------------
def prune_archive(archive: Path, keep_days: float, now: float | None = None) -> list[str]:
    """Remove the archive's day files (``*/YYYY-MM-DD.jsonl.gz``) of days that ended more than
    ``keep_days`` ago; returns the files removed."""
    cutoff = (time.time() if now is None else now) - keep_days * DAY
    gone = []
    for f in sorted(archive.glob("*/*.jsonl.gz")):
        try:
            day = datetime.strptime(f.name.removesuffix(".jsonl.gz"), "%Y-%m-%d").replace(
                tzinfo=UTC).timestamp()
        except ValueError:
            continue  # not one of ours
        if day + DAY < cutoff:
            with contextlib.suppress(OSError):
                f.unlink()
                gone.append(str(f))
    return gone


def schedule_status(store: Store) -> ScheduleStatus | None:
    """The policy of the scheduled retention and what its last run did (None when no
    scheduled retention runs on this arena): the web's health shows it."""
    raw = store.retention_schedule()
    if raw is None:
        return None
    return cast(ScheduleStatus, json.loads(raw))  # written by Schedule._save alone


class Schedule:
    """Retention every ``every`` seconds (the first run ``first`` seconds from now): records
    older than ``retain_days`` archived into ``archive``, whose files older than
    ``archive_days`` are removed. :meth:`due` says when to call :meth:`run_once`."""

    def __init__(self, store: Store, retain_days: float, archive: Path, archive_days: float,
                 every: float = 3600.0, first: float = 60.0) -> None:
        self.store, self.retain_days, self.archive = store, retain_days, archive
        self.archive_days, self.every = archive_days, every
        self.next = time.monotonic() + first
        self.policy = {"retain_days": retain_days, "archive": str(archive),
                       "archive_days": archive_days, "every_seconds": every}
        self._save(None)

    def due(self) -> bool:
        return time.monotonic() >= self.next

    def run_once(self) -> RunSummary:
        """One run; returns (and records) its summary, an ``error`` in it if it failed."""
        self.next = time.monotonic() + self.every
        started = time.time()
        summary: RunSummary = {"at": datetime.fromtimestamp(started, UTC).isoformat(
            timespec="seconds")}
        try:
            report = run(self.store, self.retain_days, archive=str(self.archive))
            summary.update({"matches_archived": report["archived_matches"],
                            "results_trimmed": report["trimmed_results"],
                            "memory_after": report["memory_after"],
                            "seconds": round(report["seconds"], 2)})
        except Exception as err:  # a bad moment (Redis restarting, the lock held): next time
            summary["error"] = str(err)[:300]
        summary["archive_files_removed"] = len(prune_archive(self.archive, self.archive_days))
        with contextlib.suppress(Exception):
            self._save(summary)
        return summary

    def _save(self, last: RunSummary | None) -> None:
        self.store.set_retention_schedule(json.dumps({**self.policy, "last_run": last}))
