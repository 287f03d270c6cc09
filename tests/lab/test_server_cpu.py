"""The server's CPU as the lab measures it, on real processes: the process CPU clock (every thread, exited
ones included, in nanoseconds), and a run's CPU per request against a server whose CPU per request is known
to be at least 500 us (``--debug-work-ns 500000`` spins on each request's thread until it has used that much CPU
time, so no machine, however slow or busy, makes it less)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from perflab import LoadParams, ServerConfig, query, run_experiment
from perflab.server.cpu import _stat_cpu_s, process_cpu_s

#: a child that burns 0.3 s of CPU on a thread that then exits, and waits
_BURN = """
import threading, time, sys
def burn():
    t = time.thread_time()
    while time.thread_time() - t < 0.3:
        pass
th = threading.Thread(target=burn); th.start(); th.join()
print("done", flush=True)
time.sleep(30)
"""


def test_the_process_cpu_clock_counts_exited_threads_to_the_nanosecond():
    p = subprocess.Popen([sys.executable, "-c", _BURN], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "done"
        clock, ticks = process_cpu_s(p.pid), _stat_cpu_s(p.pid)
        assert clock >= 0.3 and abs(clock - ticks) < 0.05  # the thread is gone; its CPU is not
        assert round(clock * 100) != clock * 100  # not cut to clock ticks
    finally:
        p.kill()
        p.wait()
    assert process_cpu_s(p.pid) is None


def test_a_run_records_the_servers_cpu_per_request(server_build, loadgen_binary, data_root):
    srv = ServerConfig(backend="memory", debug_work_ns=500_000)
    res = run_experiment(
        srv, LoadParams(script="status.lua", connections=2, threads=1, rate=200, duration=1, warmup=0.5)
    )
    assert res.load.server_cpu_s is not None and res.load.cpu_us_per_request >= 450, res.load.record()
    row = query("SELECT server_cpu_s, cpu_us_per_request, requests FROM loads").iloc[0]
    assert row["cpu_us_per_request"] == pytest.approx(res.load.cpu_us_per_request)
    assert res.run.results["cpu_us_per_request"] == pytest.approx(res.load.cpu_us_per_request)
