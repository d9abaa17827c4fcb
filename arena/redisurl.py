"""Redis URLs: how to show one without its password, and how to hand one to Celery.

Every message or log line of ours that names a Redis URL goes through :func:`masked`: an
operator's ``redis://:secret@host:6379/0`` must never end up in a terminal scroll-back, a CI log
or a bug report. redis-py (the store, the referee's registry) takes the URL as given; Celery's
Redis transport does not know redis-py's ``unix://`` scheme and calls it ``redis+socket://``,
hence :func:`for_celery`.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode

__all__ = ["masked", "for_celery", "MASK"]

MASK = "***"

# a password given as a query parameter (redis-py reads ``?password=`` too)
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def masked(url: str) -> str:
    """``url`` with its password (userinfo or ``password=`` query) replaced by ``***``.

    Deliberately generous: whatever sits between ``user:`` and the last ``@`` before the path
    is hidden, so a password with an unescaped ``@`` is hidden whole, not partly.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _QUERY_PASSWORD.sub(rf"\g<1>{MASK}", url)
    head, query_sep, query = _split_query(rest)
    if "@" in head:
        userinfo, _, where = head.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        if colon:
            head = f"{user}:{MASK}@{where}"
    return _QUERY_PASSWORD.sub(rf"\g<1>{MASK}", f"{scheme}://{head}{query_sep}{query}")


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
