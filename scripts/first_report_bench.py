#!/usr/bin/env python3
"""The first report and CI as a new user meets them: `make report` and `bash .ci/run`, each from a fresh
clone (builds included), several times; prints a Markdown table of medians and spreads with the machine's
load average around each run.

    python3 scripts/first_report_bench.py [--runs 3] [--what report,ci] [--repo .] [--branch HEAD]

Each run clones the repository into a new temporary directory (git clone --no-hardlinks: nothing built is
shared with this checkout; the package caches of pip, cargo and Gradle are the machine's, as on any
developer's machine after its first day), runs the command there with a fresh data and report root, and
removes the clone. A run that fails is reported with its exit status and counted apart.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = {"report": ["make", "report"], "ci": ["bash", ".ci/run"]}


def load() -> float:
    return os.getloadavg()[0]


def one(repo: Path, branch: str, what: str, log_dir: Path, i: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"perflab-bench-{what}-"))
    clone = work / "perflab"
    try:
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(repo), str(clone)], check=True)
        subprocess.run(["git", "checkout", "-q", branch], cwd=clone, check=True)
        env = {**os.environ, "PERFLAB_DATA": str(work / "data"), "PERFLAB_REPORT": str(work / "report")}
        before = load()
        t0 = time.monotonic()
        with open(log_dir / f"{what}-{i}.log", "w") as log:
            rc = subprocess.run(COMMANDS[what], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
        return {"what": what, "seconds": time.monotonic() - t0, "rc": rc, "load_before": before, "load_after": load()}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--what", default="report,ci", help="report, ci or both (comma-separated), in turn")
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--branch", default="HEAD")
    ap.add_argument("--logs", default=None, help="directory for each run's output (default: a temporary one)")
    a = ap.parse_args(argv)
    whats = [w.strip() for w in a.what.split(",") if w.strip()]
    bad = [w for w in whats if w not in COMMANDS]
    if bad or a.runs < 1:
        ap.error(f"--what: one of {', '.join(COMMANDS)}; --runs >= 1")
    repo = Path(a.repo).resolve()
    branch = subprocess.run(
        ["git", "rev-parse", a.branch], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    log_dir = Path(a.logs or tempfile.mkdtemp(prefix="perflab-bench-logs-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(1, a.runs + 1):
        for w in whats:  # interleaved: a slow phase of the machine falls on both
            r = one(repo, branch, w, log_dir, i)
            rows.append(r)
            print(
                f"{w} run {i}: {r['seconds']:.0f} s, exit {r['rc']}, load {r['load_before']:.2f} -> "
                f"{r['load_after']:.2f}",
                file=sys.stderr,
                flush=True,
            )
    print(
        f"# first report and CI from a fresh clone, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, "
        f"{os.cpu_count()} CPUs, {platform.platform()}, commit {branch[:10]}; logs in {log_dir}\n"
    )
    print("| command | runs | median | min | max | failed | load average (1 min) before, median |")
    print("|---|---|---|---|---|---|---|")
    for w in whats:
        ok = [r["seconds"] for r in rows if r["what"] == w and r["rc"] == 0]
        failed = sum(1 for r in rows if r["what"] == w and r["rc"] != 0)
        ld = statistics.median(r["load_before"] for r in rows if r["what"] == w)
        if ok:
            print(
                f"| `{' '.join(COMMANDS[w])}` | {len(ok)} | {statistics.median(ok):.0f} s | {min(ok):.0f} s | "
                f"{max(ok):.0f} s | {failed} | {ld:.2f} |"
            )
        else:
            print(f"| `{' '.join(COMMANDS[w])}` | 0 | - | - | - | {failed} | {ld:.2f} |")
    return 0 if all(r["rc"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
