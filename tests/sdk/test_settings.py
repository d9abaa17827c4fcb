"""Every SUECA_* variable: read in one module, documented in the README, checked at start-up."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sueca.sdk.settings import VARIABLES, Settings, SettingsError, current, replace, use

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [p for d in ("sdk/src", "referee", "arena") for p in (ROOT / d).rglob("*.py")]


def test_no_other_module_reads_a_sueca_variable_from_the_environment() -> None:
    readers = []
    for path in SOURCES:
        if path.name == "settings.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(r"SUECA_[A-Z_]+", node.value):
                parent_reads = path.read_text()
                if re.search(rf"environ(\.get)?\(?\[?\s*[\"']{node.value}", parent_reads) or \
                        re.search(rf"getenv\(\s*[\"']{node.value}", parent_reads):
                    readers.append(f"{path.relative_to(ROOT)}: {node.value}")
    assert not readers, readers


def test_every_variable_named_in_the_code_is_declared() -> None:
    declared = {v.name for v in VARIABLES}
    named = set()
    for path in SOURCES:
        named |= set(re.findall(r"\bSUECA_[A-Z][A-Z_]*[A-Z]\b", path.read_text()))
    assert named - declared == set()


def test_the_readme_table_lists_exactly_the_variables_with_their_defaults() -> None:
    text = (ROOT / "README.md").read_text()
    rows = re.findall(r"^\| `(SUECA_[A-Z_]+)` \| ([^|]+) \|", text, re.M)
    assert [name for name, _ in rows] == [v.name for v in VARIABLES]
    for (name, default), var in zip(rows, VARIABLES):
        assert default.strip() == (f"`{var.default}`" if var.default else "—"), name


def test_defaults_and_parsing() -> None:
    s = Settings.from_env({})
    assert (s.redis_url, s.key_prefix, s.runner, s.match_timeout, s.match_attempts,
            s.referees, s.tls, s.metrics_port) == (None, "sueca:", "referee", 300.0, 5, (), False,
                                                   None)
    s = Settings.from_env({"SUECA_REFEREES": "a:1, b:2,", "SUECA_TLS": "On",
                           "SUECA_METRICS_PORT": "9100", "SUECA_MATCH_TIMEOUT": "  "})
    assert s.referees == ("a:1", "b:2") and s.tls and s.metrics_port == 9100
    assert s.match_timeout == 300.0  # blank means the default


@pytest.mark.parametrize("name, value, says", [
    ("SUECA_MATCH_TIMEOUT", "soon", "not a number of seconds above 0"),
    ("SUECA_MATCH_TIMEOUT", "-1", "not a number of seconds above 0"),
    ("SUECA_MATCH_TIMEOUT", "nan", "not a number of seconds above 0"),
    ("SUECA_METRICS_PORT", "70000", "from 1 to 65535"),
    ("SUECA_MATCH_ATTEMPTS", "0", "at least 1"),
    ("SUECA_MATCH_ATTEMPTS", "\u00b2", "at least 1"),  # a digit to isdigit(), not to int()
    ("SUECA_RUNNER", "remote", "referee or local"),
    ("SUECA_TLS", "maybe", "1, true, yes or on"),
    ("SUECA_KEY_PREFIX", "a b", "one word"),
])
def test_a_bad_value_is_quoted(name: str, value: str, says: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(f"{name}={value!r} is not usable")) as err:
        Settings.from_env({name: value})
    assert says in str(err.value)


def test_a_long_bad_value_is_capped_and_escaped() -> None:
    with pytest.raises(SettingsError) as err:
        Settings.from_env({"SUECA_MATCH_ATTEMPTS": "x\n" * 500})
    assert "\n" not in str(err.value) and len(str(err.value)) < 200


def test_use_pins_a_copy_for_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUECA_REFEREES", "env:1")
    assert current().referees == ("env:1",)
    try:
        use(replace(current(), referees=("flag:2",)))
        monkeypatch.setenv("SUECA_REFEREES", "env:3")
        assert current().referees == ("flag:2",)
    finally:
        use(None)
    assert current().referees == ("env:3",)


@pytest.mark.parametrize("argv", [["sueca-arena", "selfplay", "--bots", "random,random"],
                                  ["sueca-arena", "worker"],
                                  ["sueca-bot", "run", "random"]])
def test_commands_stop_at_start_up_with_one_line(argv: list[str]) -> None:
    exe = Path(sys.executable).parent / argv[0]
    out = subprocess.run([str(exe), *argv[1:]], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "SUECA_VISIBILITY_TIMEOUT": "later"})
    assert out.returncode == 2, out.stderr
    assert out.stderr == ("error: SUECA_VISIBILITY_TIMEOUT='later' is not usable: not a number "
                          "of seconds above 0\n")
    assert out.stdout == ""
