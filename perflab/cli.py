"""``python -m perflab`` (also the ``perflab`` script): the library's main calls from a shell.

Subcommands: ``run`` (one experiment), ``breakpoint``, ``profile`` (an experiment with a profile),
``prefill``, ``inspect``, ``runs`` (list recorded runs), ``index`` (rebuild the DuckDB index and
optionally query it), ``report`` (the HTML report: ``perflab.report.cli``).
"""

from __future__ import annotations

import argparse
import json
import sys

from .errors import PerflabError


def _server_args(p: argparse.ArgumentParser):
    g = p.add_argument_group("server")
    g.add_argument("--backend", default="lsm", help="lsm, memory, rocksdb (default lsm)")
    g.add_argument("--mode", default="sync", help="sync, async, virtual (default sync)")
    g.add_argument("--selectors", type=int)
    g.add_argument("--workers", type=int)
    g.add_argument("--queue", type=int, default=1024)
    g.add_argument("--queue-kind", default="array")
    g.add_argument("--memtable-size", default="4m")
    g.add_argument("--flush-threads", type=int, default=1)
    g.add_argument("--compaction-threads", type=int, default=1)
    g.add_argument("--wal", default="batch")
    g.add_argument("--heap", help="e.g. 256m (-Xmx)")
    g.add_argument("--gc", help="g1, parallel, serial, z, shenandoah")
    g.add_argument("--jvm-flag", action="append", default=[], help="extra JVM flag (repeatable)")
    g.add_argument("--java-home")
    g.add_argument("--debug-delay", help="server's artificial per-request delay, e.g. 5ms")


def _load_args(p: argparse.ArgumentParser, rate_required=True):
    g = p.add_argument_group("load")
    g.add_argument("-R", "--rate", required=rate_required, help="requests/s (10k ok)")
    g.add_argument("-d", "--duration", default="10s")
    g.add_argument("-t", "--threads", type=int, default=1)
    g.add_argument("-c", "--connections", type=int, default=1)
    g.add_argument("-s", "--script", help="path or name in wrk-scripts/")
    g.add_argument("--warmup", default="0s")
    g.add_argument("--send-slack", default="0s",
                   help="let a request go up to this late so one wake-up sends several (e.g. 100us; <= 10ms)")
    g.add_argument("--wrk", help="path of a real wrk2 binary to use instead of perflab-load")
    g.add_argument("script_args", nargs="*", help="arguments for the script's init(args) (after --)")


def _prefill_args(p):
    g = p.add_argument_group("prefill")
    g.add_argument("--prefill", type=int, metavar="KEYS", help="prefill this many keys before starting")
    g.add_argument("--value-size", default="100")
    g.add_argument("--seed", type=int, default=0)


def _common(p):
    p.add_argument("--name", help="run name (part of the run id)")
    p.add_argument("--data", help="data root (default $PERFLAB_DATA or <repo>/data)")


def _server(a):
    from .config import ServerConfig
    return ServerConfig(backend=a.backend, mode=a.mode, selectors=a.selectors, workers=a.workers, queue=a.queue,
                        queue_kind=a.queue_kind, memtable_size=a.memtable_size, flush_threads=a.flush_threads,
                        compaction_threads=a.compaction_threads, wal=a.wal, heap=a.heap, gc=a.gc,
                        jvm_flags=tuple(a.jvm_flag), java_home=a.java_home, debug_delay=a.debug_delay)


def _load(a, rate=None):
    from .config import LoadParams
    return LoadParams(rate=rate if rate is not None else a.rate, duration=a.duration, threads=a.threads,
                      connections=a.connections, script=a.script, script_args=tuple(a.script_args), warmup=a.warmup,
                      send_slack=a.send_slack, tool="wrk2" if a.wrk else "perflab-load", wrk_binary=a.wrk)


def _prefill(a):
    from .config import PrefillParams
    return PrefillParams(keys=a.prefill, value_size=a.value_size, seed=a.seed) if a.prefill else None


def cmd_run(a, profile=None):
    from .experiment import run_experiment
    res = run_experiment(_server(a), _load(a), profile=profile, prefill=_prefill(a), name=a.name, data_root=a.data)
    print(res.load.console, end="")
    print(f"\nrun {res.run.id}: {res.run.dir}")
    if res.profile is not None:
        print(f"profile: {res.profile.html_path}")
        cats = res.profile.categories()
        for c, s in zip(cats["category"], cats["share"]):
            if s > 0:
                print(f"  {c:24s} {s:6.1%}")
    return 0


def cmd_profile(a):
    from .config import ProfileParams
    return cmd_run(a, ProfileParams(event=a.event, interval=a.interval))


def cmd_breakpoint(a):
    from .breakpoint import find_breakpoint
    from .config import BreakpointCriteria, BreakpointParams
    crit = BreakpointCriteria(sla_p99=a.sla, min_achieved=a.min_achieved, max_error_ratio=a.max_errors)
    bp = BreakpointParams(start_rate=a.start_rate, max_rate=a.max_rate, precision=a.precision,
                          max_probes=a.max_probes, probe_duration=a.probe_duration, warmup=a.warmup,
                          seed=a.seed, retries=a.retries, server_warmup=a.server_warmup)
    load = _load(a, rate=bp.start_rate)
    res = find_breakpoint(_server(a), load, crit, bp, name=a.name, data_root=a.data, prefill=_prefill(a),
                          progress=not a.quiet)
    print(res.table[["probe", "phase", "rate", "passed", "reason"]].to_string(index=False))
    print(f"\nbreakpoint: {res.rate} req/s (bracket [{res.lo}, {res.hi}], {res.stop_reason})")
    print(f"run {res.run_id}: {res.run.dir}")
    return 0 if res.rate is not None else 1


def cmd_prefill(a):
    from .profiling import bridge
    out = bridge.prefill(a.dir, a.keys, a.value_size, a.seed, a.key_prefix, backend=a.backend)
    print(json.dumps(out, indent=2))
    return 0


def cmd_inspect(a):
    from .profiling import bridge
    print(json.dumps(bridge.inspect(a.dir), indent=2))
    return 0


def cmd_runs(a):
    import pandas as pd
    from .records import list_runs
    df = list_runs(a.data)
    if df.empty:
        print("no runs recorded")
        return 0
    cols = [c for c in ("run_id", "kind", "status", "server_mode", "server_backend", "load_rate",
                        "result_achieved_rate", "result_p99_ms", "result_breakpoint_rate") if c in df]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(df[cols].tail(a.last).to_string(index=False))
    return 0


def cmd_index(a):
    from .records import query, rebuild_index
    path = rebuild_index(a.data)
    print(f"index: {path}")
    if a.sql:
        import pandas as pd
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(query(a.sql, a.data, rebuild=False).to_string(index=False))
    return 0


def cmd_compare(a):
    from .report.compare import compare
    c = compare(a.a, a.b, output=a.output, data_root=a.data)
    print(c.path)
    return 0


def cmd_report(argv):
    try:
        from .report.cli import main as report_main
    except ImportError as e:
        print(f"perflab report is not available: perflab.report.cli could not be imported ({e})", file=sys.stderr)
        return 2
    return report_main(argv)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="perflab", description="perflab: fixed-rate loads, profiles, breakpoints and "
                                "records for the Java key-value server.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    r = sub.add_parser("run", help="start a server, (prefill,) hold one fixed-rate load, record it")
    _server_args(r), _load_args(r), _prefill_args(r), _common(r)
    pr = sub.add_parser("profile", help="like run, with async-profiler over the measured window")
    _server_args(pr), _load_args(pr), _prefill_args(pr), _common(pr)
    pr.add_argument("--event", default="cpu", help="cpu, alloc, lock, wall, itimer, ctimer")
    pr.add_argument("--interval", default="5ms", help="sampling interval for cpu/wall")
    b = sub.add_parser("breakpoint", help="find the highest rate the server keeps up with")
    _server_args(b), _load_args(b, rate_required=False), _prefill_args(b), _common(b)
    b.add_argument("--start-rate", default="1000")
    b.add_argument("--max-rate", default="1000000")
    b.add_argument("--precision", type=float, default=0.05)
    b.add_argument("--max-probes", type=int, default=14)
    b.add_argument("--probe-duration", default="5s")
    b.add_argument("--sla", default="10ms", help="p99 bound (default 10ms)")
    b.add_argument("--min-achieved", type=float, default=0.99)
    b.add_argument("--max-errors", type=float, default=0.001)
    # Defaults for a person at a shell: a cold JVM or one stall of a shared machine failing the first
    # probe would otherwise end the search far below the server's real limit.
    b.add_argument("--server-warmup", default="10s",
                   help="unrecorded load at --start-rate before the first probe, for the JIT (default 10s)")
    b.add_argument("--retries", type=int, default=1,
                   help="repeat a failed probe this many times (default 1: shared machines stall now and then)")
    b.set_defaults(warmup="2s")  # unrecorded seconds before each probe's window
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    f = sub.add_parser("prefill", help="fill a data directory in-process (deterministic)")
    f.add_argument("dir")
    f.add_argument("--keys", type=int, required=True)
    f.add_argument("--value-size", type=int, default=100)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--key-prefix", default="key")
    f.add_argument("--backend", default="lsm")
    i = sub.add_parser("inspect", help="describe a data directory (SSTables, sizes, key range)")
    i.add_argument("dir")
    ru = sub.add_parser("runs", help="list recorded runs")
    ru.add_argument("--data")
    ru.add_argument("--last", type=int, default=30)
    ix = sub.add_parser("index", help="rebuild the DuckDB index of runs; optionally run SQL on it")
    ix.add_argument("--data")
    ix.add_argument("sql", nargs="?")
    sub.add_parser("report", help="run the notebooks and export the HTML report (see `perflab report --help`)",
                   add_help=False)
    cp = sub.add_parser("compare", help="two runs, or two report folders, side by side on one HTML page")
    cp.add_argument("a", help="A, the base: a run directory or run id, or a report folder")
    cp.add_argument("b", help="B, compared against A: the same kind as A")
    cp.add_argument("-o", "--output", help="the page to write (default: <report root>/compare/<A>-vs-<B>.html)")
    cp.add_argument("--data", help="data root where run ids are looked up (default $PERFLAB_DATA or <repo>/data)")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "report":
        return cmd_report(argv[1:])
    parser = build_parser()
    a = parser.parse_args(argv)
    if not a.cmd:
        parser.print_help()
        return 0
    handlers = {"run": cmd_run, "profile": cmd_profile, "breakpoint": cmd_breakpoint, "prefill": cmd_prefill,
                "inspect": cmd_inspect, "runs": cmd_runs, "index": cmd_index, "compare": cmd_compare}
    try:
        return handlers[a.cmd](a)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except PerflabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
