"""Round-robin tournaments: validate and store one, queue what is missing, wait for it, and
report its table. The league logic behind ``sueca-arena tournament`` (and the demo and the
tournament benchmark); it raises :class:`TournamentError` for a user's mistake.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any


class TournamentError(ValueError):
    """A bad tournament request (unknown bot, bad variant or id) or one that cannot finish in
    time; the message quotes the bad value and says what to do."""


def new_tid() -> str:
    import secrets
    return time.strftime("t%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def prepare_tournament(store: Any, bots: Sequence[str], k: int, duplicate: bool,
                       variant_words: Sequence[str], tid: str | None,
                       limits: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """Validate and store a tournament (or find the one with that id); returns (id, spec)."""
    from sueca.arena.bots import BotRegistry
    from sueca.arena.schedule import round_robin, same_tournament, tournament_spec
    from sueca.arena.store import TournamentConflict
    from sueca.engine import Variant, VariantError
    try:
        variant = Variant.parse(variant_words)
    except VariantError as err:
        raise TournamentError(str(err)) from None
    registry = BotRegistry(store.r, store.keys)
    unknown = [b for b in bots if not registry.exists(b)]
    if unknown:
        raise TournamentError(f"unknown bot(s) {', '.join(map(repr, unknown))}: register with "
                        f"`sueca-arena bots add NAME` (registered: "
                        f"{', '.join(registry.names()) or 'none'})")
    try:
        spec = tournament_spec(bots, k, duplicate, variant.to_dict(), limits)
    except ValueError as err:
        raise TournamentError(str(err)) from None
    tid = tid or new_tid()
    if not tid.replace("-", "").replace("_", "").replace(".", "").isalnum() or len(tid) > 80:
        raise TournamentError(f"bad tournament id {tid!r}: letters, digits, '-', '_', '.'; at most 80")
    try:
        _, stored = store.create_tournament(tid, spec, round_robin, same_tournament)
    except TournamentConflict as err:
        raise TournamentError(str(err)) from None
    return tid, stored


def enqueue_missing(store: Any, tid: str, requeue_after: float = 900.0,
                    mode: str | None = None) -> int:
    """Queue every match of ``tid`` that is neither recorded nor already queued; returns how
    many. Claims are atomic, so two concurrent runs never queue one match twice."""
    from sueca.arena.tasks import enqueue
    mids = [m for m in store.tournament_matches(tid) if store.claim(m, requeue_after)]
    if mids:
        try:
            enqueue(mids, mode)
        except BaseException:  # broker down, Ctrl-C: give the claims back so a re-run queues them
            for m in mids:
                store.set_status(m, "pending")
            raise
    return len(mids)


def wait_for(store: Any, tid: str, timeout: float | None = None, quiet: bool = False,
             label: str | None = None) -> dict[str, int]:
    """Progress bar (on stderr) until no match of ``tid`` is pending, queued or running.

    Redis not answering for a while (a restart, a failover, a pause) is waited out with a note,
    not a traceback: the matches are in Redis and the workers carry on when it is back."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from sueca.arena.store import TRANSIENT_REDIS_ERRORS
    deadline = None if timeout is None else time.monotonic() + timeout
    last_change, last_done, hinted = time.monotonic(), -1, False
    console = _stderr_console()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[extra]}"), TimeElapsedColumn(), console=console,
                  disable=quiet, transient=False) as bar:
        progress = store.progress(tid)
        task = bar.add_task(label or f"tournament {tid}", total=progress["total"], extra="")
        while True:
            try:
                progress = store.progress(tid)
            except TRANSIENT_REDIS_ERRORS as err:
                if deadline is not None and time.monotonic() > deadline:
                    raise TournamentError(f"tournament {tid}: Redis stopped answering ({err}); the "
                                    f"matches stay queued — re-run with --id {tid} to wait for "
                                    "them") from None
                bar.update(task, extra="[yellow]Redis not answering: waiting[/]")
                time.sleep(0.5)
                continue
            finished = progress["done"] + progress["failed"]
            extra = f"[red]{progress['failed']} failed[/]" if progress["failed"] else ""
            bar.update(task, completed=finished, extra=extra)
            if finished >= progress["total"] or (
                    progress["pending"] + progress["queued"] + progress["running"] == 0):
                return progress
            now = time.monotonic()
            if finished != last_done:
                last_done, last_change = finished, now
            elif not hinted and now - last_change > 15 and not quiet:
                console.print("[yellow]no progress for 15 s: is a worker running? "
                              "(`sueca-arena worker --redis URL`)[/]")
                hinted = True
            if deadline is not None and now > deadline:
                raise TournamentError(f"tournament {tid}: {finished} of {progress['total']} matches "
                                f"done after {timeout:.0f}s; the rest stay queued — re-run with "
                                f"--id {tid} to wait for them")
            time.sleep(0.05)


def tournament_report(store: Any, tid: str) -> dict[str, Any]:
    from sueca.arena.ratings import load_config, standings
    t = store.tournament(tid)
    if t is None:
        raise TournamentError(f"unknown tournament {tid!r}")
    elo_k, elo_initial = load_config(store)
    results = store.tournament_results(tid)
    failed = [{"match_id": m["id"], "error": m.get("error", "")}
              for m in store.recent_matches(tournament=tid) if m["status"] == "failed"]
    spec = {k: v for k, v in t["spec"].items() if k != "secret"}
    return {"tournament": tid, "spec": spec, "matches": t["total"], "recorded": len(results),
            "failed": failed, "standings": standings(results, elo_k, elo_initial)}


def run_tournament(store: Any, bots: Sequence[str], k: int, duplicate: bool,
                   variant_words: Sequence[str] = (), tid: str | None = None,
                   limits: Mapping[str, Any] | None = None, timeout: float | None = None,
                   requeue_after: float = 900.0, quiet: bool = False,
                   resumable: bool = True) -> dict[str, Any]:
    """Create (or find), queue and wait for a tournament; ``resumable=False`` leaves out the
    hint to re-run its id, for a tournament that ends with its Redis (the demo's)."""
    tid, _ = prepare_tournament(store, bots, k, duplicate, variant_words, tid, limits)
    queued = enqueue_missing(store, tid, requeue_after)
    if not quiet:
        total = store.tournament(tid)["total"]
        hint = f" (re-run with --id {tid} to finish it if interrupted)" if resumable else ""
        _stderr_console().print(f"tournament [bold]{tid}[/]: {total} matches, {queued} queued "
                                f"now{hint}")
    store.set_tournament_status(tid, "running")
    progress = wait_for(store, tid, timeout, quiet)
    store.set_tournament_status(tid, "failed" if progress["failed"] else "done")
    return tournament_report(store, tid)


def _stderr_console() -> Any:
    """A rich console on stderr; piped output gets 120 columns so lines never wrap a name."""
    from rich.console import Console
    out = Console(stderr=True, highlight=False)
    return out if out.is_terminal else Console(stderr=True, highlight=False, width=120)


__all__ = ["TournamentError", "new_tid", "prepare_tournament", "enqueue_missing", "wait_for",
           "tournament_report", "run_tournament"]
