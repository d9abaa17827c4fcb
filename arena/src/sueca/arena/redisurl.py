"""Redis URLs: how to show one without its password, how to hand one to Celery, and the one
of the arena ``serve --data DIR`` runs from a data folder.

Every message or log line of ours that names a Redis URL goes through :func:`masked`: an
operator's ``redis://:secret@host:6379/0`` must never end up in a terminal scroll-back, a CI log
or a bug report. redis-py (the store, the referee's registry) takes the URL as given; Celery's
Redis transport does not know redis-py's ``unix://`` scheme and calls it ``redis+socket://``,
hence :func:`for_celery`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlencode

from sueca.sdk.cli import UserError
from sueca.sdk.logs import printable

__all__ = ["masked", "for_celery", "MASK"]

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


def for_celery(url: str) -> str:
    """The URL Celery's broker and result backend understand for the same Redis.

    ``unix://[user:password@]/path/to.sock?db=N`` (redis-py's form) becomes
    ``redis+socket://[user:password@]/path/to.sock?virtual_host=N`` (kombu's and the result
    backend's form, where the database travels as ``virtual_host``); every other URL is
    returned unchanged.
    """
    scheme, sep, rest = url.partition("://")
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
