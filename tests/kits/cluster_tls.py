"""The certificates of a TLS cluster league (tests/kits/cluster.py, ``tls=True``), made at test
time with the ``openssl`` command line: a throwaway CA, and for each referee host a server
certificate whose names are DNS names, never its IP, so that every client dialling a referee by
address must set the name it checks.

A client process checks one server name for every referee it dials
(``SUECA_TLS_SERVER_NAME``, ``--tls-server-name``), and a bot dials both replicas: so each
referee's certificate carries its own name (``ref-a.cluster.test``) and the replicas' shared
one (:data:`SHARED_NAME`), as the certificates behind one service name do. A second CA that
signed nothing of the league's is there for the tests that must be refused.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

__all__ = ["Pki", "make_pki", "SHARED_NAME", "DOMAIN"]

DOMAIN = "cluster.test"
#: the name every referee's certificate carries: what the league's clients check
SHARED_NAME = f"referees.{DOMAIN}"


class Pki(NamedTuple):
    """Paths: the CA every client trusts, and each referee host's certificate and key."""

    ca: Path
    other_ca: Path
    certs: dict[str, tuple[Path, Path]]  # host name -> (certificate, key)

    @staticmethod
    def name_of(host: str) -> str:
        """The DNS name of ``host``'s certificate (its IP is not in it)."""
        return f"{host}.{DOMAIN}"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_pki(folder: Path, hosts: Sequence[str]) -> Pki:
    """A CA in ``folder`` and one certificate per host of ``hosts`` signed by it (EC keys:
    fast to make), plus another CA that signed nothing here."""
    folder.mkdir(parents=True, exist_ok=True)
    for ca in ("ca", "other-ca"):
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-days", "2", "-subj", f"/CN=Sueca cluster {ca}",
                 "-keyout", f"{ca}.key", "-out", f"{ca}.crt", cwd=folder)
    certs = {}
    for host in hosts:
        name = Pki.name_of(host)
        _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-subj", f"/CN={name}", "-keyout", f"{host}.key", "-out", f"{host}.csr",
                 cwd=folder)
        (folder / f"{host}.ext").write_text(f"subjectAltName=DNS:{name},DNS:{SHARED_NAME}\n")
        _openssl("x509", "-req", "-in", f"{host}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                 "-CAcreateserial", "-days", "2", "-extfile", f"{host}.ext",
                 "-out", f"{host}.crt", cwd=folder)
        certs[host] = (folder / f"{host}.crt", folder / f"{host}.key")
    return Pki(folder / "ca.crt", folder / "other-ca.crt", certs)
