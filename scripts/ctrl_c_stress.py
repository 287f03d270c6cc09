#!/usr/bin/env python3
"""Ctrl-C at random moments of real ``python -m perflab run`` processes: how many ended, how, and how fast.

Each try starts ``perflab run`` (a 60 s load of the built-in server, memory backend) and sends it one SIGINT at
a random moment: ``--phase start`` (the default) from the process's start, ``--from``/``--to`` seconds (its
imports take the first 2-4 s, then the in-process hosts and the server start); ``--phase load`` that many seconds
after perflab-load began sending. A try that has not ended 15 s after its Ctrl-C is LOST (and killed, its
process tree with it); one that ended but left a process behind is LEFT. ``--spin`` keeps one core busy
(``python3 -c 'while True: pass'``) for the whole benchmark, as a busy CI machine does. ``--code DIR`` runs
another checkout's perflab (a ``git archive`` of an older commit: the figure before a fix).

Issue 46 (a Ctrl-C lost in the imports, about once in 84 tries of the test beside a spinning core) was measured
with it: docs/benchmarks.md#ctrl-c-at-random-moments.

  .venv/bin/python scripts/ctrl_c_stress.py --tries 300 --spin
  .venv/bin/python scripts/ctrl_c_stress.py --tries 300 --spin --code /tmp/before   # git archive OLD | tar -x
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
LOAD = [
    "run",
    "-R",
    "200",
    "-d",
    "60s",
    "-c",
    "2",
    "-t",
    "1",
    "--path",
    "/v0/status",
    "--no-project",
    "--backend",
    "memory",
]
LOST_AFTER_S = 15.0


def _mentioning(marker: str) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if marker in " ".join(p.info["cmdline"] or []) and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def one_try(code: Path, phase: str, after_s: float) -> tuple[str, float, str]:
    """(outcome, seconds from the Ctrl-C to the end, the output's tail) of one try."""
    d = Path(tempfile.mkdtemp(prefix="perflab-ctrl-c-"))
    try:
        (d / "tmp").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFLAB_", "DASK_"))}
        env.update(TMPDIR=str(d / "tmp"), PERFLAB_DATA=str(d / "data"), PYTHONPATH=str(code))
        # SIGINT as in a terminal (a background job's children start with it ignored)
        p = subprocess.Popen(
            [sys.executable, "-m", "perflab", *LOAD],
            cwd=d,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        if phase == "load":
            deadline = time.monotonic() + 120
            while not any("perflab-load" in " ".join(q.cmdline()) for q in _mentioning(str(d / "data"))):
                if p.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
        time.sleep(after_s)
        started = [q.pid for q in psutil.Process(p.pid).children(recursive=True)] if p.poll() is None else []
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        try:
            out, _ = p.communicate(timeout=LOST_AFTER_S)
            took, outcome = time.monotonic() - t0, f"exit {p.returncode}"
        except subprocess.TimeoutExpired:
            for q in reversed([psutil.Process(p.pid), *psutil.Process(p.pid).children(recursive=True)]):
                q.kill()
            out, _ = p.communicate()
            took, outcome = time.monotonic() - t0, "LOST"
        time.sleep(0.5)
        left = [q for q in _mentioning(str(d)) if q.pid != p.pid]
        left += [
            psutil.Process(q)
            for q in started
            if psutil.pid_exists(q) and psutil.Process(q).status() != psutil.STATUS_ZOMBIE
        ]
        if left and outcome != "LOST":
            outcome = "LEFT " + ", ".join(" ".join(q.cmdline())[:80] for q in left)
            for q in left:
                q.kill()
        return outcome, took, out.decode(errors="replace")[-1500:]
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tries", type=int, default=100)
    ap.add_argument("--phase", choices=("start", "load"), default="start")
    ap.add_argument("--from", dest="lo", type=float, default=0.1, help="earliest Ctrl-C, s (default 0.1)")
    ap.add_argument("--to", dest="hi", type=float, default=3.0, help="latest Ctrl-C, s (default 3.0)")
    ap.add_argument("--spin", action="store_true", help="keep one core busy meanwhile")
    ap.add_argument("--code", type=Path, default=REPO, help="the checkout whose perflab runs (default this one)")
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if a.spin else None
    counts: collections.Counter = collections.Counter()
    slowest, bad = 0.0, []
    t_all = time.monotonic()
    load0 = open("/proc/loadavg").read().split()[0]
    try:
        for i in range(a.tries):
            after_s = rng.uniform(a.lo, a.hi)
            outcome, took, tail = one_try(a.code, a.phase, after_s)
            counts[outcome if not outcome.startswith("LEFT") else "LEFT"] += 1
            if "the Ctrl-C was lost on its way" in tail:  # perflab.interrupt raised it again
                counts["of them raised again"] += 1
            if outcome.startswith("exit"):
                slowest = max(slowest, took)
            if outcome in ("LOST",) or outcome.startswith("LEFT") or took > 10:
                bad.append((i, after_s, outcome, took, tail))
            print(f"try {i + 1}/{a.tries}: Ctrl-C at {after_s:.2f} s -> {outcome} in {took:.1f} s", flush=True)
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    print(
        f"\n{a.tries} tries ({a.phase}, Ctrl-C at {a.lo:g}-{a.hi:g} s, {'one core spinning, ' if a.spin else ''}"
        f"load average {load0} at the start, {time.monotonic() - t_all:.0f} s, perflab from {a.code}): "
        + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        + f"; slowest end {slowest:.1f} s"
    )
    for i, after_s, outcome, took, tail in bad:
        print(f"\n--- try {i + 1}: Ctrl-C at {after_s:.2f} s -> {outcome} in {took:.1f} s\n{tail}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
