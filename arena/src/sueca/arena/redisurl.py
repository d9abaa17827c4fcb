"""Redis URLs: how to show one without its password, how to hand one to Celery, and the one
of the arena ``serve --data DIR`` runs from a data folder.

Every message or log line of ours that names a Redis URL goes through :func:`masked`: an
operator's ``redis://:secret@host:6379/0`` must never end up in a terminal scroll-back, a CI log
or a bug report. redis-py (the store, the referee's registry) takes the URL as given; Celery's
Redis transport does not know redis-py's ``unix://`` scheme and calls it ``redis+socket://``,
hence :func:`for_celery`.

A Redis behind Sentinel is named by one URL everywhere,
``redis+sentinel://[[user]:password@]host:port[,host:port...]/SERVICE[/DB]``: the sentinels'
addresses (port 26379 when left out), the name they monitor the primary under, and the
database (0 when left out). The password is the Redis servers' (the sentinels are asked
without one). :func:`sentinel_parts` reads it; redis-py follows the primary through a failover
(:func:`sueca.arena.store.connect`), kombu's Sentinel transport does for Celery
(:func:`for_celery` and :func:`celery_options`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qsl, unquote, urlencode

from sueca.sdk.cli import UserError
from sueca.sdk.logs import printable

__all__ = ["masked", "for_celery", "celery_options", "MASK", "SENTINEL_SCHEME", "Sentinels",
           "sentinel_parts", "is_sentinel"]

MASK = "***"

# a query parameter (``key=value``) in a URL: redis-py splits the query on ``&`` only, so a
# value runs to the next ``&`` (a ``;`` belongs to it), and ``a=1;password=x`` is one piece
_QUERY_PARAM = re.compile(r"([?&])([^&#]*)")


def masked(url: str) -> str:
    """``url`` with every password replaced by ``***``: the one in the userinfo, and the value
    of any query parameter whose name (percent-decoded) contains ``password`` (redis-py passes
    query parameters on as keywords: ``password``, ``ssl_password``...).

    The userinfo is everything before the *last* ``@`` after the scheme, so a password with an
    unescaped ``@``, ``#``, ``?`` or ``/`` is hidden whole; it is masked only if it holds a
    ``:`` (a name alone is no secret, and ``unix:///run/a@b.sock`` stays as it is). A URL
    without a scheme (``user:pw@host:6379``) is read the same way. Wrong in the safe direction:
    an odd URL may lose more than its password, never less.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    if "@" in rest:
        userinfo, _, where = rest.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        if colon:
            rest = f"{user}:{MASK}@{where}"
    return _QUERY_PARAM.sub(_mask_param, f"{scheme}{sep}{rest}")


def _mask_param(m: re.Match[str]) -> str:
    sep, piece = m.groups()
    key, eq, _ = piece.partition("=")
    if eq and "password" in unquote(piece).lower():  # in the name, or after a ';' in it
        return f"{sep}{key}={MASK}"
    return m.group(0)


def _split_query(rest: str) -> tuple[str, str, str]:
    """(before ``?``/``#``, the separator, after it) of a URL without its scheme."""
    for i, ch in enumerate(rest):
        if ch in "?#":
            return rest[:i], ch, rest[i + 1:]
    return rest, "", ""


SENTINEL_SCHEME = "redis+sentinel"
SENTINEL_FORM = "redis+sentinel://[:password@]host:port[,host:port...]/SERVICE/DB"
SENTINEL_PORT = 26379


class Sentinels(NamedTuple):
    """What a ``redis+sentinel://`` URL names."""

    hosts: list[tuple[str, int]]
    service: str
    db: int
    username: str | None
    password: str | None


def is_sentinel(url: str) -> bool:
    return url.partition("://")[0].lower() == SENTINEL_SCHEME


def sentinel_parts(url: str) -> Sentinels:
    """The sentinels, service, database and credentials of a ``redis+sentinel://`` URL;
    ValueError saying what is wrong (never quoting the password) when it is not one."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() != SENTINEL_SCHEME:
        raise ValueError(f"expected {SENTINEL_FORM}")
    head, query_sep, _ = _split_query(rest)
    if query_sep:
        raise ValueError(f"no query or fragment is read: expected {SENTINEL_FORM}")
    username = password = None
    if "@" in head:
        userinfo, _, head = head.rpartition("@")
        user, colon, secret = userinfo.partition(":")
        username, password = unquote(user) or None, unquote(secret) if colon else None
    where, _, path = head.partition("/")
    service, _, db = path.partition("/")
    if not service:
        raise ValueError(f"no SERVICE (the name the sentinels monitor): expected {SENTINEL_FORM}")
    if db and not db.isdigit():
        raise ValueError(f"the database {db!r} is not a number: expected {SENTINEL_FORM}")
    hosts = []
    for piece in where.split(","):
        host, colon, port = piece.rpartition(":") if piece.count(":") == 1 else (piece, "", "")
        if not host or (colon and not port.isdigit()) or not 0 < int(port or SENTINEL_PORT) < 65536:
            raise ValueError(f"{piece!r} is not a sentinel's host:port: expected {SENTINEL_FORM}")
        hosts.append((host, int(port or SENTINEL_PORT)))
    return Sentinels(hosts, unquote(service), int(db or 0), username, password)


def celery_options(url: str) -> dict[str, object]:
    """The transport options the broker and result backend need for ``url`` beyond
    :func:`for_celery` (for a Sentinel URL: the service's name, ``master_name``)."""
    try:
        service = sentinel_parts(url).service if is_sentinel(url) else None
    except ValueError:  # refused, in one line, by the first connection to it (store.connect)
        return {}
    if service is None:
        return {}
    return {"master_name": service}


def for_celery(url: str) -> str:
    """The URL Celery's broker and result backend understand for the same Redis.

    ``redis+sentinel://[:pw@]h1:p1,h2:p2/SERVICE/DB`` becomes kombu's and Celery's
    ``sentinel://[:pw@]h1:p1/DB;sentinel://[:pw@]h2:p2/DB`` (the service goes in the transport
    options, :func:`celery_options`); a malformed one is returned as it is.

    ``unix://[user:password@]/path/to.sock?db=N`` (redis-py's form) becomes
    ``redis+socket://[user:password@]/path/to.sock?virtual_host=N`` (kombu's and the result
    backend's form, where the database travels as ``virtual_host``); every other URL is
    returned unchanged.
    """
    scheme, sep, rest = url.partition("://")
    if sep and scheme.lower() == SENTINEL_SCHEME:
        try:
            parts = sentinel_parts(url)
        except ValueError:  # refused, in one line, by the first connection to it (connect)
            return url
        auth = rest.rpartition("@")[0] + "@" if "@" in rest else ""
        return ";".join(f"sentinel://{auth}{host}:{port}/{parts.db}"
                        for host, port in parts.hosts)
    if not sep or scheme.lower() != "unix":
        return url
    head, query_sep, query = _split_query(rest)
    if query_sep == "#":
        query = ""
    params = [("virtual_host" if key == "db" else key, value)
              for key, value in parse_qsl(query, keep_blank_values=True)]
    return f"redis+socket://{head}" + (f"?{urlencode(params)}" if params else "")


#: the socket of the Redis that ``serve --data DIR`` keeps in DIR
SOCKET_NAME = "redis.sock"
#: serve's data folder when none is given, where the league commands look when given no Redis
DATA_DIR = "sueca-data"


def arena_socket(data: str | os.PathLike[str]) -> Path:
    """Where ``serve --data DIR`` has its Redis listen: a unix socket in DIR (the same at
    every start; only this user can reach it)."""
    return Path(os.path.abspath(data)) / SOCKET_NAME


def arena_url(data: str | os.PathLike[str]) -> str:
    """The Redis URL of the arena ``serve --data DIR`` runs from DIR; a UserError saying to
    start it when DIR holds none."""
    sock = arena_socket(data)
    if not sock.is_socket():
        raise not_running(data)
    return f"unix://{sock}?db=0"


def not_running(data: str | os.PathLike[str]) -> UserError:
    """The error for a folder whose arena is not running."""
    shown = printable(os.fspath(data), 200)
    return UserError(f"no arena is running in {shown!r} (no Redis answers on "
                     f"{printable(str(arena_socket(data)), 300)}): start it with "
                     f"`sueca-arena serve --data {shown}`")
