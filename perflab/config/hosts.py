"""``HostOptions``: which hosts a run measures on (a Dask scheduler's, or this machine alone).

Every field has an environment variable the notebooks of a report inherit (``perflab report --scheduler``
sets them for its kernels); a value given here wins. ``generators`` is host names (``gen1,gen2``) or how
many generator hosts (``2``): one run is split over them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .fields import Params, option

#: the environment variables behind the fields
SCHEDULER_ENV = "PERFLAB_SCHEDULER"
GENERATORS_ENV = "PERFLAB_GENERATORS"
SERVER_HOST_ENV = "PERFLAB_SERVER_HOST"
TLS_ENV = "PERFLAB_TLS"

_ADDRESS = re.compile(r"^(tcp|tls)://[^\s/:]+(:\d+)?$")


def scheduler_address(explicit: str | None = None) -> str | None:
    """The scheduler to use: ``explicit``, else ``$PERFLAB_SCHEDULER``, else ``None`` (this machine's
    in-process hosts; also for ``local``/``in-process``). ``ValueError`` for an address that is not
    ``tcp://HOST[:PORT]`` or ``tls://HOST[:PORT]`` (the port defaults to 8786)."""
    addr = explicit if explicit not in (None, "") else os.environ.get(SCHEDULER_ENV) or None
    if addr is None:
        return None
    addr = addr.strip()
    if addr in ("local", "in-process"):
        return None
    if not _ADDRESS.match(addr):
        raise ValueError(f"scheduler: expected an address like tls://HOST:8786 or tcp://HOST:8786, got {addr!r}")
    if addr.count(":") == 1:
        addr += ":8786"
    return addr


def tls_for(address: str | None, tls: str | None) -> str | None:
    """The certificates' directory a scheduler at ``address`` is reached with: required for ``tls://``,
    refused for ``tcp://`` and for this machine's in-process hosts (``ValueError`` naming the mismatch)."""
    if address is not None and address.startswith("tls://"):
        if tls is None:
            raise ValueError(
                f"tls: the scheduler {address} takes TLS; give the certificates' directory (--tls DIR or "
                f"${TLS_ENV}; `perflab certs DIR` makes them)"
            )
        return tls
    if tls is not None and address is not None:
        raise ValueError(
            f"tls: certificates given for a plain-TCP scheduler ({address}); write its address as "
            f"tls://{address.split('://', 1)[1]}"
        )
    return None if address is None else tls


def generators_of(value) -> tuple[str, ...] | int | None:
    """``generators`` as names or a count: ``"gen1,gen2"``, ``["gen1"]``, ``2``, ``"2"`` or ``None``."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"generators: host names or a count, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"generators: at least 1 host, got {value}")
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            return generators_of(int(text))
        value = text.split(",")
    names = tuple(str(v).strip() for v in value)
    if not names or any(not n for n in names):
        raise ValueError(f"generators: host names separated by commas or a count, got {value!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"generators: a host named twice in {', '.join(names)}")
    return names


@dataclass(frozen=True)
class HostOptions(Params):
    """Which hosts a run measures on (see the module docstring). Unset fields take their environment
    variable's value; ``generators`` ends as a tuple of names or a count, ``scheduler`` as a normalized
    address or ``None``."""

    scheduler: str | None = option(
        None,
        "text",
        f"Dask scheduler of the hosts, tcp://HOST:8786 (default ${SCHEDULER_ENV}, else this machine alone)",
        optional=True,
    )
    generators: object = option(
        None,
        "text",
        "generator hosts by name (gen1,gen2), or how many (2); one run is "
        f"split over them (default ${GENERATORS_ENV}, else one)",
        optional=True,
    )
    server_host: str | None = option(
        None,
        "text",
        f"the host the server runs on (default ${SERVER_HOST_ENV}, else any free server host)",
        optional=True,
    )
    lease_timeout: float | None = option(
        None,
        "duration",
        "how long to wait for busy hosts (default: as long as it takes)",
        optional=True,
        min=0,
        min_open=True,
    )
    tls: str | None = option(
        None,
        "path",
        "the directory of the certificates `perflab certs` made (ca.pem, cert.pem, "
        f"key.pem), for a tls:// scheduler (default ${TLS_ENV}; docs/hosts.md)",
        optional=True,
    )

    def __post_init__(self):
        gens = self.generators if self.generators is not None else os.environ.get(GENERATORS_ENV) or None
        self._set("generators", None)  # the text spec below cannot hold a count or a tuple
        super().__post_init__()
        self._set("generators", generators_of(gens))
        self._set("scheduler", scheduler_address(self.scheduler))
        host = self.server_host if self.server_host is not None else os.environ.get(SERVER_HOST_ENV) or None
        if host is not None and (not host.strip() or "," in host):
            raise ValueError(f"server_host: one host name, got {host!r}")
        self._set("server_host", host.strip() if host else None)
        tls = self.tls if self.tls is not None else os.environ.get(TLS_ENV) or None
        self._set("tls", tls_for(self.scheduler, tls))

    @property
    def generator_count(self) -> int:
        g = self.generators
        return len(g) if isinstance(g, tuple) else g or 1

    def given(self) -> dict:
        """The fields set explicitly or by the environment (for a report's kernels, a sweep's points)."""
        return {k: v for k, v in self.to_dict().items() if v is not None}
