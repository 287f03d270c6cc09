"""Shared fixtures: built artifacts (failing with a build hint, never skipping), free ports,
a private data root per test, and helpers to check for orphaned processes."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import psutil
import pytest

from perflab import paths

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
if not SHARED.is_dir():  # CI clones next to shared/; a developer checkout may live elsewhere
    SHARED = Path("/work/shared")


def free_port() -> int:
    """An ephemeral port that was free a moment ago (bind to 0, read it, close)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture(scope="session")
def server_build() -> Path:
    """The installed server layout; fails (not skips) with "run make setup" when missing."""
    return paths.server_install_dir()


@pytest.fixture(scope="session")
def loadgen_binary() -> Path:
    return paths.loadgen_binary()


@pytest.fixture(scope="session")
def profiler_lib() -> Path:
    return paths.async_profiler_lib()


@pytest.fixture
def data_root(tmp_path, monkeypatch) -> Path:
    """A private data root: PERFLAB_DATA points here so nothing touches the real data/."""
    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv("PERFLAB_DATA", str(root))
    return root


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    assert SHARED.is_dir(), f"../shared (fixtures and seeds) not found at {SHARED}"
    return SHARED


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
