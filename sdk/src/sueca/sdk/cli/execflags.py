"""The ``exec:`` bots' flags on the commands that take bots: ``--exec-processes`` everywhere,
``--exec-timeout`` on self-play (:mod:`sueca.sdk.execbot` reads them as settings)."""

from __future__ import annotations

from typing import Any

from sueca.sdk.cli.common import Bounded
from sueca.sdk.settings import current, replace, use

__all__ = ["add_flags", "use_flags"]


def add_flags(parser: Any, timeout: bool) -> None:
    """``--exec-processes`` (and, for self-play, ``--exec-timeout``) on a command that takes
    bots; :func:`use_flags` applies them."""
    if timeout:
        parser.add_argument("--exec-timeout", action=Bounded, kind=float, low=0, above=True,
                            default=None, metavar="SECONDS",
                            help="seconds an exec: bot's program may take per answer "
                                 "(default $SUECA_EXEC_TIMEOUT, else 10)")
    parser.add_argument("--exec-processes", action=Bounded, kind=int, low=0, default=None,
                        help="most processes one exec: bot runs at once (default "
                             "$SUECA_EXEC_PROCESSES, else 0: no cap)")


def use_flags(args: Any) -> None:
    """Pin the settings the flags of :func:`add_flags` gave (the flag wins over the variable),
    for this process and the children it forks."""
    changes: dict[str, Any] = {}
    if getattr(args, "exec_timeout", None) is not None:
        changes["exec_timeout"] = args.exec_timeout
    if getattr(args, "exec_processes", None) is not None:
        changes["exec_processes"] = args.exec_processes
    if changes:
        use(replace(current(), **changes))
