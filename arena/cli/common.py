"""What the league commands share: the Redis option, the store, ports, output (``--json`` or a
table), and the operator settings check. Public names only: command modules import these, never
each other's private helpers.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from sueca.sdk.cli import Bounded, UserError
from sueca.sdk.settings import current

__all__ = ["Bounded", "UserError", "add_redis", "add_port", "redis_url", "add_redis_action",
           "open_store", "fmt", "clean", "emit", "console", "check_operator_settings",
           "check_port_free"]


def add_redis(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--redis", metavar="URL", default=None,
                        help="Redis URL (default: $SUECA_REDIS_URL)")


def add_port(parser: argparse.ArgumentParser, flag: str, **kwargs: Any) -> None:
    """A TCP port option to listen on: 1..65535 (0, "any free port", would be unknowable)."""
    parser.add_argument(flag, action=Bounded, kind=int, low=1, high=65535, **kwargs)


def redis_url(args: argparse.Namespace) -> str:
    url = getattr(args, "redis", None) or current().redis_url
    if not url:
        from sueca.arena.store import REDIS_HINT
        raise UserError(f"no Redis given: pass --redis URL or set SUECA_REDIS_URL{REDIS_HINT}")
    return url


def add_redis_action(actions: argparse._SubParsersAction, name: str, help: str, func: Any,
                     with_json: bool = True) -> argparse.ArgumentParser:
    """An ACTION parser taking ``--redis URL`` (and ``--json``) that runs ``func``."""
    p = actions.add_parser(name, help=help)
    add_redis(p)
    if with_json:
        p.add_argument("--json", action="store_true")
    p.set_defaults(func=func)
    return p


def open_store(args: argparse.Namespace) -> Any:  # a sueca.arena.store.Store
    from sueca.arena.store import Store, StoreUnavailable
    try:
        return Store.from_url(redis_url(args))
    except StoreUnavailable as err:
        raise UserError(str(err)) from None


def fmt(x: float | None, digits: int = 0) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isinf(x)) else f"{x:.{digits}f}"


def clean(x: Any) -> Any:
    """JSON-safe: no inf/nan."""
    if isinstance(x, float) and (math.isinf(x) or math.isnan(x)):
        return None
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x


def emit(args: argparse.Namespace, data: Any, show: Any) -> None:
    """``data`` as JSON with ``--json`` (no inf/nan), else ``show(data)``."""
    if args.json:
        print(json.dumps(clean(data), indent=2))
    else:
        show(data)


def console(stderr: bool = False):
    """A rich console; piped output gets 120 columns so tables never wrap a bot's name."""
    from rich.console import Console
    out = Console(stderr=stderr, highlight=False)
    if not out.is_terminal:
        out = Console(stderr=stderr, highlight=False, width=120)
    return out


def check_operator_settings() -> None:
    """TLS and operator-token settings are read now, once, so that a bad CA path or a blank
    token stops a worker or scheduler with one line instead of failing every match later."""
    from sueca.referee.security import operator_token_from_env
    from sueca.sdk.channels import CredentialsError, client_tls_from_env
    try:
        client_tls_from_env()
        operator_token_from_env()
    except CredentialsError as err:
        raise UserError(str(err)) from None


def check_port_free(host: str, port: int, what: str, hint: str) -> None:
    """A UserError now if ``port`` cannot be listened on, for a server that would otherwise
    start without it (a Celery worker's metrics are served from a signal handler, whose
    errors Celery only logs). A socket in TIME_WAIT does not count, as for the server."""
    import socket
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as err:
            raise UserError(f"cannot serve {what} on {host}:{port}: {err.strerror or err} "
                            f"({hint})") from None
