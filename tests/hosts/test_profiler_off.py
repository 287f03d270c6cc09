"""Never stuck: the Python 3.11 deadlock between Dask's worker profiler (``sys._current_frames`` every 10 ms)
and thread starts (perflab.hosts.daskconfig).

The deadlock is reproduced here in a child process with a hard stall limit (``scripts/deadlock_repro.py``):
a plain Dask worker, profiler on as Dask configures it, hangs within seconds (every trial measured, figures
in docs/hosts.md), and perflab's in-process hosts run the same thread starts for longer without a hang.
Every pool perflab starts or uses is then checked on its running workers: the in-process hosts, and a worker
started with plain ``dask worker`` once a session has opened it (the hosts started by ``perflab worker``:
tests/hosts/test_tls.py, tests/hosts/test_netns_hosts.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from support import free_port

from perflab.config import HostOptions
from perflab.hosts.daskconfig import environ, profiler_state
from perflab.hosts.hostset import HostSet
from perflab.hosts.pool import OpenSchedulerWarning, connect, disconnect

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import deadlock_repro  # noqa: E402 - the reproduction, one source for the script and these tests

#: thread starts per trial (a trial with the profiler on hangs after 1-11 s here, 3 s at the median) and the
#: silence that counts as a hang: far beyond any stall of a loaded machine
SECONDS = 15.0
STALL_S = 10.0


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the lock ordering of CPython 3.11")
def test_thread_starts_beside_the_dask_profiler_hang_on_this_python():
    # without perflab's setting: Dask's profiler as configured by default; the hang must be seen, so that the
    # next test's "no hang" means something
    r = deadlock_repro.trial("dask", 120.0, STALL_S)
    assert r["hung"], f"no hang in 120 s of thread starts beside Dask's profiler: {r}"


def test_perflab_in_process_hosts_start_threads_without_a_hang():
    r = deadlock_repro.trial("perflab", SECONDS, STALL_S)
    assert not r["hung"], f"perflab's in-process hosts hung after {r['at_s']} s: {r}"
    assert r["starts"] > 1000, r


def test_the_in_process_hosts_sample_no_frames():
    pool = connect()
    states = pool.run(profiler_state, list(pool.workers()))
    assert states and all(s["sampling"] == [] for s in states.values()), states
    assert environ() == {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}


def test_a_plain_dask_worker_has_its_profiler_stopped_before_a_session_starts_agents(tmp_path):
    # a scheduler and a worker started the way Dask documents it (the profiler on), on loopback
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["TMPDIR"] = str(tmp_path)  # the scheduler's scratch (Dask's $TMPDIR/dask-scratch-space) in the test's own
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-dashboard",
            ],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    ]
    procs.append(
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                address,
                "--name",
                "plain",
                "--resources",
                "server=1 generator=1",
                "--no-nanny",
                "--no-dashboard",
                "--local-directory",
                str(tmp_path),
            ],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", OpenSchedulerWarning)  # loopback: no one else reaches it
            deadline = time.monotonic() + 60
            while True:
                try:
                    pool = connect(address, timeout=2)
                    if pool.workers():
                        break
                except Exception:  # noqa: BLE001 - not up yet
                    if time.monotonic() > deadline:
                        raise
                time.sleep(0.2)
        (addr,) = pool.workers()
        assert pool.run(profiler_state, [addr])[addr] == {"configured": True, "sampling": ["profile", "profile-cycle"]}
        hs = HostSet.open(HostOptions(scheduler=address), "profiler check")
        try:
            assert pool.run(profiler_state, [addr])[addr]["sampling"] == []
        finally:
            hs.close()
    finally:
        disconnect(address)
        for p in procs[::-1]:
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_a_plain_tcp_scheduler_other_machines_reach_is_warned_about():
    # TEST-NET-1: nothing answers there; the warning comes before the attempt
    with pytest.warns(OpenSchedulerWarning, match="anyone who connects to it can run any code on every host"):
        with pytest.raises(Exception, match="cannot reach the Dask scheduler at tcp://192.0.2.1:8786"):
            connect("tcp://192.0.2.1:8786", timeout=1)
