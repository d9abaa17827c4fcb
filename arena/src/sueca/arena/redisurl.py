"""Redis URLs: how to show one without its password, and how to hand one to Celery.

Every message or log line of ours that names a Redis URL goes through :func:`masked`: an
operator's ``redis://:secret@host:6379/0`` must never end up in a terminal scroll-back, a CI log
or a bug report. redis-py (the store, the referee's registry) takes the URL as given; Celery's
Redis transport does not know redis-py's ``unix://`` scheme and calls it ``redis+socket://``,
hence :func:`for_celery`.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlencode

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
