"""Channels to a referee with the configured transport security, for bots and operators alike.

One place decides how a connection is made: plaintext, or TLS checked against grpcio's bundled
roots or a CA file. The bot's ``sueca-bot`` and the operator's :mod:`sueca.referee.control`
both call :func:`open_channel` / :func:`open_aio_channel`, so TLS works the same on both sides.
What only a referee and its operators need (server certificates, the operator token) is in
:mod:`sueca.referee.security`.

Every file is checked before any connection is tried: a missing, unreadable or non-PEM file
is a :class:`CredentialsError` whose message quotes the path (the command lines print it as one
line and exit 2). The settings (``SUECA_TLS``, ``SUECA_TLS_CA``, ``SUECA_TLS_SERVER_NAME``) are
read through :mod:`sueca.sdk.settings`; ``sueca-bot`` takes flags that default to them.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import grpc

from sueca.sdk.settings import Settings, SettingsError, current

__all__ = ["CredentialsError", "ClientTLS", "client_tls", "client_tls_from_env", "tls_requested",
           "PLAINTEXT", "open_channel", "open_aio_channel", "TLS_ENV", "drop_tls_settings",
           "read_file", "read_pem", "read_certificates", "openssl_reason"]

# every variable that turns TLS on: clients' (above) and a referee's certificate and key
TLS_ENV = ("SUECA_TLS", "SUECA_TLS_CA", "SUECA_TLS_SERVER_NAME", "SUECA_TLS_CERT",
           "SUECA_TLS_KEY")

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


def read_file(path: str, what: str) -> bytes:
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


def read_pem(path: str, what: str) -> bytes:
    data = read_file(path, what)
    if b"-----BEGIN " not in data:
        raise CredentialsError(f"{what} {path!r} is not a PEM file (no '-----BEGIN' line)")
    return data


def read_certificates(path: str, what: str) -> bytes:
    """PEM certificates that OpenSSL (through :mod:`ssl`) accepts; anything else is refused
    here, not later as an opaque handshake failure on every connection."""
    data = read_pem(path, what)
    try:
        ssl.create_default_context().load_verify_locations(cadata=data.decode("ascii"))
    except (ssl.SSLError, UnicodeDecodeError, ValueError) as err:
        raise CredentialsError(f"{what} {path!r} holds no valid PEM certificate: "
                               f"{openssl_reason(err)}") from None
    return data


def openssl_reason(err: Exception) -> str:
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
    roots = read_certificates(ca_file, "TLS CA file") if ca_file else None
    return ClientTLS(grpc.ssl_channel_credentials(root_certificates=roots), server_name or None)


def tls_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Does ``SUECA_TLS`` ask for TLS (1, true, yes, on; 0, false, no, off or empty do not)?
    Anything else is refused rather than read as plaintext."""
    return _settings(environ).tls


def client_tls_from_env(environ: Mapping[str, str] | None = None) -> ClientTLS:
    """:func:`client_tls` from ``SUECA_TLS_CA``, ``SUECA_TLS`` and ``SUECA_TLS_SERVER_NAME``.
    Cached per value, so that callers may ask before every call without re-reading the CA."""
    settings = _settings(environ)
    return _cached_tls(settings.tls, settings.tls_ca, settings.tls_server_name,
                       _version(settings.tls_ca))


def _settings(environ: Mapping[str, str] | None) -> Settings:
    """The settings (of ``environ``, else this process's), a bad one as a CredentialsError."""
    try:
        return current() if environ is None else Settings.from_env(environ)
    except SettingsError as err:
        raise CredentialsError(str(err)) from None


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
