"""``sueca-arena doctor``: is this deployment healthy, seen from the host it runs on?

One line per check, exit 0 when every check passes and 1 otherwise (``--json``: the checks as a
list). What it checks is what losing a host costs: Redis reachable and a primary, its replicas
and their lag (behind Sentinel at least one is needed: a result is recorded only once a replica
has it), every sentinel's view of the primary, every referee that advertises itself reachable
from here with the operator token (``ListBots``, over TLS when SUECA_TLS_* says so), their
heartbeats fresh, their wall clocks against Redis's and this host's, and workers answering
a ping.

Why a clock check when the protocol's clocks are durations (a move's limit, a bank, a grace, all
timed on the referee's monotonic clock, so a skewed wall clock changes no match): the wall clock
still leaves the referee. A ``TurnRequest``'s ``deadline_ms`` is the referee's wall clock, read
by a bot against its own; result times, logs and the league's other records are wall times,
compared across hosts and with Redis's (heartbeats and entry ids are Redis's clock). Past
:data:`MAX_SKEW_S` a bot that trusts ``deadline_ms`` misjudges its budget by half a default
move, and a match's lines in two hosts' logs are out of order; a host kept by NTP is within
milliseconds, so only a clock nobody synchronises fails.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from typing import NamedTuple

from sueca.arena.cli.common import add_redis, open_store, redis_url
from sueca.arena.redisurl import is_sentinel, masked
from sueca.arena.store import Store
from sueca.arena.store.client import sentinel_view
from sueca.sdk.cli import Bounded, UserError

#: a replica further behind than this (seconds since its last acknowledgement) fails the check
MAX_LAG_S = 10
#: a referee whose last heartbeat is older than this is not alive (it sends one every few s)
FRESH_S = 30.0
#: a wall clock further than this from Redis's fails its check (half the default move_ms)
MAX_SKEW_S = 1.0


class Check(NamedTuple):
    check: str
    ok: bool
    detail: str


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("doctor", help="check a deployment from this host: Redis, sentinels, "
                                      "referees, workers (exit 0 if healthy)")
    add_redis(p)
    p.add_argument("--timeout", action=Bounded, kind=float, low=0, above=True, default=3.0,
                   help="seconds each referee and the workers' ping may take (default 3)")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    url = redis_url(args)
    checks = list(run_checks(args, url))
    if args.json:
        print(json.dumps([c._asdict() for c in checks], indent=2))
    else:
        for c in checks:
            print(f"{'ok  ' if c.ok else 'FAIL'} {c.check}: {c.detail}")
    return 0 if all(c.ok for c in checks) else 1


def run_checks(args: argparse.Namespace, url: str) -> Iterator[Check]:
    try:
        store = open_store(args)
    except UserError as err:
        if str(err).startswith("bad Redis URL"):
            raise  # a usage error (exit 2), not a finding
        yield Check("redis", False, str(err))
        return
    yield from redis_checks(store, url)
    if is_sentinel(url):
        yield sentinel_check(url)
    here = redis_offset(store)
    yield clock_here_check(here)
    yield from referee_checks(store, args.timeout, here)
    yield workers_check(url, args.timeout)


def redis_checks(store: Store, url: str) -> Iterator[Check]:
    info = store.replication()
    role = str(info.get("role"))
    yield Check("redis", role == "master", f"{masked(url)} answers, role {role}")
    replicas = [v for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)]
    shown = ", ".join(f"{r.get('ip')}:{r.get('port')} {r.get('state')} lag {r.get('lag')} s"
                      for r in replicas) or "none"
    behind = [r for r in replicas if r.get("state") != "online" or int(r.get("lag", 0)) > MAX_LAG_S]
    needed = 1 if is_sentinel(url) else 0
    fine = len(replicas) - len(behind) >= needed
    why = "" if fine else f" (a result is recorded only once a replica has it: {needed} needed)"
    yield Check("replicas", fine, f"{len(replicas)}: {shown}{why}")


def sentinel_check(url: str) -> Check:
    view = sentinel_view(url)
    said = [p for _, p, _ in view if p]
    agreed = bool(said) and len(set(said)) == 1 and len(said) > len(view) // 2
    detail = "; ".join(f"{s} says {p}" if p else f"{s}: {why}" for s, p, why in view)
    return Check("sentinels", agreed, f"{len(said)} of {len(view)} name a primary: {detail}")


class Offset(NamedTuple):
    """Another clock minus this host's, in seconds, give or take ``within`` (half the time
    the reading took)."""

    s: float
    within: float


def redis_offset(store: Store) -> Offset:
    """Redis's clock (``TIME``) minus this host's."""
    before = time.time()
    redis = store.clock()
    after = time.time()
    return Offset(redis - (before + after) / 2, (after - before) / 2)


def skewed(off: Offset) -> bool:
    """Off by more than :data:`MAX_SKEW_S`, however the reading's own delay fell."""
    return abs(off.s) - off.within > MAX_SKEW_S


def said(off: float) -> str:
    return f"{abs(off):.3f} s {'ahead of' if off >= 0 else 'behind'}"


def clock_here_check(here: Offset) -> Check:
    fine = not skewed(here)
    why = "" if fine else f" (more than {MAX_SKEW_S:g} s: is this host's clock synchronised?)"
    return Check("clock here", fine, f"this host is {said(-here.s)} Redis's{why}")


def referee_checks(store: Store, timeout: float, here: Offset) -> Iterator[Check]:
    from sueca.referee import control  # deferred: gRPC's start-up, for this check only
    advertised = store.referees(max_age=10 ** 9)
    fresh = set(store.referees(max_age=FRESH_S))
    if not advertised:
        yield Check("referees", False, "none advertises itself in Redis")
    for addr in advertised:
        if addr not in fresh:
            yield Check(f"referee {addr}", False, f"no heartbeat for more than {FRESH_S:g} s")
            continue
        with control.channel(addr) as channel:
            started = time.monotonic()
            try:
                bots = control.status(addr, timeout, channel=channel)["bots"]
                took = time.monotonic() - started
                before = time.time()  # again, connected: the clock's reading is the call alone
                answer = control.status(addr, timeout, channel=channel)
                after = time.time()
            except Exception as err:  # any failure to reach it is the finding: say what it was
                yield Check(f"referee {addr}", False, f"unreachable from here: {err}")
                continue
        yield Check(f"referee {addr}", True, f"answers with the operator token in "
                    f"{took * 1000:.0f} ms, {len(bots)} bot(s) connected")
        off = Offset(answer["unix_ms"] / 1000 - (before + after) / 2, (after - before) / 2)
        yield clock_check(addr, answer["unix_ms"], off, here)


def clock_check(addr: str, unix_ms: int, off: Offset, here: Offset) -> Check:
    """A referee's clock against Redis's (the league's shared clock) and this host's."""
    name = f"clock {addr}"
    if not unix_ms:
        return Check(name, False, "the referee sends no clock (older than this doctor)")
    vs_redis = Offset(off.s - here.s, off.within + here.within)
    fine = not skewed(vs_redis)
    why = "" if fine else (f" (more than {MAX_SKEW_S:g} s: bots read its deadlines, and "
                           "its times are compared with the other hosts')")
    return Check(name, fine, f"{said(vs_redis.s)} Redis's, {said(off.s)} this host's{why}")


def workers_check(url: str, timeout: float) -> Check:
    from sueca.arena.celery_app import configure  # deferred: Celery's start-up, this check only
    try:
        replies = configure(url).control.ping(timeout=timeout)
    except Exception as err:  # the broker unreachable, or Celery's own failure: the finding
        return Check("workers", False, f"cannot ask them: {err}")
    names = sorted(name for reply in replies or () for name in reply)
    return Check("workers", bool(names), f"{len(names)} answer a ping: {', '.join(names)}"
                 if names else "none answers a ping")
