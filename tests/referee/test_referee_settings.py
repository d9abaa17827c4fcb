"""The referee's SUECA_* variables (TLS certificate, operator token and port, per-bot limits):
declared in sueca.referee.settings, on top of the SDK's."""

from __future__ import annotations

import dataclasses
import re

import pytest

from sueca.referee.limits import Limits
from sueca.referee.security import CredentialsError, operator_token_from_env
from sueca.referee.settings import LIMITS, VARIABLES, RefereeSettings, SettingsError
from sueca.sdk import settings as sdk_settings


def test_the_referee_extends_the_sdk() -> None:
    assert RefereeSettings.variables == sdk_settings.VARIABLES + VARIABLES
    assert issubclass(RefereeSettings, sdk_settings.Settings)
    assert not {v.name for v in VARIABLES} & {v.name for v in sdk_settings.VARIABLES}


def test_every_limit_has_a_variable() -> None:
    assert list(LIMITS) == [f.name for f in dataclasses.fields(Limits)]
    assert {f"SUECA_{name.upper()}" for name in LIMITS} <= {v.name for v in VARIABLES}


def test_defaults_and_parsing() -> None:
    s = RefereeSettings.from_env({})
    assert (s.tls_cert, s.operator_token, s.operator_port, s.out_bytes, s.hello_seconds) == \
        (None, None, None, None, None)
    assert s.log_format == "text"  # the SDK's, read too
    s = RefereeSettings.from_env({"SUECA_OPERATOR_PORT": "50052", "SUECA_OUT_BYTES": "0",
                                  "SUECA_HELLO_SECONDS": "2.5", "SUECA_TLS_CERT": " c.pem "})
    assert (s.operator_port, s.out_bytes, s.hello_seconds, s.tls_cert) == \
        (50052, 0.0, 2.5, "c.pem")


def test_the_operator_token_is_kept_as_set_and_checked_where_used() -> None:
    assert RefereeSettings.from_env({"SUECA_OPERATOR_TOKEN": ""}).operator_token == ""
    with pytest.raises(CredentialsError, match="SUECA_OPERATOR_TOKEN is empty"):
        operator_token_from_env({"SUECA_OPERATOR_TOKEN": " "})
    assert operator_token_from_env({}) is None
    assert operator_token_from_env({"SUECA_OPERATOR_TOKEN": " op "}) == "op"


@pytest.mark.parametrize("name, value, says", [
    ("SUECA_OPERATOR_PORT", "70000", "from 1 to 65535"),
    ("SUECA_OUT_BYTES", "lots", "a number at least 0 (0 disables the limit)"),
    ("SUECA_HELLO_SECONDS", "-1", "a number at least 0"),
    ("SUECA_SESSIONS_PER_BOT", "nan", "a number at least 0"),
    ("SUECA_TLS", "maybe", "1, true, yes or on"),  # the SDK's, checked with the referee's
])
def test_a_bad_value_is_quoted(name: str, value: str, says: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(f"{name}={value!r} is not usable")) as err:
        RefereeSettings.from_env({name: value})
    assert says in str(err.value)


def test_a_bad_referee_setting_is_a_credentials_error_where_the_token_is_read() -> None:
    with pytest.raises(CredentialsError, match="SUECA_OPERATOR_PORT='x' is not usable"):
        operator_token_from_env({"SUECA_OPERATOR_PORT": "x"})
