"""What only a referee and its operators need: the referee's TLS credentials and the operator
token that guards ``MatchService`` (sent as ``authorization: Bearer <token>`` metadata).

Bots never need this module (their side of TLS is :mod:`sueca.sdk.channels`); the token is read
from a file or ``SUECA_OPERATOR_TOKEN`` (through :mod:`sueca.referee.settings`) and checked before
anything starts, so a blank or malformed one stops the command with one line.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping

import grpc

from sueca.referee.settings import RefereeSettings, SettingsError, current
from sueca.sdk.channels import (
    CredentialsError,
    openssl_reason,
    read_certificates,
    read_file,
    read_pem,
)

__all__ = ["AUTHORIZATION", "BEARER", "server_credentials", "read_token_file",
           "operator_token_from_env", "operator_metadata"]

AUTHORIZATION = "authorization"  # gRPC metadata keys are lower case
BEARER = "Bearer "


def server_credentials(cert_file: str, key_file: str) -> grpc.ServerCredentials:
    """Credentials for a TLS referee; both files are checked first, and that they match."""
    cert = read_certificates(cert_file, "TLS certificate")
    key = read_pem(key_file, "TLS key")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        # a password callback, so that an encrypted key fails here instead of prompting
        context.load_cert_chain(cert_file, key_file, password=lambda: b"")
    except ssl.SSLError as err:
        if "KEY_VALUES_MISMATCH" in str(err):
            raise CredentialsError(f"TLS key {key_file!r} does not belong to the certificate "
                                   f"{cert_file!r}") from None
        raise CredentialsError(f"TLS key {key_file!r} is not a usable unencrypted PEM private "
                               f"key: {openssl_reason(err)}") from None
    except OSError as err:  # the files changed under us
        raise CredentialsError(f"cannot load TLS certificate {cert_file!r} and key "
                               f"{key_file!r}: {err}") from None
    return grpc.ssl_server_credentials([(key, cert)])


def read_token_file(path: str) -> str:
    """The operator token in ``path`` (surrounding whitespace ignored)."""
    raw = read_file(path, "operator token file").decode("utf-8", "replace")
    return _checked_token(raw, f"operator token file {path!r}")


def _checked_token(raw: str, where: str) -> str:
    """A usable token: not empty, one word of printable ASCII (gRPC metadata can carry no
    more; a token the referee accepted but no client could send would lock operators out)."""
    token = raw.strip()
    if not token:
        raise CredentialsError(f"{where} is empty")
    if any(c.isspace() for c in token):
        raise CredentialsError(f"{where} holds more than one word: a token is one line "
                               "without spaces")
    if not (token.isascii() and token.isprintable()):
        raise CredentialsError(f"{where} holds characters other than printable ASCII")
    return token


def operator_token_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """``SUECA_OPERATOR_TOKEN``, checked like a token file; None only when unset. Set but
    blank is an error, not "no token": a referee would otherwise run open by mistake."""
    try:
        raw = (current() if environ is None else RefereeSettings.from_env(environ)).operator_token
    except SettingsError as err:
        raise CredentialsError(str(err)) from None
    return None if raw is None else _checked_token(raw, "SUECA_OPERATOR_TOKEN")


def operator_metadata(token: str | None = None) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying ``token`` (default ``SUECA_OPERATOR_TOKEN``); empty without one."""
    token = token or operator_token_from_env()
    return ((AUTHORIZATION, BEARER + token),) if token else ()
