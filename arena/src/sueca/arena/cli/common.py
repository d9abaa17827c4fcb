"""What the league commands share: the Redis option, the store, ports, output (``--json`` or a
table), and the operator settings check. Public names only: command modules import these, never
each other's private helpers.
"""

from __future__ import annotations

import argparse
import copy
import json
import socket
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from sueca.arena.format import clean, fmt
from sueca.arena.redisurl import DATA_DIR, arena_socket, arena_url, not_running
from sueca.arena.render import console as make_console
from sueca.arena.settings import current
from sueca.arena.store import REDIS_HINT, Store, StoreUnavailable
from sueca.referee.security import operator_token_from_env
from sueca.sdk.channels import CredentialsError, client_tls_from_env
from sueca.sdk.cli import Bounded, UserError

__all__ = ["Bounded", "UserError", "add_redis", "add_port", "redis_url", "add_redis_action",
           "open_store", "share_options", "fmt", "clean", "emit", "console",
           "check_operator_settings", "check_port_free", "Column", "fitted_table", "fit_columns"]


def add_redis(parser: argparse.ArgumentParser, default: None | str = None) -> None:
    """``--redis URL`` and ``--data DIR`` (the arena that ``sueca-arena serve --data DIR``
    keeps there); ``default=argparse.SUPPRESS`` for a sub-command that must not reset what its
    parent command was given."""
    parser.add_argument("--redis", metavar="URL", default=default,
                        help="Redis URL (default: $SUECA_REDIS_URL, else the arena serve runs "
                             f"from ./{DATA_DIR})")
    parser.add_argument("--data", metavar="DIR", default=default,
                        help="the arena that `sueca-arena serve --data DIR` runs from DIR, "
                             "instead of --redis")


def add_port(parser: argparse.ArgumentParser, flag: str, **kwargs: Any) -> None:  # Any: argparse's
    """A TCP port option to listen on: 1..65535 (0, "any free port", would be unknowable)."""
    parser.add_argument(flag, action=Bounded, kind=int, low=1, high=65535, **kwargs)


def redis_url(args: argparse.Namespace) -> str:
    """The Redis of the command: ``--data DIR``'s arena, ``--redis``, ``SUECA_REDIS_URL``, else
    the arena ``serve`` runs from ``./sueca-data`` (said once on stderr, and kept in ``args``
    so that the command's later calls and errors name that folder); a UserError saying what
    to pass when there is none."""
    data = getattr(args, "data", None)
    if data is not None:
        if getattr(args, "redis", None):
            raise UserError(f"--redis {args.redis!r} and --data {data!r} name two arenas: "
                            "give one")
        return arena_url(data)
    url = getattr(args, "redis", None) or current().redis_url
    if url:
        return url
    if arena_socket(DATA_DIR).is_socket():
        print(f"using the arena serve runs from ./{DATA_DIR} (--data {DATA_DIR}; --redis URL "
              "or --data DIR for another)", file=sys.stderr)
        args.data = DATA_DIR
        return arena_url(DATA_DIR)
    raise UserError(f"no Redis given: pass --redis URL, set SUECA_REDIS_URL, or pass --data DIR "
                    f"for the arena `sueca-arena serve --data DIR` runs (none runs from "
                    f"./{DATA_DIR}){REDIS_HINT}")


#: the options every action of a command shares, accepted before the action as well as after
SHARED_OPTIONS = ("redis", "data", "json")


def _sub_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers of ``parser``'s sub-commands (aliases share a parser)."""
    found: dict[argparse.ArgumentParser, None] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(dict.fromkeys(action.choices.values()))
    return list(found)


def share_options(parser: argparse.ArgumentParser) -> None:
    """Let ``COMMAND --data DIR ACTION`` mean ``COMMAND ACTION --data DIR`` for the command
    ``parser`` (built with its actions) and the commands beneath it: each of
    :data:`SHARED_OPTIONS` that an action of a command takes is added to the command too
    (unless it has it already), and the actions' copies stop defaulting (``SUPPRESS``), so that
    an action never resets what was given before it. An action without the option refuses it
    when it was given before it."""
    subs = _sub_parsers(parser)
    for sub in subs:
        share_options(sub)
    if subs:
        have = {a.dest for a in parser._actions}
        for dest in SHARED_OPTIONS:
            found = {sub: next((a for a in sub._actions if a.dest == dest), None)
                     for sub in subs}
            options = [a for a in found.values() if a is not None]
            if not options:
                continue
            if dest not in have:
                parser._add_action(copy.copy(options[0]))
                for sub, option in found.items():
                    if option is None and callable(sub._defaults.get("func")):
                        sub.set_defaults(func=_refusing(sub, dest, options[0],
                                                        sub._defaults["func"]))
            for option in options:
                option.default = argparse.SUPPRESS


def _refusing(sub: argparse.ArgumentParser, dest: str, option: argparse.Action,
              func: Command) -> Command:
    """``func``, unless the option ``dest``, which ``sub`` lacks, was given before it."""
    unset = option.default

    def run(args: argparse.Namespace) -> int:
        if getattr(args, dest, unset) != unset:
            raise UserError(f"`{sub.prog}` takes no {option.option_strings[-1]}")
        return func(args)

    return run


#: what a command's parser runs (``set_defaults(func=...)``): the exit code
Command = Callable[[argparse.Namespace], int]
_Data = TypeVar("_Data")


def add_redis_action(actions: argparse._SubParsersAction[argparse.ArgumentParser], name: str,
                     help: str, func: Command, *, with_json: bool = True
                     ) -> argparse.ArgumentParser:
    """An ACTION parser taking ``--redis URL`` (and ``--json``) that runs ``func``."""
    p = actions.add_parser(name, help=help)
    add_redis(p)
    if with_json:
        p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=func)
    return p


def open_store(args: argparse.Namespace) -> Store:
    """The store of :func:`redis_url`; a UserError quoting why it cannot be reached (for a
    data folder: that no serve runs there)."""
    try:
        return Store.from_url(redis_url(args))
    except StoreUnavailable as err:
        data = getattr(args, "data", None)
        if data is not None:
            raise not_running(data) from None
        raise UserError(str(err)) from None


def emit(args: argparse.Namespace, data: _Data, show: Callable[[_Data], object]) -> None:
    """``data`` as JSON with ``--json`` (no inf/nan), else ``show(data)``."""
    if args.json:
        print(json.dumps(clean(data), indent=2))
    else:
        show(data)


def console(stderr: bool = False) -> Console:
    """A rich console (:func:`sueca.arena.render.console`): fitted to a terminal or to
    ``COLUMNS``, else unbounded into a pipe or file, so piped output never cuts an id or a
    name unless a width was asked for."""
    return make_console(stderr)


#: a column: (header, drop rank: None never dropped, else lower ranks go first when narrow)
Column = tuple[str, int | None]


def fit_columns(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int, *,
                names: Collection[int] = ()) -> list[int]:
    """The columns of a table that fit ``width`` (indexes, in order): those with a drop rank
    are left out, lowest first, until every cell fits whole on its line and the ``names``
    columns (bots' names, several to a cell separated by spaces) fit at their longest word. A
    droppable name column goes only when even 3 characters of each name do not fit."""
    need = _needs(columns, rows)
    word = _words(columns, rows, names)
    keep = list(range(len(columns)))
    for i in sorted((i for i, (_, d) in enumerate(columns) if d is not None),
                    key=lambda i: columns[i][1] or 0):
        if _width(keep, need, word) <= width:
            break
        if i in names and _width(keep, need, word, 3) <= width:
            continue
        keep.remove(i)
    return keep


def _needs(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> list[int]:
    return [max([cell_len(line) for line in head.split("\n")] + [cell_len(r[i]) for r in rows])
            for i, (head, _) in enumerate(columns)]


def _words(columns: Sequence[Column], rows: Sequence[Sequence[str]],
           names: Collection[int]) -> dict[int, int]:
    """A name column's narrowest width that cuts no name: its longest word (a name or a header
    word); at that width its cells wrap between the names they list."""
    return {i: max(cell_len(w) for cell in [columns[i][0], *(r[i] for r in rows)]
                   for w in [*cell.split(), ""]) for i in names}


def _width(cols: list[int], need: list[int], word: dict[int, int],
           name_min: int | None = None) -> int:
    """A table's width: the content, a space either side of each cell, the rules."""
    return sum(min(need[i], word[i] if name_min is None else name_min) if i in word
               else need[i] for i in cols) + 3 * len(cols) + 1


def fitted_table(title: str, caption: str, *, columns: Sequence[Column],
                 rows: Sequence[Sequence[str]], out: Console,
                 name: int | Sequence[int] = 1, whole: Sequence[int] = ()) -> Table:
    """A rich Table fitted to ``out``'s width, cutting nothing: the columns in ``whole`` (ids)
    are always shown on one line; the ``name`` column(s) may wrap between names but fold
    inside a name only as a last resort; every other cell keeps its full width. When the table
    is too wide, :func:`fit_columns` leaves columns out, which the caption then says; only when
    no droppable column is left do names fold (never below 3 characters). Headers may hold
    newlines. Into a pipe or file (:func:`console`) without ``COLUMNS`` the width is
    unbounded, so nothing is dropped, wrapped or folded."""
    names = {name} if isinstance(name, int) else set(name)
    need = _needs(columns, rows)
    word = _words(columns, rows, names)
    keep = fit_columns(columns, rows, out.width, names=names)
    dropped = [columns[i][0].replace("\n", " ") for i in range(len(columns)) if i not in keep]
    if dropped:
        caption += f" · too narrow to show: {', '.join(dropped)} (--json has every column)"
    # still too wide with every droppable column gone: the names fold below their longest
    # (never below 3), so that the table fits and rich cuts nothing at the screen's edge
    shown_names = [i for i in keep if i in names]
    fold: int | None = None
    if shown_names and _width(keep, need, word) > out.width:
        fold = max(3, (out.width - _width(keep, need, word, 0)) // len(shown_names))
    table = Table(title=title, caption=caption)
    for i in keep:
        head = columns[i][0]
        if i in names:
            table.add_column(head, justify="left", overflow="fold",
                             min_width=min(need[i], word[i] if fold is None else fold))
        elif i in whole:
            table.add_column(head, justify="left", no_wrap=True, overflow="fold",
                             min_width=need[i])
        else:
            table.add_column(head, justify="right", no_wrap=True, overflow="fold",
                             min_width=need[i])
    for r in rows:
        table.add_row(*(r[i] for i in keep))
    return table


def check_operator_settings() -> None:
    """TLS and operator-token settings are read now, once, so that a bad CA path or a blank
    token stops a worker or scheduler with one line instead of failing every match later."""
    try:
        client_tls_from_env()
        operator_token_from_env()
    except CredentialsError as err:
        raise UserError(str(err)) from None


def check_port_free(host: str, port: int, what: str, hint: str) -> None:
    """A UserError now if ``port`` cannot be listened on, for a server that would otherwise
    start without it (a Celery worker's metrics are served from a signal handler, whose
    errors Celery only logs). A socket in TIME_WAIT does not count, as for the server."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as err:
            raise UserError(f"cannot serve {what} on {host}:{port}: {err.strerror or err} "
                            f"({hint})") from None
