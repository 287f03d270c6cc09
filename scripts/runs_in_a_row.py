"""Short ``perflab run`` commands in a row, as a user types them, beside a busy core: none may hang, listen
beyond loopback, or leave anything in ``$TMPDIR``.

    .venv/bin/python scripts/runs_in_a_row.py                 # 40 runs, one core kept busy by another process
    .venv/bin/python scripts/runs_in_a_row.py --runs 10 --busy 0

Each run is ``python -m perflab run`` (the built-in server, 1 s at 500 req/s) in a process of its own, with
``TMPDIR`` and ``PERFLAB_DATA`` in fresh directories and a hard limit (``--limit``: a run past it counts as
hung and is killed). While each runs, the listening sockets of its process tree are read every 0.2 s
(psutil, as ``ss -ltnp`` shows them). Prints each run and a summary: wall times (median, range), hung runs,
runs with a socket beyond loopback, entries left in ``$TMPDIR``, and the machine's listening sockets (``ss
-ltn``) before and after.
"""

from __future__ import annotations

import argparse
import datetime as dt
import ipaddress
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
COMMAND = [
    "run",
    "--no-project",
    "--backend",
    "memory",
    "-R",
    "500",
    "-d",
    "1s",
    "-c",
    "2",
    "-t",
    "1",
    "--path",
    "/v0/status",
]


def _loopback(a: str) -> bool:
    ip = ipaddress.ip_address(a)
    return (getattr(ip, "ipv4_mapped", None) or ip).is_loopback


def _listening(pid: int) -> set[str]:
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return set()
    out = set()
    for p in procs:
        try:
            out |= {
                f"{c.laddr.ip}:{c.laddr.port} ({p.name()})"
                for c in p.net_connections(kind="inet")
                if c.status == psutil.CONN_LISTEN
            }
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def _ss() -> int:
    r = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True)
    return len(r.stdout.splitlines()) if r.returncode == 0 else -1


def one(i: int, tmp: Path, limit: float) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFLAB_", "DASK_"))}
    env.update(
        TMPDIR=str(tmp / "tmp"),
        PERFLAB_DATA=str(tmp / "data"),
        PYTHONPATH=str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""),
    )
    t0 = time.monotonic()
    p = subprocess.Popen(
        [sys.executable, "-m", "perflab", *COMMAND, "--name", f"row-{i}"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    seen: set[str] = set()
    hung = False
    while p.poll() is None:
        seen |= _listening(p.pid)
        if time.monotonic() - t0 > limit:
            hung = True
            os.killpg(p.pid, 9)
            break
        time.sleep(0.2)
    err = p.communicate()[1].decode(errors="replace")
    return {
        "wall_s": time.monotonic() - t0,
        "rc": p.returncode,
        "hung": hung,
        "open": sorted(s for s in seen if not _loopback(s.rsplit(":", 1)[0].strip("[]"))),
        "listening": sorted(seen),
        "error": err.strip().splitlines()[-1] if p.returncode and err.strip() else "",
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--busy", type=int, default=1, help="cores kept busy by other processes (default 1)")
    ap.add_argument("--limit", type=float, default=120.0, help="seconds after which a run counts as hung")
    a = ap.parse_args(argv)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.busy)]
    try:
        with tempfile.TemporaryDirectory(prefix="runs-in-a-row-") as d:
            tmp = Path(d)
            (tmp / "tmp").mkdir()
            print(
                f"# {a.runs} x perflab {' '.join(COMMAND)}, {a.busy} core(s) busy beside them; "
                f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, load average "
                f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}",
                flush=True,
            )
            before = _ss()
            rows = []
            for i in range(1, a.runs + 1):
                r = one(i, tmp, a.limit)
                rows.append(r)
                status = "HUNG" if r["hung"] else f"exit {r['rc']}"
                print(
                    f"run {i}: {status} in {r['wall_s']:.1f} s; "
                    f"listening {', '.join(r['listening']) or 'nothing'}" + (f"; {r['error']}" if r["error"] else ""),
                    flush=True,
                )
            after = _ss()
            left = sorted(os.listdir(tmp / "tmp"))
            walls = [r["wall_s"] for r in rows]
            print(
                f"runs: {len(rows)}, exit 0: {sum(r['rc'] == 0 for r in rows)}, "
                f"hung: {sum(r['hung'] for r in rows)}, wall {statistics.median(walls):.1f} s at the median "
                f"({min(walls):.1f}-{max(walls):.1f})"
            )
            print(
                f"a socket beyond loopback in {sum(bool(r['open']) for r in rows)} runs; "
                f"listening sockets on the machine (ss -ltn): {before} before, {after} after"
            )
            print(f"left in TMPDIR: {len(left)}" + (f" ({', '.join(left[:10])})" if left else ""))
    finally:
        for b in busy:
            b.kill()
            b.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
