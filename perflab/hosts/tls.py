"""TLS between the coordinator, the scheduler and the hosts: certificates made once, Dask's ``Security`` from them.

A Dask worker runs whatever function it is sent, as the user who started it, and a scheduler passes on what
any client sends. On plain TCP anyone who reaches the scheduler's port can send it. With TLS every
connection shows a certificate signed by the lab's own certificate authority, and Dask requires one of both
sides (mutual TLS): only a holder of such a certificate and its key gets in.

``perflab certs DIR`` (:func:`make`) writes ``ca.pem`` (the authority's certificate), ``ca.key`` (its key: only
needed to make certificates; keep it off the hosts), and ``cert.pem`` with ``key.pem``, the certificate every
member shows (scheduler, workers, coordinators). Each host needs :data:`FILES` (docs/hosts.md).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import PerflabError

#: what every member of the lab needs: the authority's certificate, the member certificate and its key
FILES = ("ca.pem", "cert.pem", "key.pem")
CA_KEY = "ca.key"
#: how long the certificates `perflab certs` makes are valid by default
DAYS = 825


class TlsError(PerflabError):
    """Certificates missing, unreadable, or not made."""


def files(directory) -> tuple[str, str, str]:
    """The CA certificate, the member certificate and its key in ``directory``, each checked to exist
    (:class:`TlsError` naming the missing one and how to make it)."""
    d = Path(directory).expanduser()
    out = []
    for name in FILES:
        f = d / name
        if not f.is_file():
            raise TlsError(
                f"tls: no {name} in {d} (make the certificates once with `perflab certs {d}` and copy "
                f"{', '.join(FILES)} to every host)"
            )
        out.append(str(f.resolve()))
    return tuple(out)


def security(directory):
    """The ``distributed.security.Security`` of a coordinator, a scheduler or a worker with the certificates
    in ``directory``: TLS required on every connection."""
    from distributed.security import Security

    ca, cert, key = files(directory)
    return Security(
        tls_ca_file=ca,
        tls_client_cert=cert,
        tls_client_key=key,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
        require_encryption=True,
    )


def make(directory, days: int = DAYS) -> list[Path]:
    """A certificate authority and one member certificate signed by it, in ``directory`` (made, mode 700; keys
    600) with ``openssl``; refuses to overwrite existing ones. Returns the files written."""
    d = Path(directory).expanduser()
    taken = [n for n in (*FILES, CA_KEY) if (d / n).exists()]
    if taken:
        raise TlsError(f"tls: {d} already holds {', '.join(taken)}; remove them first or give another directory")
    openssl = shutil.which("openssl")
    if openssl is None:
        raise TlsError("tls: no `openssl` command to make certificates with (apt-get install openssl)")
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o700)
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    with tempfile.TemporaryDirectory(prefix="perflab-certs-") as tmp:
        ext = Path(tmp) / "member.ext"
        ext.write_text(
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
            "extendedKeyUsage=serverAuth,clientAuth\n"
        )
        csr = Path(tmp) / "member.csr"
        for cmd in (
            [
                openssl,
                "req",
                "-x509",
                *key,
                "-days",
                str(days),
                "-subj",
                "/CN=perflab lab CA",
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
                "-keyout",
                str(d / CA_KEY),
                "-out",
                str(d / "ca.pem"),
            ],
            [openssl, "req", *key, "-subj", "/CN=perflab lab member", "-keyout", str(d / "key.pem"), "-out", str(csr)],
            [
                openssl,
                "x509",
                "-req",
                "-in",
                str(csr),
                "-CA",
                str(d / "ca.pem"),
                "-CAkey",
                str(d / CA_KEY),
                "-set_serial",
                str(int.from_bytes(os.urandom(8), "big")),
                "-days",
                str(days),
                "-extfile",
                str(ext),
                "-out",
                str(d / "cert.pem"),
            ],
        ):
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                raise TlsError(f"tls: {' '.join(cmd[:2])} failed: {(r.stderr or r.stdout).strip()}")
    for name in (CA_KEY, "key.pem"):
        os.chmod(d / name, 0o600)
    return [d / n for n in (*FILES, CA_KEY)]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an IP address or a name) can only be reached from this machine."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return (getattr(ip, "ipv4_mapped", None) or ip).is_loopback  # ::ffff:127.0.0.1 is loopback too


def open_warning(address: str) -> str | None:
    """What is at risk when a scheduler at ``address`` takes plain TCP where other machines reach it; ``None``
    for TLS or loopback."""
    proto, rest = address.split("://", 1)
    host = rest.rsplit(":", 1)[0] if ":" in rest else rest
    if proto != "tcp" or is_loopback(host):
        return None
    return (
        f"the Dask scheduler {address} takes plain TCP on an address other machines can reach: anyone who "
        f"connects to it can run any code on every host, as the user who started the workers (a Dask worker "
        f"runs what it is sent). Use TLS: `perflab certs DIR` once, then tls:// addresses and --tls DIR "
        f"(docs/hosts.md)"
    )
