"""Where the referees are: a ``--server`` value (``host:port[,host:port...]``) to the addresses
the client keeps a session with, and the host name each was resolved from (a TLS certificate is
checked against that name, not against the IP dialled)."""

from __future__ import annotations

import socket

__all__ = ["resolve", "dns_name", "plain_address", "is_ip"]


def resolve(server: str) -> list[str]:
    """``host:port[,host:port...]`` to the addresses to keep a session with. A name that
    resolves to several addresses (a headless service, round-robin DNS) gives one per address,
    so every replica behind it gets a session; literals and ``localhost`` are kept as given.
    gRPC's ``dns:///host:port`` spelling is read as ``host:port`` (it means the same)."""
    out: list[str] = []
    for item in map(plain_address, server.split(",")):
        if not item:
            continue
        if item.startswith("//"):
            raise ValueError(f"bad server address 'dns:{item}': a DNS authority is not "
                             "supported, give dns:///host:port or host:port")
        host, sep, port = item.rpartition(":")
        if not sep or not port.isdigit():
            raise ValueError(f"bad server address {item!r}: expected host:port")
        host = host.strip("[]")
        if host in ("localhost", "") or is_ip(host):
            out.append(item)
            continue
        try:
            infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
        except OSError:
            out.append(item)  # not resolvable now: gRPC will retry and report it
            continue
        v4 = sorted({i[4][0] for i in infos if i[0] == socket.AF_INET})
        v6 = sorted({i[4][0] for i in infos if i[0] == socket.AF_INET6})
        addrs = v4 or v6
        if len(addrs) <= 1:
            out.append(item)
        else:
            out.extend(f"[{a}]:{port}" if ":" in str(a) else f"{a}:{port}" for a in addrs)
    return list(dict.fromkeys(out))


def is_ip(host: str) -> bool:
    """An IPv4 or IPv6 literal (dialled as it is, never looked up)."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
            return True
        except OSError:
            pass
    return False


def plain_address(item: str) -> str:
    """One ``--server`` item without gRPC's ``dns:///`` (or ``dns:``) prefix: same meaning."""
    return item.strip().removeprefix("dns:///").removeprefix("dns:")


def dns_name(item: str) -> str | None:
    """The host of one ``host:port`` item when it is a name DNS may expand (not an IP literal,
    not ``localhost``), else None."""
    host = plain_address(item).rpartition(":")[0].strip("[]")
    return host if host and host != "localhost" and not is_ip(host) else None
