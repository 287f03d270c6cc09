"""Helpers the tests share (imported as ``support``): the repository, ``../shared``, free ports, and the
processes a test leaves behind. Fixtures live in conftest.py."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
if not SHARED.is_dir():  # CI clones next to shared/; a developer checkout may live elsewhere
    SHARED = Path("/work/shared")


def free_port() -> int:
    """An ephemeral port that was free a moment ago (bind to 0, read it, close)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def processes_mentioning(marker: str) -> list[psutil.Process]:
    """Live processes whose command line contains ``marker`` (e.g. a test's temp dir)."""
    found = []
    for p in psutil.process_iter(["pid", "cmdline", "status"]):
        try:
            if p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if marker in " ".join(p.info["cmdline"] or []) and p.pid != os.getpid():
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def live_descendants() -> set[int]:
    out = set()
    for c in psutil.Process().children(recursive=True):
        try:
            if c.status() != psutil.STATUS_ZOMBIE:
                out.add(c.pid)
        except psutil.NoSuchProcess:
            pass
    return out


#: the environment variable a test sets (the ``own_processes`` fixture) so that every process it starts, however
#: deep and even orphaned, carries its token: a command line names the same server in tests running side by side
TOKEN_ENV = "PERFLAB_TEST_TOKEN"


def processes_carrying(token: str) -> list[psutil.Process]:
    """Live processes (other than this one) whose environment holds ``TOKEN_ENV=token``."""
    found = []
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if p.info["status"] == psutil.STATUS_ZOMBIE or p.pid == os.getpid():
                continue
            if p.environ().get(TOKEN_ENV) == token:
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found
