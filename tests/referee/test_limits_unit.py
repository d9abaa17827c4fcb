"""The referee's limit helpers on their own: escaping, bounded labels, buckets, log budgets."""

from __future__ import annotations

import logging
import time

from sueca.referee.limits import (
    AddressBudget,
    Bucket,
    PeerLabels,
    Summary,
    check_hello,
    peer_address,
    shown,
)


def test_shown_escapes_and_cuts():
    assert shown("abc") == "'abc'"
    assert shown("a\nb") == "'a\\nb'"
    long = shown("x" * 60_000)
    assert len(long) < 100 and long.endswith("... (60000 long)")
    assert "\n" not in shown("\n" * 1000)


def test_peer_address_drops_the_port_only():
    assert peer_address("ipv4:10.0.0.1:5555") == "ipv4:10.0.0.1"
    assert peer_address("ipv6:[::1]:5555") == "ipv6:[::1]"
    assert peer_address("ipv6:%5B::1%5D:5555") == "ipv6:[::1]"      # as newer gRPC writes it
    assert peer_address("unix:/tmp/sock") == "unix:/tmp/sock"


def test_a_global_ipv6_peer_is_its_64_and_a_mapped_ipv4_one_is_ipv4():
    """A host holds a /64 and may send from any address in it: one budget for all of them.
    Private addresses (a cluster's pods may share a /64) stay themselves."""
    a = peer_address("ipv6:[2a00:1450:4001:81b:aaaa::1]:5555")
    assert a == "ipv6:[2a00:1450:4001:81b::]/64"
    assert peer_address("ipv6:%5B2a00:1450:4001:81b:bbbb:cccc:dddd:2%5D:6666") == a
    assert peer_address("ipv6:[2a00:1450:4001:81c::1]:5555") != a
    assert peer_address("ipv6:[::ffff:10.0.0.1]:5555") == "ipv4:10.0.0.1"
    assert peer_address("ipv6:[fd00:1:2:3::5]:5555") == "ipv6:[fd00:1:2:3::5]"
    assert peer_address("ipv6:[fe80::1%eth0]:5555") == "ipv6:[fe80::1]"
    assert peer_address("ipv6:[not-an-address]:5555") == "ipv6:[not-an-address]"


def test_peer_labels_are_bounded():
    labels = PeerLabels(size=3)
    seen = {labels(f"ipv4:10.0.0.{k}") for k in range(100)}
    assert len(seen) == 4 and "other" in seen
    assert labels("ipv4:10.0.0.0") == "ipv4:10.0.0.0"  # the first ones keep their label


def test_hello_syntax():
    assert check_hello("alice", "alice.tok-EN_1") is None
    assert check_hello("", "t")[0] == "no_bot"
    reason, message = check_hello("a" * 60_000, "t")
    assert reason == "bad_name" and len(message) < 200
    assert check_hello("-x", "t")[0] == "bad_name"
    assert check_hello("alice", "")[0] == "no_token"
    reason, message = check_hello("alice", "has space")
    assert reason == "bad_token" and "has space" not in message  # never quotes a token


def test_bucket_take_and_debit():
    b = Bucket(10, 2)
    assert b.take() and b.take() and not b.take()
    b = Bucket(100, 1)
    assert b.debit(1) == 0.0
    assert 0.0 < b.debit(2) <= 0.021
    assert Bucket(0).take(1e9) and Bucket(0).debit(1e9) == 0.0  # rate 0: no limit


def test_summary_holds_back_and_counts(caplog):
    log = logging.getLogger("test.summary")
    summary = Summary(log, rate=1000, burst=1)
    with caplog.at_level(logging.WARNING, "test.summary"):
        for _ in range(50):
            summary.warning("refused %s", "x")
        time.sleep(0.01)  # on purpose: the bucket refills (1000 a second) with time
        summary.warning("refused %s", "y")
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "refused x" and len(lines) <= 12
    assert lines[-1].startswith("refused y (") and "more since the last line" in lines[-1]


def test_address_budget_is_per_address_and_bounded():
    budget = AddressBudget(rate=1, burst=2)
    for _ in range(2):
        budget.spend("a")
    assert not budget.allowed("a") and budget.allowed("b")
    for k in range(5000):
        budget.spend(f"addr-{k}")
        if k % 1000 == 0:
            budget.spend("a")  # a flooder that keeps spending is never forgotten
    assert len(budget.buckets) <= 4096
    assert not budget.allowed("a") and "addr-4999" in budget.buckets
