"""Example bots, by name, and :func:`load_bot`: the one place a bot named on a command line is
found, for every command that takes one (``sueca-bot run``, both ``selfplay`` commands, the
arena's in-process runner).

``random`` plays a random legal card, ``heuristic`` plays like a club player, ``reckless`` is
random and sometimes ignores the led suit (so renúncias happen). Any other bot is named
``module:Class`` (e.g. ``mybots.smart:SmartBot``; a module in the current directory is found) or
``path/to/file.py:Class`` (``./mybot.py:Greedy``, ``mybot.py:Greedy``). ``Class`` may be a
no-argument factory function instead. ``exec:COMMAND ARGS...`` is a program in any language
speaking the line protocol of :mod:`sueca.sdk.execbot` (``exec:./mybot``,
``exec:'node bot.js'``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from typing import Any, cast

from sueca.engine import Player

from ..bot import Bot
from ..execbot import ExecSpecError, load_exec
from .heuristic import HeuristicBot
from .pimc import PimcBot
from .random_bot import RandomBot
from .reckless import RecklessBot

__all__ = ["EXAMPLES", "BotLoadError", "HeuristicBot", "PimcBot", "RandomBot", "RecklessBot",
           "check_bot", "load_bot"]

EXAMPLES: dict[str, type[Bot]] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
    "reckless": RecklessBot,
    "pimc": PimcBot,
}

SPEC_SHOWN = 120  # characters of a bad spec quoted in an error (a spec may come from anywhere)


class BotLoadError(ValueError):
    """A bot spec that names no bot: the message quotes the spec and says what is wrong."""


def load_bot(spec: str) -> Callable[[], Player]:
    """The bot class (or no-argument factory) named by ``spec``: an example name,
    ``module:Class`` or ``path/to/file.py:Class``; :class:`BotLoadError` otherwise.

    The result is called with no arguments to make one bot for one seat of one match. A spec
    whose part before the last ``:`` ends in ``.py`` or holds a ``/`` is a file (a bot author's
    own file, run as it is, with no package around it); anything else is a module name,
    imported with the current directory at the end of ``sys.path`` (so a bot file next to you
    is found, but never hides an installed module of the same name: a ``random.py`` of yours
    does not replace Python's ``random``).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise BotLoadError(f"bad bot {_quote(spec)}: {_valid()}")
    spec = spec.strip()
    if spec.startswith("exec:"):  # a program in any language (sueca.sdk.execbot)
        try:
            return load_exec(spec)
        except ExecSpecError as err:
            raise BotLoadError(str(err)) from None
    if spec in EXAMPLES:
        return EXAMPLES[spec]
    if spec.partition(":")[0] in EXAMPLES and "=" in spec:  # pimc:samples=64 (no module:Class has =)
        return _example_with_arguments(spec)
    where, sep, attr = spec.rpartition(":")
    if not sep and spec.endswith(".py"):  # a file, but which of its bots?
        raise BotLoadError(f"bot {_quote(spec)} names no class (give FILE:Class)"
                           f"{_classes_in(_import_file(spec, spec))}")
    if not sep:
        raise BotLoadError(f"unknown bot {_quote(spec)}: {_valid()}")
    if not where or not attr:
        raise BotLoadError(f"bad bot {_quote(spec)}: expected module:Class or file.py:Class, "
                           "e.g. mybots.smart:SmartBot or ./mybot.py:Greedy")
    if where.endswith(".py") or "/" in where or os.sep in where:
        module, what = _import_file(spec, where), f"file {_quote(where)}"
    else:
        module, what = _import_module(spec, where), f"module {_quote(where)}"
    found: Any = module
    for part in attr.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise BotLoadError(f"bot {_quote(spec)}: {what} has no {_quote(attr)}"
                               f"{_classes_in(module)}")
    if not callable(found):
        raise BotLoadError(f"bot {_quote(spec)}: {_quote(attr)} in {what} is a "
                           f"{type(found).__name__}, not a class or factory")
    if isinstance(found, type) and not callable(getattr(found, "play", None)):
        raise BotLoadError(f"bot {_quote(spec)}: class {_quote(attr)} has no play(observation) method")
    return cast(Callable[[], Player], found)


def check_bot(spec: str, factory: Callable[[], Any]) -> None:
    """Make one bot with ``factory`` now and check it is a :class:`sueca.sdk.Bot`.

    Commands call this at start-up: without it, a spec naming any callable (``json:dumps``, a
    class that is not a bot, a class whose ``__init__`` needs arguments) would load fine and
    fail only when the first game begins, far from the command line that caused it.
    """
    name = getattr(factory, "__qualname__", None) or repr(factory)
    try:
        made = factory()
    except Exception as err:
        raise BotLoadError(f"bot {_quote(spec)}: {name}() cannot make a bot: "
                           f"{type(err).__name__}: {err}") from None
    if not isinstance(made, Bot):
        raise BotLoadError(f"bot {_quote(spec)}: {name}() made a {type(made).__name__}, not a "
                           "Bot: give a subclass of sueca.sdk.Bot, or a function returning an "
                           "instance of one")


def _import_module(spec: str, name: str) -> Any:
    cwd = os.getcwd()
    if "" not in sys.path and cwd not in sys.path:
        sys.path.append(cwd)  # after installed modules: a bot file never shadows one of them
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name is not None and (name == err.name or name.startswith(err.name + ".")):
            raise BotLoadError(f"bot {_quote(spec)}: no module {_quote(name)} (looked in the current "
                               f"directory {_quote(cwd)} and the installed packages)") from None
        raise BotLoadError(f"bot {_quote(spec)}: module {_quote(name)} failed to import: "
                           f"{type(err).__name__}: {err}") from None
    except Exception as err:  # the bot's own code raised while importing: say so in one line
        raise BotLoadError(f"bot {_quote(spec)}: module {_quote(name)} failed to import: "
                           f"{type(err).__name__}: {err}") from None


def _classes_in(module: Any) -> str:
    """``: its bot classes are A, B`` (the Bot subclasses a bot file defines, else those it
    imports), or ``: it defines no Bot subclass``."""
    bots = [v for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, Bot) and v is not Bot]
    own = [b for b in bots if b.__module__ == module.__name__] or bots
    names = sorted(b.__name__ for b in own)
    if not names:
        return ": it defines no Bot subclass (class MyBot(sueca.sdk.Bot) with a play method)"
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    return f": its bot classes are {shown}"


def _import_file(spec: str, path: str) -> Any:
    """The module of a bot file, imported once per process (by absolute path): the arena's
    runner loads its bots for every match.

    The file's folder is added to the end of ``sys.path`` (and stays there, for imports a bot
    makes later, in play), so a bot file imports its neighbours (``from winner import
    Winner``) from wherever the command runs. At the end, not the front: a neighbour never
    shadows an installed module (a ``random.py`` beside the bot does not replace Python's
    ``random``), as for ``module:Class`` and the current directory."""
    if not os.path.isfile(path):
        raise BotLoadError(f"bot {_quote(spec)}: no file {_quote(path)}"
                           + (" (it is a directory)" if os.path.isdir(path) else ""))
    full = os.path.realpath(path)
    stem = os.path.splitext(os.path.basename(full))[0]
    name = f"sueca_bot_{stem}_{hashlib.sha256(full.encode()).hexdigest()[:8]}"
    module = sys.modules.get(name)
    if module is not None:
        return module
    module_spec = importlib.util.spec_from_file_location(name, full)
    if module_spec is None or module_spec.loader is None:
        raise BotLoadError(f"bot {_quote(spec)}: cannot load {_quote(path)} as Python")
    module = importlib.util.module_from_spec(module_spec)
    folder = os.path.dirname(full)
    if folder not in sys.path:
        sys.path.append(folder)
    sys.modules[name] = module  # dataclasses, pickle and typing look their module up by name
    try:
        module_spec.loader.exec_module(module)
    except Exception as err:
        del sys.modules[name]
        raise BotLoadError(f"bot {_quote(spec)}: {_quote(path)} failed to import: "
                           f"{type(err).__name__}: {err}") from None
    return module


def _example_with_arguments(spec: str) -> Callable[[], Player]:
    """An example bot with arguments, ``NAME:key=value[:key=value...]`` (``pimc:samples=64``):
    a factory of the bot made with those keyword arguments. The bot class lists what it takes
    in ``ARGUMENTS`` (name -> type); an unknown name, a bad value or a value the bot refuses is
    a :class:`BotLoadError` quoting it and listing the bot's arguments."""
    name, _, rest = spec.partition(":")
    cls = EXAMPLES[name]
    takes: dict[str, type] = getattr(cls, "ARGUMENTS", {})
    listed = (f"{name} takes {', '.join(f'{k}=<{t.__name__}>' for k, t in takes.items())}"
              if takes else f"{name} takes no arguments")
    kwargs: dict[str, Any] = {}
    for part in rest.split(":"):
        key, eq, text = part.partition("=")
        key = key.strip()
        if not eq or key not in takes:
            raise BotLoadError(f"bot {_quote(spec)}: unknown argument {_quote(part)}: {listed}")
        try:
            kwargs[key] = takes[key](text.strip())
        except ValueError:
            raise BotLoadError(f"bot {_quote(spec)}: bad value {_quote(text)} for {key}: "
                               f"{listed}") from None
    try:
        cls(**kwargs)
    except ValueError as err:
        raise BotLoadError(f"bot {_quote(spec)}: {err}: {listed}") from None
    return cast(Callable[[], Player], functools.partial(cls, **kwargs))


def _quote(spec: Any) -> str:
    text = repr(spec)
    return text if len(text) <= SPEC_SHOWN else text[:SPEC_SHOWN] + "...'"


def _valid() -> str:
    return (f"valid bots are {', '.join(EXAMPLES)}, module:Class or file.py:Class "
            "(e.g. ./mybot.py:Greedy), or a program as exec:COMMAND (e.g. exec:./mybot)")
