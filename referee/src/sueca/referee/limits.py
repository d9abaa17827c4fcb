"""What one bot may cost the referee: the per-session and per-peer limits, and the helpers that
keep untrusted text and unauthenticated callers cheap.

Every bot is assumed hostile. A limit here bounds what the referee *chooses* to spend on one
session, connection or address, so a bot's cost to the referee never grows with what it sends:

- what the referee queues towards a bot (bytes and items of ``Session.out``): a bot that does
  not read is cut off (RESOURCE_EXHAUSTED) instead of growing the queue without end;
- ActionErrors it is answered, per incoming message and per second: faults beyond that are
  counted, not answered (each answer costs an encoding and a queue slot);
- incoming messages and actions per second that answer nothing, per bot (its streams share
  one budget): beyond that the referee stops reading the stream for a while, so HTTP/2 flow
  control slows the sender instead of the referee's event loop; and a message is read only as
  far as its stream's games could be answered (``sessions.ANSWER_SLACK``);
- a hello deadline, streams per connection, connections per address, sessions per bot;
- hellos, and refused hellos, per address and second: beyond either a hello is refused (after a
  pause) before Redis is asked, so neither a bad-hello flood nor a bot reconnecting in a loop
  costs a Redis look-up and a session per attempt.

Nothing here imports the arena: the name and token syntax is the registry's (``sueca.arena.store.bots``
issues ``NAME.<secret>``), restated so the referee can refuse a malformed hello for free.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, fields

from sueca.sdk.logs import SHOWN_CHARS, shown  # escaped and capped untrusted text (one helper)

# Bot names as the registry accepts them (sueca.arena.store.bots.NAME); a test keeps the two equal.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
# Tokens as the registry issues them (NAME.<urlsafe secret>), with room for hand-made ones.
TOKEN = re.compile(r"[A-Za-z0-9_.~+/=-]{1,200}")
MAX_TRACKED_PEERS = 4096  # addresses with a refusal budget kept in memory at once


@dataclass(frozen=True)
class Limits:
    """The referee's limits; every field has a ``sueca-arena referee`` flag and a ``SUECA_*``
    variable (``--out-bytes`` / ``SUECA_OUT_BYTES`` ...). 0 disables a count limit."""

    out_bytes: int = 8 * 1024 * 1024    # queued towards one bot, not yet sent
    out_items: int = 100_000            # turns, events and errors queued towards one bot
    errors_per_message: int = 16        # ActionErrors answered for one incoming message
    errors_per_second: float = 100.0    # ActionErrors answered per session and second
    messages_per_second: float = 500.0  # wasted incoming messages per bot (its streams together)
    actions_per_second: float = 20_000.0  # and their actions, per bot and second
    hello_seconds: float = 5.0          # a stream must say hello within this
    streams_per_connection: int = 4     # BotService.Connect streams on one HTTP/2 connection
    connections_per_address: int = 64   # connections with a Connect stream, per peer address
    sessions_per_bot: int = 32          # authenticated streams of one bot name
    refusals_per_second: float = 5.0    # refused hellos per peer address (burst: 4 seconds')
    hellos_per_second: float = 20.0     # hellos checked per peer address (burst: 5 seconds')

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


def peer_address(peer: str) -> str:
    """``ipv4:10.0.0.1:5555`` -> ``ipv4:10.0.0.1``: the address without the port (one peer
    string is one connection; the address is the host behind it).

    An IPv6 host usually holds a whole /64 and may send from any address in it, so a global
    IPv6 peer is its /64 (``ipv6:[2a00:1450:4001:81b::]/64``): per-address budgets would otherwise
    be per connection. A private one (loopback, link-local, a cluster's ULA pods, which may
    share a /64) stays itself, and an IPv4-mapped address is the IPv4 one."""
    head, sep, port = peer.rpartition(":")
    if not (sep and port.isdigit()):
        return peer
    if head.startswith("ipv6:"):
        host = head[5:].replace("%5B", "[").replace("%5D", "]").strip("[]")
        try:
            ip = ipaddress.IPv6Address(host.partition("%")[0])  # no zone id
        except ValueError:
            return head
        if ip.ipv4_mapped is not None:
            return f"ipv4:{ip.ipv4_mapped}"
        if not ip.is_global:  # loopback, link-local, a cluster's private addresses: as they are
            return f"ipv6:[{ip}]"
        return f"ipv6:[{ipaddress.IPv6Network((ip, 64), strict=False).network_address}]/64"
    return head


def check_hello(bot: str, token: str) -> tuple[str, str] | None:
    """(reason, message) for what is wrong with a hello's bot name and token by syntax alone,
    or None. Reasons: no_bot, bad_name, no_token, bad_token. The message quotes a bad name cut
    and escaped, and never the token (it may be a real one)."""
    if not bot:
        return "no_bot", "hello names no bot"
    if not NAME.fullmatch(bot):
        return "bad_name", (f"bad bot name {shown(bot)}: 1-40 characters, letters, digits and "
                            "_.- (not first)")
    if not token:
        return "no_token", (f"no token for bot {bot!r}: pass the token `sueca-arena bots add "
                            "NAME` printed")
    if not TOKEN.fullmatch(token):
        return "bad_token", (f"malformed token for bot {bot!r} ({len(token)} characters): pass "
                             "the token `sueca-arena bots add NAME` printed")
    return None


class Bucket:
    """A token bucket: ``rate`` per second, at most ``burst`` saved. ``take`` never blocks;
    ``debit`` may go into debt and says how long to wait until it is paid off."""

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: float | None = None) -> None:
        self.rate = rate
        self.burst = burst if burst is not None else max(rate, 1.0)
        self.tokens = self.burst
        self.stamp = time.monotonic()

    def refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, n: float = 1.0) -> bool:
        if self.rate <= 0:
            return True
        if self.tokens < n:
            self.refill()
            if self.tokens < n:
                return False
        self.tokens -= n
        return True

    def debit(self, n: float) -> float:
        """Spend ``n`` now; the seconds until the balance is back to zero (0: no debt)."""
        if self.rate <= 0:
            return 0.0
        self.tokens -= n
        if self.tokens >= 0:
            return 0.0
        self.refill()
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    @property
    def full(self) -> bool:
        self.refill()
        return self.tokens >= self.burst


class Summary:
    """Log lines within a budget: ``rate`` per second, ``burst`` at once; a line beyond it is
    only counted, and the next line logged says how many were held back. A scanner, a flood of
    bad hellos or a bot reconnecting in a loop costs a few lines, not one per attempt.
    ``Summary(log, 0.1, 1)`` is one line per 10 seconds."""

    def __init__(self, logger: logging.Logger, rate: float, burst: float = 1.0) -> None:
        self.log = logger
        self.bucket = Bucket(rate, burst)
        self.quiet = 0

    def emit(self, level: int, fmt: str, *args: object,
             extra: dict[str, object] | None = None) -> None:
        """Log the line if the budget allows, else count it. ``extra``: its log fields
        (:data:`sueca.sdk.logs.FIELDS`); a line after held-back ones adds ``suppressed``."""
        if not self.bucket.take():
            self.quiet += 1
            return
        if self.quiet:
            fmt, args = fmt + " (%d more since the last line)", (*args, self.quiet)
            extra = {**(extra or {}), "suppressed": self.quiet}
            self.quiet = 0
        self.log.log(level, fmt, *args, extra=extra)

    def warning(self, fmt: str, *args: object, extra: dict[str, object] | None = None) -> None:
        self.emit(logging.WARNING, fmt, *args, extra=extra)

    def info(self, fmt: str, *args: object, extra: dict[str, object] | None = None) -> None:
        self.emit(logging.INFO, fmt, *args, extra=extra)


class AccessLog:
    """The referee's access log of refusals: a bot stream, hello, session or operator call
    refused (wrong token, unknown bot, bad hello, a limit per connection, address or bot, a
    flood of hellos). One record per refusal, logger ``sueca.referee.access``, with the fields
    ``reason``, ``peer`` and, once the hello named one, ``bot`` (capped by the formatter), so
    ``--log-format json`` gives one object per refusal.

    A hostile flood must not fill the disk: each reason has its own :class:`Summary` budget
    (``rate`` records a second, ``burst`` at once); a refusal beyond it is only counted, and the
    next record of that reason carries ``suppressed`` (how many were held back). Reasons are
    the referee's own words, so the budgets are bounded in number; :meth:`flush` logs what is
    still held back (at shutdown), so no refusal goes uncounted."""

    def __init__(self, rate: float, burst: float = 1.0,
                 logger: logging.Logger | None = None) -> None:
        self.log = logger or logging.getLogger("sueca.referee.access")
        self.rate, self.burst = rate, burst
        self.reasons: dict[str, Summary] = {}

    def refused(self, what: str, reason: str, peer: str, detail: str, *,
                bot: str | None = None) -> None:
        """Record that ``what`` ("a bot hello", ...) from ``peer`` was refused for ``reason``;
        ``detail`` is the referee's own words (bot-sent text in it only through shown())."""
        summary = self.reasons.get(reason)
        if summary is None:
            summary = self.reasons[reason] = Summary(self.log, self.rate, self.burst)
        summary.warning("refused %s from %s: %s", what, peer, detail,
                        extra={"reason": reason, "peer": peer, "bot": bot or None})

    def flush(self) -> None:
        """One record per reason for the refusals held back since its last record."""
        for reason, summary in self.reasons.items():
            if summary.quiet:
                self.log.warning("%d more refusal(s) for %s since the last line", summary.quiet,
                                 reason, extra={"reason": reason, "suppressed": summary.quiet})
                summary.quiet = 0


class PeerLabels:
    """Metric label values for peer addresses with bounded cardinality: the first ``size``
    distinct addresses get their own label, every later one is ``other``."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self.known: set[str] = set()

    def __call__(self, address: str) -> str:
        if address in self.known:
            return address
        if len(self.known) < self.size:
            self.known.add(address)
            return address
        return "other"


class AddressBudget:
    """A :class:`Bucket` per peer address (refused hellos, or all hellos), bounded in number:
    buckets that have refilled are forgotten first, then the least recently spent."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self.buckets: dict[str, Bucket] = {}

    def allowed(self, address: str) -> bool:
        """Has ``address`` budget left (without spending it)?"""
        bucket = self.buckets.get(address)
        if bucket is None or self.rate <= 0:
            return True
        bucket.refill()
        return bucket.tokens >= 1

    def spend(self, address: str, debt: bool = False) -> None:
        """Take one from ``address``'s bucket; with ``debt``, even when it is short (the
        token checks behind :class:`AddressGate`: those let through at once are all paid for,
        so an address that overshot waits it off; the debt is at most the gate's width).
        Without, an empty bucket stays at zero: refusals that come before any budget check
        (a malformed hello) must not lock the address out for longer than a refill."""
        if self.rate <= 0:
            return
        bucket = self.buckets.pop(address, None)
        if bucket is None:
            if len(self.buckets) >= MAX_TRACKED_PEERS:
                self.buckets = {a: b for a, b in self.buckets.items() if not b.full}
                # still full: the least recently spent go (a quarter), never the whole table,
                # which gave a flooder that kept spending a fresh budget
                for a in list(self.buckets)[:len(self.buckets) - MAX_TRACKED_PEERS * 3 // 4]:
                    del self.buckets[a]
            bucket = Bucket(self.rate, self.burst)
        self.buckets[address] = bucket  # the most recently spent last
        if debt:
            bucket.debit(1.0)
        else:
            bucket.take()


class AddressGate:
    """At most ``width`` token checks of one peer address at once; the others wait their turn.

    Why: the refusal budget is spent when a check *fails*, so without a gate a client sending
    30 wrong tokens at once has all 30 checked by Redis before the first failure is counted.
    Behind the gate, each waiting hello looks at the budget only once it may go, so one address
    gets at most ``width`` checks beyond its budget. Honest bursts (a bot opening many sessions)
    only queue: a check is a fraction of a millisecond. Gates of addresses with nothing waiting
    are forgotten, so memory follows the hellos in flight (themselves bounded by the connection
    limits)."""

    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.gates: dict[str, tuple[asyncio.Semaphore, list[int]]] = {}

    @contextlib.asynccontextmanager
    async def __call__(self, address: str) -> AsyncIterator[None]:
        gate = self.gates.get(address)
        if gate is None:
            gate = self.gates[address] = (asyncio.Semaphore(self.width), [0])
        gate[1][0] += 1
        try:
            async with gate[0]:
                yield
        finally:
            gate[1][0] -= 1
            if gate[1][0] == 0:
                del self.gates[address]


__all__ = ["Limits", "Bucket", "AddressGate", "Summary", "AccessLog", "SHOWN_CHARS", "PeerLabels",
           "AddressBudget", "shown", "peer_address",
           "check_hello", "NAME", "TOKEN"]
