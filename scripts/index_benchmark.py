"""The run index's benchmark: a first build, a second query, and a query after new runs, at 3,000 and 30,000 runs.

    .venv/bin/python scripts/index_benchmark.py                      # makes 4 real runs, then 3,000 and 30,000 copies
    .venv/bin/python scripts/index_benchmark.py --seed DATA_ROOT --sizes 3000 --repeats 5
    .venv/bin/python scripts/index_benchmark.py --before ../perflab-old  # and a checkout from before, side by side

The data roots are copies of real run directories (``--seed``, or four short ``python -m perflab run`` /
``profile`` / ``breakpoint`` runs against the built-in server made here): each copy gets a run id and a
creation time of its own, its ``meta.json`` and ``tables/*.jsonl`` (what the index reads) written anew, its
other artifacts hard-linked. For each size, each repeat:

* **full build**: :func:`perflab.records.update_index` with ``full=True`` on the root, what every query cost
  before the index was incremental (each one rebuilt it from every run);
* **first build**: an update on a root with no index yet;
* **second query**: ``recorded("runs")`` and ``recorded("breakpoints")`` (notebook 06's calls, each bringing
  the index up to date first: nothing to read), and ``query("SELECT count(*) FROM loads")``;
* **after adding**: ``--add`` more copies, then ``recorded("runs")`` (which reads just those);
* **before** (with ``--before CHECKOUT``, a perflab checkout from before the index was incremental): its
  ``recorded("runs")`` on the same root, in a process of its own, right after this one's queries.

Prints a Markdown table (median and the range over the repeats, seconds), and writes every timing as JSON.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perflab.records import query, recorded, update_index
from perflab.records.environment import load_average, machine_info
from perflab.records.index import INDEX_FILE

#: the real runs made when no --seed is given: a fixed-rate GET and PUT, a profiled one, a breakpoint search
SEED_RUNS = (
    ["run", "-R", "1000", "-d", "2s", "-c", "8", "-t", "1", "--name", "get-1k", "-s", "get-random.lua"],
    [
        "run",
        "-R",
        "2000",
        "-d",
        "2s",
        "-c",
        "8",
        "-t",
        "1",
        "--mode",
        "async",
        "--name",
        "put-2k",
        "-s",
        "put-random.lua",
    ],
    ["profile", "-R", "1000", "-d", "2s", "-c", "8", "-t", "1", "--name", "prof"],
    [
        "breakpoint",
        "-c",
        "8",
        "-t",
        "1",
        "--max-probes",
        "4",
        "--probe-duration",
        "1s",
        "--ramp-duration",
        "2s",
        "--name",
        "bp-put",
        "-s",
        "put-random.lua",
    ],
)
#: when the copies are dated from, one minute apart
EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def make_seed(root: Path) -> Path:
    """Four real runs against the built-in server in ``root``."""
    env = {**os.environ, "PERFLAB_DATA": str(root)}
    for args in SEED_RUNS:
        subprocess.run(
            [sys.executable, "-m", "perflab", *args, "--no-project"], env=env, check=True, stdout=subprocess.DEVNULL
        )
    return root


def copy_runs(seed: Path, root: Path, start: int, count: int) -> None:
    """Runs ``start`` .. ``start + count - 1`` of ``root``: copies of the seed's runs in turn, each with an id
    and a creation time of its own."""
    sources = sorted(d for d in (seed / "runs").iterdir() if (d / "meta.json").is_file())
    metas = {d: json.loads((d / "meta.json").read_text()) for d in sources}
    tables = {d: {f.name: f.read_text().splitlines() for f in sorted((d / "tables").glob("*.jsonl"))} for d in sources}
    runs = root / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    for i in range(start, start + count):
        src = sources[i % len(sources)]
        meta = dict(metas[src])
        created = EPOCH + dt.timedelta(minutes=i)
        rid = f"{created:%Y%m%dT%H%M%S}-{meta.get('name', 'run')}-{i:06x}"
        d = runs / rid
        d.mkdir()
        meta.update(id=rid, created_at=created.isoformat(timespec="milliseconds"))
        for f in src.rglob("*"):
            rel = f.relative_to(src)
            if f.is_dir() or rel.parts[0] == "tables" or rel.name == "meta.json":
                continue
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            os.link(f, d / rel)
        (d / "tables").mkdir()
        for name, lines in tables[src].items():
            rows = [json.loads(x) for x in lines if x.strip()]
            (d / "tables" / name).write_text("".join(json.dumps({**r, "run_id": rid}) + "\n" for r in rows))
        (d / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


#: the query a checkout from before times, in a process of its own (its recorded() rebuilt the index every time)
BEFORE = (
    "import sys, time, duckdb; from perflab.records import recorded; t = time.perf_counter(); "
    "recorded('runs', sys.argv[1]); print(time.perf_counter() - t)"
)


def before(checkout: Path, root: Path) -> float:
    """Seconds ``recorded("runs")`` takes with the perflab of ``checkout`` (its index written in a copy of the
    index file's place, then this one's put back)."""
    index = root / INDEX_FILE
    kept = index.with_suffix(".kept")
    index.rename(kept)
    try:
        out = subprocess.run(
            [sys.executable, "-c", BEFORE, str(root)],
            env={**os.environ, "PYTHONPATH": str(checkout)},
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        index.unlink(missing_ok=True)
        kept.rename(index)
    return float(out.split()[-1])


def measure(seed: Path, size: int, add: int, repeats: int, work: Path, checkout: Path | None) -> dict:
    """Every timing of one size, ``repeats`` times over (a fresh index each time, the runs made once)."""
    root = work / f"runs-{size}"
    if not (root / "runs").is_dir() or len(list((root / "runs").iterdir())) != size:
        shutil.rmtree(root, ignore_errors=True)
        t = time.perf_counter()
        copy_runs(seed, root, 0, size)
        print(f"{size:,} runs copied in {time.perf_counter() - t:.0f} s", flush=True)
    out = {
        k: []
        for k in ("full_build", "first_build", "second_runs", "second_breakpoints", "second_count", "after_add_runs")
        + (("before_runs",) if checkout else ())
    }
    for r in range(repeats):
        for f in (INDEX_FILE, INDEX_FILE + ".wal"):
            (root / f).unlink(missing_ok=True)
        out["full_build"].append(_timed(lambda: update_index(root, full=True)))
        (root / INDEX_FILE).unlink()
        out["first_build"].append(_timed(lambda: update_index(root)))
        out["second_runs"].append(_timed(lambda: recorded("runs", root)))
        out["second_breakpoints"].append(_timed(lambda: recorded("breakpoints", root)))
        out["second_count"].append(_timed(lambda: query("SELECT count(*) FROM loads", root)))
        copy_runs(seed, root, size + r * add, add)
        out["after_add_runs"].append(_timed(lambda: recorded("runs", root)))
        if checkout:
            out["before_runs"].append(before(checkout, root))
        n = len(recorded("runs", root, include_failed=True, include_invalid=True))
        assert n == size + (r + 1) * add, f"the index holds {n} runs, {size + (r + 1) * add} were made"
        print(f"{size:,} runs, repeat {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in out.items()), flush=True)
    for f in (root / "runs").iterdir():  # the added copies go, for the next invocation
        if int(f.name.rsplit("-", 1)[1], 16) >= size:
            shutil.rmtree(f)
    return out


#: the table's column heads, by timing
HEADS = {
    "full_build": "full build",
    "first_build": "first build",
    "second_runs": 'second `recorded("runs")`',
    "second_breakpoints": 'second `recorded("breakpoints")`',
    "second_count": "second `count(*)` of loads",
    "after_add_runs": '`recorded("runs")` after adding',
    "before_runs": '`recorded("runs")` before',
}


def table(results: dict, repeats: int) -> str:
    heads = [HEADS[k] for k in next(iter(results.values()))["timings"]]
    rows = ["| runs | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]
    for size, r in results.items():
        cells = [f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})" for v in r["timings"].values()]
        rows.append(f"| {int(size):,} (+{r['add']}) | " + " | ".join(cells) + " |")
    return "\n".join(rows) + f"\n\nseconds: median (min-max) of {repeats} repeats"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=Path, help="a data root of real runs to copy (default: make four here)")
    ap.add_argument("--sizes", default="3000,30000", help="runs per data root, comma-separated (default 3000,30000)")
    ap.add_argument("--add", type=int, default=10, help="runs added before the last query (default 10)")
    ap.add_argument("--repeats", type=int, default=3, help="repeats per size (default 3)")
    ap.add_argument("--work", type=Path, help="where the data roots are made (default: a temporary directory)")
    ap.add_argument("--json", type=Path, default=Path("index-benchmark.json"), help="timings written here")
    ap.add_argument("--before", type=Path, help="a perflab checkout from before, timed side by side")
    a = ap.parse_args(argv)
    sizes = [int(s) for s in a.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="perflab-index-") as tmp:
        work = a.work or Path(tmp)
        seed = a.seed or make_seed(work / "seed")
        started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        load_start = load_average()
        results = {
            size: {"add": a.add, "timings": measure(seed, size, a.add, a.repeats, work, a.before)} for size in sizes
        }
    summary = {
        "date": started,
        "machine": machine_info(),
        "python": platform.python_version(),
        "load_average": [load_start, load_average()],
        "repeats": a.repeats,
        "results": results,
    }
    a.json.write_text(json.dumps(summary, indent=2) + "\n")
    print(table(results, a.repeats))
    print(
        f"{started}, {summary['machine'].get('cpu_model')}, {summary['machine'].get('cores')} cores; "
        f"load average {load_start} at the start, {summary['load_average'][1]} at the end; timings in {a.json}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
