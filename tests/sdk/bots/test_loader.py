"""One bot loader for every command: ``sueca.sdk.bots.load_bot`` takes an example name,
``module:Class``, ``file.py:Class`` or ``./dir/file.py:Class``, and a bad spec is one precise
error quoting it. ``selfplay --bots ./mybot.py:Greedy`` crashed with ``TypeError: the 'package'
argument is required`` while ``sueca-bot run`` took the same words."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sueca.sdk.bots import EXAMPLES, BotLoadError, check_bot, load_bot

BIN = Path(sys.executable).parent

BOT_FILE = '''
from sueca.sdk import Bot


class Greedy(Bot):
    """Plays its highest legal card."""

    def play(self, observation):
        return max(observation.legal, key=lambda c: (c.points, c.strength))


def make_greedy():
    return Greedy()


NOT_CALLABLE = 3


class NoPlay:
    pass
'''


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh directory with unique bot module names (a module imported once stays in
    sys.modules), made the current directory."""
    name = f"loaderbot_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(BOT_FILE)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner.py").write_text(BOT_FILE)
    (tmp_path / f"{name}_broken.py").write_text("def broken(:\n")
    (tmp_path / f"{name}_needs.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    return tmp_path


def _mod(here: Path) -> str:
    return f"loaderbot_{here.name.replace('-', '_')}"


def test_examples_by_name() -> None:
    for name, cls in EXAMPLES.items():
        assert load_bot(name) is cls
        assert load_bot(f" {name} ") is cls
    assert load_bot("sueca.sdk.bots.random_bot:RandomBot") is EXAMPLES["random"]


@pytest.mark.parametrize("form", ["{mod}:Greedy", "{mod}.py:Greedy", "./{mod}.py:Greedy",
                                  "{dir}/{mod}.py:Greedy", "./sub/inner.py:Greedy",
                                  "sub/inner.py:make_greedy", "{mod}:make_greedy"])
def test_every_form_names_the_same_kind_of_bot(here: Path, form: str) -> None:
    spec = form.format(mod=_mod(here), dir=here)
    factory = load_bot(spec)
    check_bot(spec, factory)
    bot = factory()
    assert type(bot).__name__ == "Greedy" and callable(bot.play)


def test_a_file_is_imported_once(here: Path) -> None:
    """The arena's local runner loads its bots for every match: same file, same class."""
    assert load_bot("./sub/inner.py:Greedy") is load_bot(f"{here}/sub/inner.py:Greedy")


def test_a_bot_module_never_hides_an_installed_one(here: Path) -> None:
    """The current directory goes at the end of sys.path: a 'heapq.py' of the bot author's
    does not replace Python's heapq (for the bot's own imports either)."""
    (here / "heapq.py").write_text(BOT_FILE)
    with pytest.raises(BotLoadError, match="module 'heapq' has no 'Greedy': it defines no Bot "):
        load_bot("heapq:Greedy")
    assert type(load_bot("./heapq.py:Greedy")()).__name__ == "Greedy"  # the file form is exact


@pytest.mark.parametrize("form, says", [
    # every example bot, in EXAMPLES' order: derived, so a new example needs no edit here,
    # yet the test fails if the message drops one or stops listing the other forms
    ("genius", f"unknown bot 'genius': valid bots are {', '.join(EXAMPLES)}, "
               "module:Class or file.py:Class"),
    ("", "bad bot ''"),
    ("   ", "bad bot '   '"),
    (":Greedy", "bad bot ':Greedy': expected module:Class or file.py:Class"),
    ("{mod}:", "bad bot '{mod}:': expected module:Class"),
    ("no_such_module_xyz:Bot", "bot 'no_such_module_xyz:Bot': no module 'no_such_module_xyz'"),
    ("no.such.module:Bot", "no module 'no.such.module'"),
    ("{mod}:Nope", "bot '{mod}:Nope': module '{mod}' has no 'Nope': its bot classes are Greedy"),
    ("{mod}:NOT_CALLABLE", "'NOT_CALLABLE' in module '{mod}' is a int, not a class or factory"),
    ("{mod}:NoPlay", "class 'NoPlay' has no play(observation) method"),
    ("{mod}_broken:Bot", "module '{mod}_broken' failed to import: SyntaxError"),
    ("{mod}_needs:Bot", "module '{mod}_needs' failed to import: ModuleNotFoundError: No module "
                        "named 'no_such_dependency_xyz'"),
    ("./nothere.py:Greedy", "bot './nothere.py:Greedy': no file './nothere.py'"),
    ("sub/:Greedy", "no file 'sub/' (it is a directory)"),
    ("./{mod}.py:Nope", "file './{mod}.py' has no 'Nope': its bot classes are Greedy"),
    ("./{mod}.py", "bot './{mod}.py' names no class (give FILE:Class): its bot classes are "
                   "Greedy"),
    ("./{mod}_needs.py", "failed to import: ModuleNotFoundError"),
    ("./{mod}_broken.py:Bot", "'./{mod}_broken.py' failed to import: SyntaxError"),
    ("x" * 500 + ":Bot", "..."),
])
def test_a_bad_spec_is_one_precise_error(here: Path, form: str, says: str) -> None:
    spec = form.format(mod=_mod(here))
    with pytest.raises(BotLoadError) as err:
        load_bot(spec)
    message = str(err.value)
    assert says.format(mod=_mod(here)) in message, message
    assert len(message) < 500 and "\n" not in message


def test_a_bot_file_imports_its_neighbours_from_anywhere(tmp_path: Path) -> None:
    """``sloth.py`` imports ``winner`` from its own folder, run from another folder; a file
    with no class named lists its bot classes; a neighbour never shadows an installed module
    (the file's folder goes at the end of sys.path)."""
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "winner.py").write_text(BOT_FILE.replace("Greedy", "Winner"))
    (bots / "heapq.py").write_text("raise SystemExit('the stdlib heapq was shadowed')\n")
    (bots / "sloth.py").write_text("import heapq\nfrom winner import Winner\n\n\n"
                                   "class Sloth(Winner):\n    pass\n\n\n"
                                   "class Lazy(Winner):\n    pass\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = subprocess.run([str(BIN / "sueca-bot"), "selfplay", "--bots",
                          "../bots/sloth.py:Sloth,random", "--matches", "2", "--json"],
                         capture_output=True, text=True, timeout=60, cwd=elsewhere)
    assert out.returncode == 0, out.stderr
    out = subprocess.run([str(BIN / "sueca-bot"), "selfplay", "--bots", "../bots/sloth.py,random",
                          "--matches", "2"], capture_output=True, text=True, timeout=60,
                         cwd=elsewhere)
    assert out.returncode == 2
    assert ("bot '../bots/sloth.py' names no class (give FILE:Class): its bot classes are "
            "Lazy, Sloth") in out.stderr, out.stderr


@pytest.mark.parametrize("command", ["sueca-bot", "sueca-arena"])
@pytest.mark.parametrize("form", ["./greedy.py:Greedy", "greedy.py:Greedy", "greedy:Greedy"])
def test_selfplay_takes_every_form(tmp_path: Path, command: str, form: str) -> None:
    (tmp_path / "greedy.py").write_text(BOT_FILE)
    out = subprocess.run([str(BIN / command), "selfplay", "--bots", f"{form},random",
                          "--matches", "4", "--json"], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["bots"][0]["spec"] == form


@pytest.mark.parametrize("command", ["sueca-bot", "sueca-arena"])
def test_selfplay_bad_spec_is_a_clean_error(tmp_path: Path, command: str) -> None:
    (tmp_path / "greedy.py").write_text(BOT_FILE)
    for spec, says in [("./nothere.py:Greedy", "no file './nothere.py'"),
                       ("greedy.py:NoPlay", "class 'NoPlay' has no play"),
                       ("json:dumps", "dumps() cannot make a bot")]:
        out = subprocess.run([str(BIN / command), "selfplay", "--bots", f"random,{spec}",
                              "--matches", "2"], capture_output=True, text=True, timeout=60,
                             cwd=tmp_path)
        assert out.returncode == 2
        assert out.stderr.startswith(f"error: bot {spec!r}: ") and says in out.stderr
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
