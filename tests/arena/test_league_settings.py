"""Every SUECA_* variable: declared by the layer that reads it, collected in one registry
(sueca.arena.settings.ALL_VARIABLES), documented in docs/settings.md (generated from it),
checked when sueca-arena starts."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sueca.arena.settings import (
    ALL_VARIABLES,
    LAYERS,
    ArenaSettings,
    SettingsError,
    current,
    markdown,
    replace,
    use,
)
from sueca.referee import settings as referee_settings
from sueca.sdk import settings as sdk_settings

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [p for d in ("sdk/src", "referee", "arena") for p in (ROOT / d).rglob("*.py")]
PAGE = ROOT / "docs" / "settings.md"


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
    declared = {v.name for v in ALL_VARIABLES}
    named = set()
    for path in SOURCES:
        named |= set(re.findall(r"\bSUECA_[A-Z][A-Z_]*[A-Z]\b", path.read_text()))
    assert named - declared == set()


def test_each_variable_is_declared_once_by_one_layer() -> None:
    names = [v.name for v in ALL_VARIABLES]
    assert len(names) == len(set(names)) == 44
    assert [own for _, _, own in LAYERS] == [sdk_settings.VARIABLES, referee_settings.VARIABLES,
                                           ArenaSettings.variables[-len(LAYERS[2][2]):]]
    assert issubclass(ArenaSettings, referee_settings.RefereeSettings)


def test_the_page_is_generated_from_the_registry() -> None:
    assert PAGE.read_text() == markdown(), \
        "docs/settings.md is stale: python -m sueca.arena.settings --markdown > docs/settings.md"


def test_the_page_lists_exactly_the_variables_with_their_defaults() -> None:
    rows = re.findall(r"^\| `(SUECA_[A-Z_]+)` \| ([^|]+) \|", PAGE.read_text(), re.M)
    assert [name for name, _ in rows] == [v.name for v in ALL_VARIABLES]
    for (name, default), var in zip(rows, ALL_VARIABLES):
        assert default.strip() == (f"`{var.default}`" if var.default else "—"), name


def test_the_page_is_regenerated_by_the_module() -> None:
    out = subprocess.run([sys.executable, "-m", "sueca.arena.settings", "--markdown"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout == markdown()


def test_defaults_and_parsing() -> None:
    s = ArenaSettings.from_env({})
    assert (s.redis_url, s.key_prefix, s.runner, s.match_timeout, s.match_attempts,
            s.referees, s.tls, s.metrics_port) == (None, "sueca:", "referee", 300.0, 5, (), False,
                                                   None)
    s = ArenaSettings.from_env({"SUECA_REFEREES": "a:1, b:2,", "SUECA_TLS": "On",
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
    ("SUECA_RETAIN_DAYS", "-1", "a whole number of days"),
    ("SUECA_ELO_K", "0", "not a number above 0"),
    ("SUECA_OUT_BYTES", "lots", "a number at least 0"),
])
def test_a_bad_value_is_quoted(name: str, value: str, says: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(f"{name}={value!r} is not usable")) as err:
        ArenaSettings.from_env({name: value})
    assert says in str(err.value)


def test_a_long_bad_value_is_capped_and_escaped() -> None:
    with pytest.raises(SettingsError) as err:
        ArenaSettings.from_env({"SUECA_MATCH_ATTEMPTS": "x\n" * 500})
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


def test_every_layer_reads_the_copy_the_league_pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """``sueca-arena serve`` pins a CA for its own referee: the SDK's channels must see it."""
    monkeypatch.setenv("SUECA_TLS_CA", "/env/ca.pem")
    try:
        use(replace(current(), tls_ca="/flag/ca.pem", operator_port=50052))
        assert sdk_settings.current().tls_ca == "/flag/ca.pem"
        assert referee_settings.current().operator_port == 50052
    finally:
        use(None)
    assert sdk_settings.current().tls_ca == "/env/ca.pem"


def test_a_copy_pinned_below_keeps_the_league_s_own_variables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUECA_MATCH_ATTEMPTS", "7")
    try:
        use(replace(sdk_settings.current(), tls_ca="/flag/ca.pem"))
        s = current()
        assert (s.tls_ca, s.match_attempts) == ("/flag/ca.pem", 7)
    finally:
        use(None)


@pytest.mark.parametrize("argv", [["sueca-arena", "selfplay", "--bots", "random,random"],
                                  ["sueca-arena", "worker"]])
def test_commands_stop_at_start_up_with_one_line(argv: list[str]) -> None:
    exe = Path(sys.executable).parent / argv[0]
    out = subprocess.run([str(exe), *argv[1:]], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "SUECA_VISIBILITY_TIMEOUT": "later"})
    assert out.returncode == 2, out.stderr
    assert out.stderr == ("error: SUECA_VISIBILITY_TIMEOUT='later' is not usable: not a number "
                          "of seconds above 0\n")
    assert out.stdout == ""


def test_sueca_arena_checks_every_layer_s_variables_at_start_up() -> None:
    exe = Path(sys.executable).parent / "sueca-arena"
    for name, value in (("SUECA_LOG_FORMAT", "xml"), ("SUECA_OPERATOR_PORT", "0")):
        out = subprocess.run([str(exe), "worker"], capture_output=True, text=True, timeout=60,
                             env={"PATH": "/usr/bin:/bin", name: value})
        assert out.returncode == 2 and out.stderr.startswith(f"error: {name}={value!r} is not "
                                                             "usable"), out.stderr
