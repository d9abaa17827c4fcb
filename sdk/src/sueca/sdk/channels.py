"""Channels to a referee with the configured transport security, for bots and operators alike.

One place decides how a connection is made: plaintext, or TLS checked against grpcio's bundled
roots or a CA file; and, for operators (league workers, the CLI), the ``authorization: Bearer
<token>`` metadata that ``MatchService`` asks for when the referee was given an operator token.
The bot's ``sueca-bot`` and the operator's :mod:`sueca.referee.control` both call
:func:`open_channel` / :func:`open_aio_channel`, so TLS works the same on both sides.

Every file is checked before any connection is tried: a missing, unreadable or non-PEM file,
or a key that does not belong to its certificate, is a :class:`CredentialsError` whose message
quotes the path (the command lines print it as one line and exit 2).

Environment (operators; ``sueca-bot`` takes flags that default to the same variables):

``SUECA_TLS_CA``           CA file to check the referee's certificate with (implies TLS)
``SUECA_TLS=1``            TLS checked against grpcio's bundled roots
``SUECA_TLS_SERVER_NAME``  the name the referee's certificate is issued for, when referees are
                           reached by an address it does not name (a pod IP from a heartbeat)
``SUECA_OPERATOR_TOKEN``   the token sent with every ``MatchService`` call
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import grpc

__all__ = ["CredentialsError", "ClientTLS", "client_tls", "client_tls_from_env", "tls_requested",
           "PLAINTEXT", "open_channel", "open_aio_channel", "server_credentials",
           "read_token_file", "operator_token_from_env", "operator_metadata", "AUTHORIZATION",
           "BEARER", "TLS_ENV", "drop_tls_settings"]

# every variable that turns TLS on: clients' (above) and a referee's certificate and key
TLS_ENV = ("SUECA_TLS", "SUECA_TLS_CA", "SUECA_TLS_SERVER_NAME", "SUECA_TLS_CERT",
           "SUECA_TLS_KEY")
AUTHORIZATION = "authorization"  # gRPC metadata keys are lower case
BEARER = "Bearer "
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}

Options = Sequence[tuple[str, Any]]


class CredentialsError(ValueError):
    """A certificate, key or token file that cannot be used; the message quotes its path."""


@dataclass(frozen=True)
class ClientTLS:
    """How a client reaches referees: ``credentials`` None is plaintext.

    ``server_name`` is the name the referee's certificate must carry when the address dialled
    is not that name (an IP found by resolving it, or a replica's advertised pod address).
    """

    credentials: grpc.ChannelCredentials | None = None
    server_name: str | None = None

    @property
    def enabled(self) -> bool:
        return self.credentials is not None

    def options(self, base: Options, server_name: str | None = None) -> list[tuple[str, Any]]:
        """``base`` plus the certificate-name override, when TLS is on and one applies."""
        name = self.server_name or server_name
        if self.credentials is None or not name:
            return list(base)
        return [*base, ("grpc.ssl_target_name_override", name)]


PLAINTEXT = ClientTLS()


def _read(path: str, what: str) -> bytes:
    """The bytes of ``path``, or a CredentialsError naming ``what`` and the path."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise CredentialsError(f"{what} {path!r} does not exist") from None
    except IsADirectoryError:
        raise CredentialsError(f"{what} {path!r} is a directory, not a file") from None
    except OSError as err:
        raise CredentialsError(f"cannot read {what} {path!r}: {err.strerror or err}") from None


def _read_pem(path: str, what: str) -> bytes:
    data = _read(path, what)
    if b"-----BEGIN " not in data:
        raise CredentialsError(f"{what} {path!r} is not a PEM file (no '-----BEGIN' line)")
    return data


def _read_certificates(path: str, what: str) -> bytes:
    """PEM certificates that OpenSSL (through :mod:`ssl`) accepts; anything else is refused
    here, not later as an opaque handshake failure on every connection."""
    data = _read_pem(path, what)
    try:
        ssl.create_default_context().load_verify_locations(cadata=data.decode("ascii"))
    except (ssl.SSLError, UnicodeDecodeError, ValueError) as err:
        raise CredentialsError(f"{what} {path!r} holds no valid PEM certificate: "
                               f"{_reason(err)}") from None
    return data


def _reason(err: Exception) -> str:
    """OpenSSL's words for ``err``, without the ``(_ssl.c:NNNN)`` source line."""
    return str(err).split(" (_ssl.c:")[0]


def client_tls(tls: bool = False, ca_file: str | None = None,
               server_name: str | None = None) -> ClientTLS:
    """Plaintext unless ``tls`` or ``ca_file``; with ``ca_file`` the referee's certificate
    must chain to it, otherwise to grpcio's bundled roots (``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``
    replaces them; the operating system's store is not read). A server name without TLS is
    refused: it can only mean TLS was meant, and a token must not go out in clear by mistake."""
    if not tls and not ca_file:
        if server_name:
            raise CredentialsError(f"TLS server name {server_name!r} given without TLS: add "
                                   "--tls or --tls-ca FILE (SUECA_TLS=1 or SUECA_TLS_CA)")
        return PLAINTEXT
    roots = _read_certificates(ca_file, "TLS CA file") if ca_file else None
    return ClientTLS(grpc.ssl_channel_credentials(root_certificates=roots), server_name or None)


def tls_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Does ``SUECA_TLS`` ask for TLS (1, true, yes, on; 0, false, no, off or empty do not)?
    Anything else is refused rather than read as plaintext."""
    env = os.environ if environ is None else environ
    value = (env.get("SUECA_TLS") or "").strip().lower()
    if value not in _TRUE | _FALSE:
        raise CredentialsError(f"bad SUECA_TLS {env.get('SUECA_TLS')!r}: 1, true, yes or on "
                               "for TLS; 0, false, no, off or empty for plaintext")
    return value in _TRUE


def client_tls_from_env(environ: Mapping[str, str] | None = None) -> ClientTLS:
    """:func:`client_tls` from ``SUECA_TLS_CA``, ``SUECA_TLS`` and ``SUECA_TLS_SERVER_NAME``.
    Cached per value, so that callers may ask before every call without re-reading the CA."""
    env = os.environ if environ is None else environ
    ca_file = env.get("SUECA_TLS_CA") or None
    return _cached_tls(tls_requested(env), ca_file, env.get("SUECA_TLS_SERVER_NAME") or None,
                       _version(ca_file))


def _version(path: str | None) -> tuple[int, int] | None:
    """What tells a rewritten file from the one cached (a CA rotated in place)."""
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None  # client_tls says what is wrong with it
    return (st.st_mtime_ns, st.st_size) if st else None


@lru_cache(maxsize=8)
def _cached_tls(tls: bool, ca_file: str | None, server_name: str | None,
                version: tuple[int, int] | None) -> ClientTLS:
    return client_tls(tls, ca_file, server_name)


def drop_tls_settings() -> None:
    """Forget every TLS setting of this process's environment (children inherit that).

    For the commands that start their own referee on loopback in plaintext (the demo, the
    referee bench): TLS settings in the caller's shell are meant for a real cluster, and would
    make this process and its children dial TLS, or the referee serve it, with files meant for
    elsewhere."""
    for name in TLS_ENV:
        os.environ.pop(name, None)


def open_channel(address: str, tls: ClientTLS, options: Options = (),
                 server_name: str | None = None) -> grpc.Channel:
    """A synchronous channel to ``address``, TLS or plaintext as ``tls`` says."""
    opts = tls.options(options, server_name)
    if tls.credentials is None:
        return grpc.insecure_channel(address, options=opts)
    return grpc.secure_channel(address, tls.credentials, options=opts)


def open_aio_channel(address: str, tls: ClientTLS, options: Options = (),
                     server_name: str | None = None) -> grpc.aio.Channel:
    """The ``grpc.aio`` twin of :func:`open_channel`."""
    opts = tls.options(options, server_name)
    if tls.credentials is None:
        return grpc.aio.insecure_channel(address, options=opts)
    return grpc.aio.secure_channel(address, tls.credentials, options=opts)


def server_credentials(cert_file: str, key_file: str) -> grpc.ServerCredentials:
    """Credentials for a TLS referee; both files are checked first, and that they match."""
    cert = _read_certificates(cert_file, "TLS certificate")
    key = _read_pem(key_file, "TLS key")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        # a password callback, so that an encrypted key fails here instead of prompting
        context.load_cert_chain(cert_file, key_file, password=lambda: b"")
    except ssl.SSLError as err:
        if "KEY_VALUES_MISMATCH" in str(err):
            raise CredentialsError(f"TLS key {key_file!r} does not belong to the certificate "
                                   f"{cert_file!r}") from None
        raise CredentialsError(f"TLS key {key_file!r} is not a usable unencrypted PEM private "
                               f"key: {_reason(err)}") from None
    except OSError as err:  # the files changed under us
        raise CredentialsError(f"cannot load TLS certificate {cert_file!r} and key "
                               f"{key_file!r}: {err}") from None
    return grpc.ssl_server_credentials([(key, cert)])


def read_token_file(path: str) -> str:
    """The operator token in ``path`` (surrounding whitespace ignored)."""
    raw = _read(path, "operator token file").decode("utf-8", "replace")
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
    env = os.environ if environ is None else environ
    raw = env.get("SUECA_OPERATOR_TOKEN")
    return None if raw is None else _checked_token(raw, "SUECA_OPERATOR_TOKEN")


def operator_metadata(token: str | None = None) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying ``token`` (default ``SUECA_OPERATOR_TOKEN``); empty without one."""
    token = token or operator_token_from_env()
    return ((AUTHORIZATION, BEARER + token),) if token else ()
