"""Shared fixtures: built artifacts (failing with a build hint, never skipping), free ports, and a private
data root per test. Helpers the tests import are in support.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import SHARED, TOKEN_ENV, free_port, processes_carrying

from perflab import paths


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


@pytest.fixture
def own_processes(monkeypatch, request):
    """Lists the live processes this test started, found by a token in their environment (a server's command
    line names the same script in other tests running beside it)."""
    token = f"{os.getpid()} {request.node.nodeid}"
    monkeypatch.setenv(TOKEN_ENV, token)
    return lambda: processes_carrying(token)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    assert SHARED.is_dir(), f"../shared (fixtures and seeds) not found at {SHARED}"
    return SHARED


#: the files by their time in `make test` (longest first; CI of 2026-11-28, four workers), each worker taking the
#: next one as it finishes (pytest-xdist, a file at a time: the Makefile turns off xdist's reordering by test
#: count): the report batches' minutes of notebooks start first and run beside everything else, and what is left
#: at the end is short (test_scripts.py's minute, collected after them, ended the run; every file not listed
#: takes under 15 s)
LONGEST_FIRST = (
    "report/test_pipeline.py",
    "report/test_report_notebooks_05_to_09.py",
    "report/test_report_course.py",
    "report/test_report_foreign.py",
    "hosts/test_netns_hosts.py",
    "lab/test_ab_server.py",
    "lab/test_breakpoint_server.py",
    "lab/test_experiment.py",
    "scripts/test_scripts.py",
    "cluster/test_cluster_runs.py",
    "report/test_compare.py",
    "lab/test_foreign.py",
    "lab/test_cli_process.py",
    "regress/test_regress_server.py",
    "lab/test_course.py",
    "hosts/test_profiler_off.py",
    "notebooks/test_notebooks.py",
    "lab/test_bridge_profiler.py",
    "report/test_export.py",
    "lab/test_index.py",
    "lab/test_cli.py",
    "hosts/test_local_hosts.py",
    "hosts/test_tls.py",
    "report/test_reports_at_once.py",
    "lab/test_load.py",
    "lab/test_events_lab.py",
)


def pytest_collection_modifyitems(config, items):
    def rank(item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, f in enumerate(LONGEST_FIRST) if path.endswith(f)), len(LONGEST_FIRST))

    items.sort(key=rank)  # stable: every other test keeps its order
