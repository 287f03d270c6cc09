"""Shared fixtures: built artifacts (failing with a build hint, never skipping), free ports, and a private
data root per test. Helpers the tests import are in support.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab import paths
from support import SHARED, free_port


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


#: the longest files, started first: with `make test`'s workers (pytest-xdist, a file at a time, in this
#: order: the Makefile turns off xdist's reordering by test count) the report batch's minutes of notebooks
#: run on one worker beside everything else, and no long file starts last
LONGEST_FIRST = ("report/test_pipeline.py", "report/test_report_notebooks_05_to_09.py", "report/test_report_course.py", "report/test_report_foreign.py", "lab/test_ab_server.py",
                 "regress/test_regress_server.py", "lab/test_breakpoint_server.py", "hosts/test_netns_hosts.py",
                 "cluster/test_cluster_runs.py", "report/test_compare.py")


def pytest_collection_modifyitems(config, items):
    def rank(item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, f in enumerate(LONGEST_FIRST) if path.endswith(f)), len(LONGEST_FIRST))

    items.sort(key=rank)   # stable: every other test keeps its order
