"""``perflab scheduler`` and ``perflab worker``: Dask's scheduler and workers as perflab needs them.

Each becomes Dask's own command (``distributed.cli.dask_scheduler`` / ``dask_worker``, exec'd: signals and
shutdown are Dask's) with perflab's settings (:mod:`.daskconfig`: no sampling profiler) in its
environment, TLS with the lab's certificates when given (:mod:`.tls`), and nothing served beyond what the
lab reads: a worker has no nanny (another port that runs what it is sent; a lost worker is reported, not
restarted) and its HTTP server (metrics, health) on loopback; the scheduler's dashboard is on its own address.
"""

from __future__ import annotations

import os
import sys

from .daskconfig import environ
from .pool import ROLES
from .tls import files, open_warning

#: the scheduler's port unless told
PORT = 8786
#: threads of a worker: the calls of the agents on it (a load, a server and their samplers)
NTHREADS = 4
#: seconds a worker waits for a scheduler that went away before it exits
DEATH_TIMEOUT_S = 60


def _tls_flags(tls: str | None) -> list[str]:
    if tls is None:
        return []
    ca, cert, key = files(tls)
    return ["--tls-ca-file", ca, "--tls-cert", cert, "--tls-key", key]


def scheduler_command(host: str, port: int = PORT, tls: str | None = None, dashboard: bool = True) -> list[str]:
    """The scheduler's command line: listening on ``host:port`` (TLS with the certificates in ``tls``), its
    dashboard (when bokeh is installed) on ``host:8787``."""
    cmd = [
        sys.executable,
        "-m",
        "distributed.cli.dask_scheduler",
        "--host",
        host,
        "--port",
        str(port),
        "--protocol",
        "tls" if tls else "tcp",
        *_tls_flags(tls),
    ]
    cmd += (
        ["--dashboard-address", f"{host}:8787"]
        if dashboard
        else ["--no-dashboard", "--dashboard-address", "127.0.0.1:0"]
    )
    return cmd


def worker_command(
    scheduler: str,
    name: str,
    roles: tuple[str, ...],
    host: str | None = None,
    tls: str | None = None,
    nthreads: int = NTHREADS,
    local_directory: str | None = None,
    death_timeout: float = DEATH_TIMEOUT_S,
) -> list[str]:
    """A worker's command line: host ``name`` with ``roles`` (its Dask resources), joining ``scheduler``
    (``tls://`` with the certificates in ``tls``), listening on ``host`` (default: the address Dask picks)."""
    bad = [r for r in roles if r not in ROLES]
    if not roles or bad:
        raise ValueError(f"roles: {', '.join(ROLES)} or both, got {','.join(roles) or 'none'}")
    if scheduler.startswith("tls://") != (tls is not None):
        raise ValueError("tls: a tls:// scheduler needs --tls DIR, and --tls needs a tls:// scheduler address")
    cmd = [
        sys.executable,
        "-m",
        "distributed.cli.dask_worker",
        scheduler,
        "--name",
        name,
        "--resources",
        " ".join(f"{r}=1" for r in roles),
        "--nthreads",
        str(nthreads),
        "--no-nanny",
        "--no-dashboard",
        "--dashboard-address",
        "127.0.0.1:0",
        "--death-timeout",
        f"{death_timeout:g}",
        *_tls_flags(tls),
    ]
    if host is not None:
        cmd += ["--host", host]
    if tls is not None:
        cmd += ["--protocol", "tls"]
    if local_directory is not None:
        cmd += ["--local-directory", local_directory]
    return cmd


def scheduler_warning(host: str, port: int, tls: str | None) -> str | None:
    """The risk of a plain-TCP scheduler on ``host``, ``None`` with TLS or on loopback."""
    return None if tls is not None else open_warning(f"tcp://{host}:{port}")


def become(cmd: list[str]) -> None:
    """Replace this process with ``cmd``, perflab's Dask settings in its environment (never returns)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(cmd[0], cmd, {**os.environ, **environ()})
