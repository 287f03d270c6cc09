"""The Python 3.11 deadlock between ``sys._current_frames`` and thread starts, reproduced on this machine.

    .venv/bin/python scripts/deadlock_repro.py                      # 10 trials of each mode, 60 s each at most
    .venv/bin/python scripts/deadlock_repro.py --mode dask --trials 40 --seconds 120

Each trial is a child process that starts and joins threads in a loop (as perflab's agents do for every
process they watch) while something else calls ``sys._current_frames()``, with a garbage collection made
likely at every allocation (``gc.set_threshold(1)``) and cyclic garbage whose finalizers run Python code.
On 3.11, ``sys._current_frames`` holds the runtime's HEAD_LOCK while it makes frame objects; a collection
there runs a finalizer, the finalizer hands the GIL to the thread-starting thread, which then waits for
HEAD_LOCK holding the GIL: both wait forever (cpython gh-106883). The amplifiers only make the window
likely; the lock order is Python's. The modes say who calls ``sys._current_frames``:

* ``threads``: a plain thread calling it in a loop (no Dask);
* ``dask``: Dask's worker profiler, as configured by default (every 10 ms while a task runs), in an
  in-process Dask cluster; the thread starts run as a task on its worker;
* ``perflab``: perflab's in-process hosts (:func:`perflab.hosts.pool.connect`), whose worker runs with the
  profiler off (:mod:`perflab.hosts.daskconfig`); the same task on its worker.

The parent reads the child's progress (a line every 0.2 s); no line for ``--stall`` seconds is a hang: the
child's process group is killed (a deadlocked GIL runs no signal handler) and the trial says when the
last progress came. ``tests/hosts/test_deadlock.py`` runs one ``dask`` and one ``perflab`` trial.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("threads", "dask", "perflab")
#: seconds without progress that count as a hang (a busy machine stalls a process for far less)
STALL_S = 10.0
#: seconds between two progress lines of a child
BEAT_S = 0.2


# --- the child -----------------------------------------------------------------------------------------
def _child(mode: str, seconds: float) -> None:
    import gc
    import threading

    gc.set_threshold(1, 1, 1)  # a collection at (nearly) every allocation: inside _current_frames too
    sys.setswitchinterval(1e-6)  # the GIL changes hands as soon as anyone asks
    stop = threading.Event()

    class Cycle:
        def __init__(self):
            self.me = self

        def __del__(self):  # Python code run by the collector: a point where the GIL is handed over
            sum(range(50))

    def garbage():
        while not stop.is_set():
            for _ in range(100):
                Cycle()
            time.sleep(0)

    def starts(seconds: float) -> int:
        t0 = beat = time.monotonic()
        n = 0
        while time.monotonic() - t0 < seconds:
            t = threading.Thread(target=int)
            t.start()
            t.join()
            n += 1
            if time.monotonic() - beat > BEAT_S:
                print(f"starts {n}", flush=True)
                beat = time.monotonic()
        return n

    if mode == "threads":

        def sample():
            while not stop.is_set():
                sys._current_frames()

        threading.Thread(target=sample, daemon=True).start()
        run = starts
    else:
        if mode == "perflab":
            from perflab.hosts.pool import connect

            client = connect().client
        else:
            from distributed import Client, LocalCluster

            client = Client(
                LocalCluster(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None),
                set_as_default=False,
            )

        def run(seconds):
            return client.submit(starts, seconds, pure=False).result()

    print("ready", flush=True)
    threading.Thread(target=garbage, daemon=True).start()
    n = run(seconds)
    stop.set()
    print(f"done {n}", flush=True)
    os._exit(0)  # no teardown: only the loop is on trial


# --- the parent ----------------------------------------------------------------------------------------
def trial(mode: str, seconds: float, stall_s: float = STALL_S, cwd: str | None = None) -> dict:
    """One child of ``mode`` starting threads for ``seconds``: ``{"hung": bool, "at_s": when the last progress
    came (from the child's start), "starts": thread starts counted, "wall_s"}``."""
    # the child's files (its hosts' work directory) in a $TMPDIR of its own, removed here: the child ends with
    # os._exit, or is killed when it hangs, so its own clean-up never runs
    tmp = tempfile.mkdtemp(prefix="perflab-deadlock-")
    env = dict(os.environ, PYTHONUNBUFFERED="1", TMPDIR=tmp)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    p = subprocess.Popen(
        [sys.executable, __file__, "--child", mode, str(seconds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=cwd or root,
        start_new_session=True,
    )
    t0 = last = time.monotonic()
    starts, tail = 0, []
    try:
        while True:
            ready, _, _ = select.select([p.stdout], [], [], 0.5)
            now = time.monotonic()
            if ready:
                line = p.stdout.readline()
                if not line:
                    rc = p.wait(timeout=30)
                    done = any(t.startswith("done") for t in tail)
                    if rc != 0 or not done:
                        raise RuntimeError(f"the {mode} child exited with status {rc}: {''.join(tail[-20:])}")
                    return {"hung": False, "at_s": round(now - t0, 2), "starts": starts, "wall_s": round(now - t0, 2)}
                last = now
                tail.append(line)
                if line.startswith(("starts", "done")):
                    starts = int(line.split()[1])
            elif now - last > stall_s:
                return {"hung": True, "at_s": round(last - t0, 2), "starts": starts, "wall_s": round(now - t0, 2)}
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=MODES, action="append", help="repeatable (default: all three)")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=60.0, help="thread starts per trial, at most")
    ap.add_argument("--stall", type=float, default=STALL_S, help="seconds without progress that count as a hang")
    ap.add_argument("--child", nargs=2, metavar=("MODE", "SECONDS"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        _child(a.child[0], float(a.child[1]))
        return 0
    print(
        f"# sys._current_frames vs thread starts, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    for mode in a.mode or MODES:
        results = []
        for i in range(a.trials):
            r = trial(mode, a.seconds, a.stall)
            results.append(r)
            print(
                f"{mode} trial {i + 1}: "
                + (f"hung after {r['at_s']:.1f} s" if r["hung"] else f"no hang in {r['at_s']:.1f} s")
                + f", {r['starts']:,} thread starts",
                flush=True,
            )
        hung = sorted(r["at_s"] for r in results if r["hung"])
        line = f"{mode}: {len(hung)} of {len(results)} trials hung within {a.seconds:g} s"
        if hung:
            line += (
                f"; hung after {statistics.median(hung):.1f} s at the median ({hung[0]:.1f}-{hung[-1]:.1f}, "
                f"from the child's start)"
            )
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
