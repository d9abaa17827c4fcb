"""The SDK's SUECA_* variables (what a bot author sets) and the machinery every layer's settings
share (:mod:`sueca.sdk.config`): parsing, quoting a bad value, pinning a copy.

The registry of every layer's variables and the generated page are tested in
tests/arena/test_league_settings.py; the referee's variables in
tests/referee/test_referee_settings.py."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from sueca.sdk import config
from sueca.sdk.settings import VARIABLES, Settings, SettingsError, Variable, current, replace, use


def test_the_sdk_declares_what_a_bot_author_sets() -> None:
    assert [v.name for v in VARIABLES] == [
        "SUECA_TOKEN", "SUECA_SERVER", "SUECA_TLS", "SUECA_TLS_CA", "SUECA_TLS_SERVER_NAME",
        "SUECA_SEED_KEY", "SUECA_LOG_FORMAT", "SUECA_EXEC_TIMEOUT", "SUECA_EXEC_PROCESSES",
        "SUECA_BOT_SUMMARY_SECONDS"]
    assert Settings.variables == VARIABLES


def test_defaults_and_parsing() -> None:
    s = Settings.from_env({})
    assert (s.token, s.server, s.tls, s.tls_ca, s.seed_key, s.log_format) == \
        (None, None, False, None, None, "text")
    s = Settings.from_env({"SUECA_TLS": "On", "SUECA_SERVER": " a:1 ", "SUECA_LOG_FORMAT": "  ",
                           "SUECA_SEED_KEY": "k" * 16, "SUECA_MATCH_TIMEOUT": "soon"})
    assert s.tls and s.server == "a:1" and s.seed_key == "k" * 16
    assert s.log_format == "text"  # blank means the default
    # a league variable is not the SDK's: not read here, so not refused here either


@pytest.mark.parametrize("name, value, says", [
    ("SUECA_TLS", "maybe", "1, true, yes or on"),
    ("SUECA_LOG_FORMAT", "xml", "text or json"),
    ("SUECA_SEED_KEY", "short", "a seed key needs at least 16 characters, this one has 5"),
])
def test_a_bad_value_is_quoted(name: str, value: str, says: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(f"{name}={value!r} is not usable")) as err:
        Settings.from_env({name: value})
    assert says in str(err.value)


def test_a_long_bad_value_is_capped_and_escaped() -> None:
    with pytest.raises(SettingsError) as err:
        Settings.from_env({"SUECA_LOG_FORMAT": "x\n" * 500})
    assert "\n" not in str(err.value) and len(str(err.value)) < 200


def test_use_pins_a_copy_for_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUECA_TLS_CA", "/env/ca.pem")
    assert current().tls_ca == "/env/ca.pem"
    try:
        use(replace(current(), tls_ca="/flag/ca.pem"))
        monkeypatch.setenv("SUECA_TLS_CA", "/env/other.pem")
        assert current().tls_ca == "/flag/ca.pem"
    finally:
        use(None)
    assert current().tls_ca == "/env/other.pem"


def test_current_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUECA_LOG_FORMAT", "json")
    assert current().log_format == "json"
    monkeypatch.setenv("SUECA_LOG_FORMAT", "text")
    assert current().log_format == "text"


# -- the machinery ------------------------------------------------------------------------------

def test_a_verbatim_variable_is_kept_as_set() -> None:
    @dataclass(frozen=True)
    class Secret(config.BaseSettings):
        variables: ClassVar[tuple[Variable, ...]] = (
            Variable("SUECA_SECRET", "", "nobody", "a secret", config.text, verbatim=True),)
        secret: str | None

    assert Secret.from_env({}).secret is None
    assert Secret.from_env({"SUECA_SECRET": ""}).secret == ""  # set but blank: not "unset"
    assert Secret.from_env({"SUECA_SECRET": " a b "}).secret == " a b "  # checked where used


def test_variables_and_fields_must_match() -> None:
    @dataclass(frozen=True)
    class Drifted(config.BaseSettings):
        variables: ClassVar[tuple[Variable, ...]] = (
            Variable("SUECA_ONE", "", "nobody", "one", config.text),)
        two: str | None

    with pytest.raises(TypeError, match="do not match"):
        config.check_declared(Drifted)


@pytest.mark.parametrize("parse, raw, says", [
    (config.port, "0", "from 1 to 65535"),
    (config.port, "+80", "from 1 to 65535"),  # digits only: int() would take it
    (config.count, "0", "at least 1"),
    (config.count, "\u00b2", "at least 1"),  # a digit to isdigit(), not to int()
    (config.whole, "1_000", "0 or more"),
    (config.seconds, "inf", "seconds above 0"),
    (config.positive, "-0.5", "above 0"),
])
def test_the_shared_parsers_refuse_with_what_is_wanted(parse: object, raw: str,
                                                       says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        parse(raw)  # type: ignore[operator]


def test_sueca_bot_stops_at_start_up_with_one_line() -> None:
    exe = Path(sys.executable).parent / "sueca-bot"
    out = subprocess.run([str(exe), "run", "random"], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "SUECA_LOG_FORMAT": "xml"})
    assert out.returncode == 2, out.stderr
    assert out.stderr == "error: SUECA_LOG_FORMAT='xml' is not usable: text or json\n"
    assert out.stdout == ""


def test_sueca_bot_reads_no_league_variable() -> None:
    """A worker's setting in a bot author's shell is none of sueca-bot's business."""
    exe = Path(sys.executable).parent / "sueca-bot"
    out = subprocess.run([str(exe), "run", "random"], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "SUECA_VISIBILITY_TIMEOUT": "later"})
    assert out.returncode == 2, out.stderr
    assert "SUECA_VISIBILITY_TIMEOUT" not in out.stderr and out.stderr.startswith("error: ")
