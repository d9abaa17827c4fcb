"""Hosts as Linux network namespaces on a private bridge: the cluster kit (tests/cluster/).

A :class:`Cluster` makes one bridge in the root namespace and, for each :meth:`Cluster.host`, a
namespace joined to it by a veth pair, with its own address on a private /24 (10.77.N.0/24, N
per cluster so two test runs on one machine never meet). Addresses live only inside the
namespaces the kit makes: the bridge itself has none, so no traffic reaches the machine's own
network or leaves it. A process runs on a host through ``ip netns exec``; a host is lost with
:meth:`Host.kill` (every process in its namespace SIGKILLed) and cut off with :meth:`Host.cut`
(its link down: packets vanish, as when a cable is pulled).

Everything is torn down by :meth:`Cluster.close`, also when a test fails: processes, links,
namespaces and the bridge, and it checks that nothing of them is left. Where a namespace cannot
be made (not root, no ``ip``), :func:`require` fails with one line saying why: never a silent
skip.

The test's own checks read Redis through its unix socket (a path, which no network namespace
hides); every process of the arena reaches Redis over the bridge, by address.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from sueca.arena.processes import Child

__all__ = ["Cluster", "Host", "require"]


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def require() -> None:
    """Fail in one line when this machine cannot make network namespaces."""
    import pytest
    if shutil.which("ip") is None:
        pytest.fail("the cluster tests need iproute2's `ip` (apt-get install iproute2)")
    if os.geteuid() != 0:
        pytest.fail("the cluster tests make network namespaces: run them as root "
                    f"(uid is {os.geteuid()})")
    probe = f"sc-probe-{secrets.token_hex(3)}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        pytest.fail(f"cannot make a network namespace: {made.stderr.strip()}")
    _ip("netns", "del", probe, check=False)


class Host:
    """One machine of the cluster: a network namespace with one address on the bridge."""

    def __init__(self, cluster: Cluster, name: str, index: int) -> None:
        self.cluster, self.name, self.index = cluster, name, index
        self.ns = f"{cluster.tag}-{name}"
        self.addr = f"{cluster.subnet}.{index}"
        self.outer = f"{cluster.tag}v{index}"  # the veth end on the bridge, in the root ns
        self.children: list[Child] = []
        _ip("netns", "add", self.ns)
        _ip("link", "add", self.outer, "type", "veth", "peer", "name", f"{self.outer}i")
        _ip("link", "set", f"{self.outer}i", "netns", self.ns)
        _ip("link", "set", self.outer, "master", cluster.bridge, "up")
        inside = ["netns", "exec", self.ns, "ip"]
        _ip(*inside, "link", "set", "lo", "up")
        _ip(*inside, "link", "set", f"{self.outer}i", "name", "eth0")
        _ip(*inside, "addr", "add", f"{self.addr}/24", "dev", "eth0")
        _ip(*inside, "link", "set", "eth0", "up")

    def run(self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None) -> Child:
        """Start ``argv`` on this host; its output goes to the cluster's log folder."""
        log = self.cluster.logs / f"{self.name}-{name}.log".replace(" ", "_")
        child = Child(f"{self.name}/{name}", ["ip", "netns", "exec", self.ns, *argv],
                      env=env, log=log)
        self.children.append(child)
        return child

    def pids(self) -> list[int]:
        got = _ip("netns", "pids", self.ns, check=False)
        return [int(p) for p in got.stdout.split()]

    def kill(self) -> None:
        """The host is lost: every process on it SIGKILLed at once (and reaped)."""
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for child in self.children:
            child.finish(time.monotonic())  # reaped, its log closed
        self.children.clear()

    def cut(self) -> None:
        """Pull its cable: the link to the bridge goes down, packets to and from it vanish."""
        _ip("link", "set", self.outer, "down")

    def heal(self) -> None:
        _ip("link", "set", self.outer, "up")


class Cluster:
    """A bridge and the hosts on it (see the module doc); a context manager."""

    def __init__(self, logs: Path) -> None:
        self.tag = f"sc{secrets.token_hex(2)}"  # short: interface names are at most 15
        self.subnet = f"10.77.{int(self.tag[2:], 16) % 250 + 1}"
        self.bridge = f"{self.tag}br"
        self.logs = logs
        self.logs.mkdir(parents=True, exist_ok=True)
        self.hosts: dict[str, Host] = {}
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("link", "set", self.bridge, "up")

    def host(self, name: str) -> Host:
        host = self.hosts[name] = Host(self, name, len(self.hosts) + 1)
        return host

    def tail_logs(self, lines: int = 6) -> str:
        """The end of every process's log, for a failure message."""
        out = []
        for log in sorted(self.logs.glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(out)

    def close(self) -> list[str]:
        """Tear everything down; returns what was still there afterwards (nothing, or the
        names of what could not be removed)."""
        for host in self.hosts.values():
            host.kill()
        for host in self.hosts.values():
            _ip("netns", "del", host.ns, check=False)
            _ip("link", "del", host.outer, check=False)
        _ip("link", "del", self.bridge, check=False)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and self.leftovers():
            time.sleep(0.1)
        return self.leftovers()

    def leftovers(self) -> list[str]:
        links = _ip("-o", "link", "show", check=False).stdout
        spaces = _ip("netns", "list", check=False).stdout
        return sorted({w.split("@")[0].rstrip(":") for w in (links + " " + spaces).split()
                       if w.startswith(self.tag)})

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
