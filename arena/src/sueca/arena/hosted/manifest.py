"""``sueca-bot.toml``: how a submitted bot starts, and how it is built.

A Python SDK bot names its class (``python = "mybot:Greedy"``: run by
:mod:`sueca.sdk.execserve` inside the sandbox); any other program gives its command
(``exec = "./bot"``, or a list of words ``exec = ["node", "bot.js"]``), which speaks
``sueca-exec/1`` on its standard input and output. ``build`` (a command, or a list of words) runs
once per submission on each bot host, in the sandbox, with no network. Nothing else is allowed:
a misspelt key would otherwise be ignored and the bot start in a way its author did not mean.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from dataclasses import dataclass

from sueca.sdk.logs import shown

__all__ = ["MANIFEST", "Manifest", "ManifestError", "parse_manifest", "KEYS"]

MANIFEST = "sueca-bot.toml"
KEYS = ("python", "exec", "build")
_PYTHON = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")
_WORDS = 64  # words of one command: more is not a command line anybody writes
_WORD_CHARS = 1024


class ManifestError(ValueError):
    """A manifest that cannot start a bot; the message quotes the field and its value."""


@dataclass(frozen=True)
class Manifest:
    """What a submission's manifest says: ``python`` (``module:Class``) or ``exec`` (argv),
    and the ``build`` argv (empty: nothing to build)."""

    python: str | None
    exec: tuple[str, ...]
    build: tuple[str, ...]

    def program(self, python: str) -> list[str]:
        """The bot's argv inside the sandbox; ``python``: the interpreter a Python bot runs on."""
        if self.python is not None:
            return [python, "-m", "sueca.sdk.execserve", self.python]
        return list(self.exec)


def _command(key: str, value: object) -> tuple[str, ...]:
    """A command given as one string (split as a shell splits words, never run by a shell) or
    as a list of strings."""
    if isinstance(value, str):
        try:
            words = shlex.split(value)
        except ValueError as err:
            raise ManifestError(f"{MANIFEST}: {key} = {shown(value, 80)}: {err}") from None
    elif isinstance(value, list) and all(isinstance(w, str) for w in value):
        words = list(value)
    else:
        raise ManifestError(f"{MANIFEST}: {key} must be a string or a list of strings, not "
                            f"{shown(value, 80)}")
    if not words or not words[0]:
        raise ManifestError(f"{MANIFEST}: {key} = {shown(value, 80)} names no program")
    if len(words) > _WORDS or any(len(w) > _WORD_CHARS or "\0" in w for w in words):
        raise ManifestError(f"{MANIFEST}: {key} = {shown(value, 80)}: at most {_WORDS} words of "
                            f"at most {_WORD_CHARS} characters, no NUL")
    return tuple(words)


def parse_manifest(text: str) -> Manifest:
    """The manifest in ``text``; :class:`ManifestError` quoting the bad field otherwise."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ManifestError(f"{MANIFEST} is not valid TOML: {err}") from None
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ManifestError(f"{MANIFEST}: unknown key {shown(unknown[0], 40)} (the keys are "
                            f"{', '.join(KEYS)})")
    if "python" in data and "exec" in data:
        raise ManifestError(f"{MANIFEST}: both python and exec: give one (python = "
                            "\"module:Class\" for an SDK bot, exec = \"./bot\" for a program)")
    if "python" not in data and "exec" not in data:
        raise ManifestError(f"{MANIFEST}: no python or exec: say how the bot starts (python = "
                            "\"module:Class\" for an SDK bot, exec = \"./bot\" for a program)")
    python = data.get("python")
    if python is not None and (not isinstance(python, str) or not _PYTHON.match(python)):
        raise ManifestError(f"{MANIFEST}: python = {shown(python, 80)}: expected "
                            "\"module:Class\" (a module of the submission, e.g. \"mybot:Greedy\")")
    argv = _command("exec", data["exec"]) if "exec" in data else ()
    build = _command("build", data["build"]) if "build" in data else ()
    return Manifest(python=python, exec=argv, build=build)
