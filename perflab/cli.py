"""``python -m perflab`` (also the ``perflab`` script): the library's main calls from a shell.

Subcommands: ``run`` (one experiment), ``breakpoint``, ``profile`` (an experiment with a profile), ``ab`` (two
servers, configurations or commits measured interleaved, with a paired verdict: :mod:`perflab.ab`),
``prefill``, ``inspect``, ``host`` (does the machine keep one speed?), ``hosts`` (a cluster's hosts), ``runs``
(list recorded runs), ``index`` (rebuild the DuckDB index and
optionally query it), ``bench`` (the server's standard benchmark: :mod:`perflab.bench`), ``compare`` (two
runs or two reports side by side: :mod:`perflab.report.compare`), ``report`` (the HTML report:
``perflab.report.cli``).

Every parameter option is derived from the fields of the parameter classes (:mod:`perflab.config`):
the server's flags from ``ServerConfig`` (itself from the server's ``--options-json``), the load's
from ``LoadParams`` and so on, with their defaults and help; values are checked by those classes, so
the command line and Python give the same errors.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys

from .errors import PerflabError, RunInterrupted

#: LoadParams fields the breakpoint search sets itself (per probe / for the ramp)
_SEARCH_OWNS = ("rate", "duration", "warmup", "rate_steps", "step_duration", "ramp", "ramp_curve", "stop_on_p99")
#: ProfileParams fields left at their defaults on the command line (names taken by the load's options)
_PROFILE_HIDDEN = ("threads", "include", "exclude", "jstackdepth", "fallback")


def _server_args(p: argparse.ArgumentParser):
    from .config import ForeignServer, ServerConfig
    from .config.fields import add_arguments
    # the lab sets a node's --cluster and --self-url itself (with --nodes)
    add_arguments(p.add_argument_group("server (perflab.server.Main flags and the JVM)"), ServerConfig,
                  exclude=("host", "port", "cluster", "self_url"), dest_prefix="server_")
    add_arguments(p.add_argument_group("your own server instead of the built-in one"), ForeignServer,
                  dest_prefix="foreign_")
    p.add_argument("--placement", default="shared",
                   help="shared (server and generator on all CPUs) or split (disjoint CPU sets), or "
                        "'server=0;load=1' (default shared)")


def _load_args(p: argparse.ArgumentParser, exclude: tuple[str, ...] = ()):
    from .config import LoadParams
    from .config.fields import add_arguments
    g = p.add_argument_group("load (wrk2's options and perflab-load's)")
    add_arguments(g, LoadParams, exclude=("tool", "script_args") + exclude, dest_prefix="load_")
    g.add_argument("script_args", nargs="*", help="arguments for the script's init(args) (after --)")


def _prefill_args(p, flags=None):
    from .config import PrefillParams
    from .config.fields import add_arguments
    add_arguments(p.add_argument_group("prefill (before the server starts; omit --prefill for none)"),
                  PrefillParams, dest_prefix="prefill_", flags=flags)


def _common(p, hosts: bool = True):
    p.add_argument("--name", help="run name (part of the run id)")
    p.add_argument("--data", help="data root (default $PERFLAB_DATA or <repo>/data)")
    if hosts:
        _host_args(p)


def _host_args(p, only: tuple[str, ...] | None = None):
    """--scheduler, --generators, --server-host: SessionOptions' host fields (perflab.session.HOST_FIELDS)."""
    from .session import HOST_FIELDS, HOST_FLAGS
    g = p.add_argument_group("hosts (see `perflab hosts`; default: this machine alone)")
    for name, help_text in HOST_FIELDS.items():
        if only is None or name in only:
            g.add_argument(HOST_FLAGS[name], dest=name, default=None, help=help_text)


def _server(a):
    import dataclasses

    from .config import ForeignServer, ServerConfig
    from .config.fields import cli_flag, from_arguments
    if a.foreign_command is None and a.foreign_url is None:
        for name in ("pid", "ready_path", "startup_timeout"):
            if getattr(a, "foreign_" + name) is not None:
                raise ValueError(f"--{name.replace('_', '-')}: only with --server-cmd or --url (your own server)")
        return from_arguments(ServerConfig, a, "server_")
    given = [cli_flag(f) for f in dataclasses.fields(ServerConfig)
             if getattr(a, "server_" + f.name, None) is not None and cli_flag(f)]
    if getattr(a, "prefill_keys", None) is not None:
        given.append("--prefill")
    if given:
        which = "--server-cmd" if a.foreign_command is not None else "--url"
        raise ValueError(f"{', '.join(given)}: option{'s' if len(given) > 1 else ''} of the built-in server; with "
                         f"{which} your server takes its own settings (put them in its command)")
    return from_arguments(ForeignServer, a, "foreign_")


def _load(a):
    from .config import LoadParams
    from .config.fields import from_arguments
    return from_arguments(LoadParams, a, "load_", script_args=tuple(a.script_args) or None,
                          tool="wrk2" if getattr(a, "load_wrk_binary", None) else None)


def _prefill(a):
    from .config import PrefillParams
    from .config.fields import from_arguments
    return from_arguments(PrefillParams, a, "prefill_") if a.prefill_keys is not None else None


def _print_validity(v) -> None:
    if v is None:
        return
    print(f"validity: {v.level}")
    for r in v.reasons:
        print(f"  - {r}")


def _target(a):
    """The built-in server, yours, or with --nodes a cluster of either (:mod:`perflab.cluster.cli`)."""
    from .cluster import cli as ccli
    if not ccli.is_cluster_run(a):
        ccli.check_cluster_only(a)
        return _server(a)
    from .session import check_prefill
    target = ccli.cluster_from_args(a)
    check_prefill(target, _prefill(a))    # --prefill is refused: --fill N writes through the cluster
    return target


def cmd_run(a, profile=None):
    from .cluster import cli as ccli
    from .experiment import run_experiment
    from .session import host_options
    target, where = _target(a), dict(data_root=a.data, placement=a.placement, **host_options(a))
    if ccli.is_cluster_run(a):
        from .cluster import run_cluster
        res = run_cluster(target, _load(a), faults=a.cluster_faults or (), consistency=ccli.consistency_from_args(a),
                          profile=profile, profile_nodes=ccli.profile_nodes_from_args(a), fill=a.cluster_fill,
                          keys=a.cluster_keys, name=a.name, **where)
    else:
        res = run_experiment(target, _load(a), profile=profile, prefill=_prefill(a), name=a.name, **where)
    print(res.load.console, end="")
    print()
    if ccli.is_cluster_run(a):
        ccli.print_cluster_result(res)
    _print_validity(res.validity)
    print(f"run {res.run.id}: {res.run.dir}")
    if res.profile is not None:
        print(f"profile: {res.profile.html_path}")
        cats = res.profile.categories()
        for c, s in zip(cats["category"], cats["share"]):
            if s > 0:
                print(f"  {c:24s} {s:6.1%}")
    return 0


def cmd_profile(a):
    from .config import ProfileParams
    from .config.fields import from_arguments
    return cmd_run(a, from_arguments(ProfileParams, a, "profile_"))


def cmd_breakpoint(a):
    from .analysis import breakpoints
    from .breakpoint import find_breakpoint
    from .config import BreakpointCriteria, BreakpointParams, ValidityThresholds
    from .config.fields import from_arguments
    crit = from_arguments(BreakpointCriteria, a, "criteria_")
    bp = from_arguments(BreakpointParams, a, "search_")
    thresholds = from_arguments(ValidityThresholds, a, "validity_")
    from .session import host_options
    res = find_breakpoint(_target(a), _load(a), crit, bp, name=a.name, data_root=a.data, prefill=_prefill(a),
                          progress=not a.quiet, placement=a.placement, thresholds=thresholds, **host_options(a))
    cols = [c for c in ("probe", "phase", "rate", "passed", "validity", "p99_ms", "host_slowdown", "reason") if c in res.table]
    if res.ramp:
        print(f"ramp: {res.ramp['reason']}")
    if len(res.table):
        print(res.table[cols].to_string(index=False))
    print(f"\nbreakpoint: {breakpoints.estimate(res)}; probes' validity: {res.validity}; {res.stop_reason}; "
          f"{res.seconds:.0f} s")
    if breakpoints.host_note(res):
        print(breakpoints.host_note(res))
    print(f"run {res.run_id}: {res.run.dir}")
    return 0 if res.rate is not None else 1


def cmd_prefill(a):
    from .profiling import bridge
    p = _prefill(a)
    out = bridge.prefill(a.dir, p.keys, p.value_size, p.seed, p.key_prefix, backend=a.backend)
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
    cols = [c for c in ("run_id", "kind", "status", "validity", "server_mode", "server_backend", "load_rate",
                        "result_achieved_rate", "result_p99_ms", "result_breakpoint_rate", "result_verdict",
                        "result_ratio", "result_conclusion")
            if c in df]
    with pd.option_context("display.width", 220, "display.max_columns", 20):
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


def cmd_host(a):
    from .measure import hostspeed
    hostspeed.check_survey(a.seconds, a.every, a.sample, prefix="--")  # before the banner
    print(f"timing a fixed loop ({hostspeed.LOOP} iterations) on CPUs {hostspeed.cpus()} for {a.sample:g} s every "
          f"{a.every:g} s, {a.seconds:g} s in all; keep the machine otherwise idle", flush=True)
    cals = hostspeed.survey(a.seconds, a.every, a.sample)
    summary = hostspeed.summarise(cals)
    print(f"{'cpu':>4} {'n':>4} {'fastest us':>11} {'median us':>10} {'slowest us':>11} {'spread':>7} {'slow':>6}")
    for c, r in summary["cpus"].items():
        print(f"{c:>4} {r['n']:>4} {r['fastest_us']:>11.0f} {r['median_us']:>10.0f} {r['slowest_us']:>11.0f} "
              f"{r['spread']:>6.2f}x {r['slow_share']:>6.0%}")
    print(hostspeed.describe(summary))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({**summary, "cpus": {str(k): v for k, v in summary["cpus"].items()},
                       "calibrations": [c.to_dict() for c in cals]}, f, indent=2)
        print(f"calibrations: {a.json}")
    return 0


def cmd_hosts(a):
    from .hosts.cluster import connect
    from .hosts.inventory import check_versions, survey, table
    from .hosts.leases import held
    cluster = connect(a.cluster)
    hosts = survey(cluster)
    print(f"{cluster.describe()}" + (f", dashboard {cluster.dashboard_link}" if cluster.dashboard_link else ""))
    print(table(hosts))
    busy = held(cluster)
    for h, v in sorted(busy.items()):
        print(f"{h}: leased by {v['what']}")
    try:
        check_versions(hosts)
    except PerflabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_compare(a):
    from .report.compare import compare
    c = compare(a.a, a.b, output=a.output, data_root=a.data)
    print(c.path)
    return 0


#: ABParams and BreakpointParams fields of the same name: ``perflab ab`` takes them once (ABParams')
_AB_SHARED = ("probe_duration", "warmup", "cooldown", "server_warmup", "seed", "seed_arg", "restart_server")


def _ab_args(p: argparse.ArgumentParser):
    from .config import ABParams, BreakpointCriteria, BreakpointParams, ForeignServer, ServerConfig, ValidityThresholds
    from .config.fields import add_arguments
    _server_args(p)
    for side in ("a", "b"):
        S = side.upper()
        g = p.add_argument_group(f"side {S} only (any built-in server flag as --{side}-FLAG overrides the shared one)")
        g.add_argument(f"--{side}-commit", metavar="REV", help=f"{S} is the built-in server at this git commit, built "
                       "in a directory of its own (the working tree is never touched)")
        add_arguments(g, ForeignServer, dest_prefix=f"{side}_foreign_", flag_prefix=f"--{side}-")
        add_arguments(g, ServerConfig, exclude=("host", "port"), dest_prefix=f"{side}_server_", flag_prefix=f"--{side}-")
    _load_args(p, exclude=_SEARCH_OWNS)
    p.add_argument("-R", "--rate", dest="ab_rates", action="append", metavar="RATE[,RATE...]",
                   help="offered rate(s) to compare at (repeatable; default: the load's rate, 1000)")
    add_arguments(p.add_argument_group("comparison (interleaved pairs and the stop rule)"), ABParams, dest_prefix="ab_")
    add_arguments(p.add_argument_group("pass criteria (pass/fail at the SLA; the searches' criteria)"),
                  BreakpointCriteria, dest_prefix="criteria_")
    g = p.add_argument_group("breakpoint mode: two interleaved searches instead of fixed rates")
    g.add_argument("--breakpoint", action="store_true", help="compare breakpoints (probes use --probe-duration, "
                   "--warmup, --cooldown of the comparison)")
    add_arguments(g, BreakpointParams, dest_prefix="search_", exclude=_AB_SHARED)
    add_arguments(p.add_argument_group("validity thresholds (see perflab.config.ValidityThresholds)"),
                  ValidityThresholds, dest_prefix="validity_", flag_prefix="--validity-")
    _prefill_args(p)
    _common(p, hosts=False)   # both servers and the generator run on this machine (perflab.ab.run)
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _ab_side(a, side: str):
    """Side ``side`` ("a" or "b") from the shared and the side's own flags: a Commit, your server or a
    built-in configuration."""
    import dataclasses

    from .ab import Commit
    from .config import ForeignServer, ServerConfig
    from .config.fields import cli_flag

    S = side.upper()
    built = {f.name: getattr(a, "server_" + f.name, None) for f in dataclasses.fields(ServerConfig)}
    built.update({k: v for k, v in ((f.name, getattr(a, f"{side}_server_{f.name}", None))
                                    for f in dataclasses.fields(ServerConfig)) if v is not None})
    built = {k: tuple(v) if isinstance(v, list) else v for k, v in built.items() if v is not None}
    foreign = {f.name: getattr(a, "foreign_" + f.name, None) for f in dataclasses.fields(ForeignServer)}
    foreign.update({k: v for k, v in ((f.name, getattr(a, f"{side}_foreign_{f.name}", None))
                                      for f in dataclasses.fields(ForeignServer)) if v is not None})
    foreign = {k: v for k, v in foreign.items() if v is not None}
    commit = getattr(a, f"{side}_commit")
    yours = foreign.get("command") is not None or foreign.get("url") is not None
    if commit is not None and yours:
        raise ValueError(f"--{side}-commit and --{side}-server-cmd/--{side}-url: give one of them for side {S}")
    if yours:
        given = [cli_flag(f) for f in dataclasses.fields(ServerConfig) if f.name in built and cli_flag(f)]
        if given or getattr(a, "prefill_keys", None) is not None:
            given += ["--prefill"] if getattr(a, "prefill_keys", None) is not None else []
            raise ValueError(f"{', '.join(given)}: option{'s' if len(given) > 1 else ''} of the built-in server; side {S} "
                             f"is your server, which takes its own settings (put them in its command)")
        return ForeignServer(**foreign)
    if foreign:
        raise ValueError(f"{', '.join('--' + k.replace('_', '-') for k in foreign)}: only with --{side}-server-cmd or "
                         f"--{side}-url (your own server)")
    try:
        cfg = ServerConfig(**built)
    except ValueError as e:
        raise ValueError(f"side {S}: {e}") from None
    return Commit(commit, cfg) if commit is not None else cfg


def cmd_ab(a):
    import warnings

    from .ab import compare_ab
    from .analysis.ab import lines
    from .config import ABParams, BreakpointCriteria, BreakpointParams, ValidityThresholds
    from .config.fields import from_arguments
    sa, sb = _ab_side(a, "a"), _ab_side(a, "b")
    load = _load(a)
    ab = from_arguments(ABParams, a, "ab_")
    crit = from_arguments(BreakpointCriteria, a, "criteria_")
    thresholds = from_arguments(ValidityThresholds, a, "validity_")
    rates = [r.strip() for spec in a.ab_rates or () for r in spec.split(",") if r.strip()] or None
    search = None
    if a.breakpoint:
        if rates:
            raise ValueError("-R/--rate: a breakpoint comparison searches the rates itself; give no -R with --breakpoint")
        search = from_arguments(BreakpointParams, a, "search_", probe_duration=ab.probe_duration, warmup=ab.warmup,
                                cooldown=ab.cooldown, server_warmup=ab.server_warmup)
    else:
        given = [f"--{n.removeprefix('search_').replace('_', '-')}" for n, v in vars(a).items()
                 if n.startswith("search_") and v is not None]
        if given:
            raise ValueError(f"{', '.join(given)}: only with --breakpoint")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = compare_ab(sa, sb, load, rates=rates, params=ab, criteria=crit, search=search, prefill=_prefill(a),
                             name=a.name, progress=not a.quiet, data_root=a.data, placement=a.placement,
                             thresholds=thresholds)
        finally:
            for w in caught:
                print(f"warning: {w.message}", file=sys.stderr)
    for line in lines(res):
        print(line)
    print(f"run {res.run_id}: {res.run.dir}")
    return 0


def cmd_report(argv):
    from .report.cli import main as report_main
    return report_main(argv)


def build_parser() -> argparse.ArgumentParser:
    from .config import BreakpointCriteria, BreakpointParams, ProfileParams, ValidityThresholds
    from .config.fields import add_arguments

    p = argparse.ArgumentParser(prog="perflab", description="perflab: fixed-rate loads, profiles, breakpoints and "
                                "records for the Java key-value server.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    from .cluster.cli import add_cluster_args
    r = sub.add_parser("run", help="start a server (or --nodes N: a cluster), (prefill,) hold one fixed-rate load, "
                       "record it")
    _server_args(r), _load_args(r), _prefill_args(r), _common(r), add_cluster_args(r, run=True)
    pr = sub.add_parser("profile", help="like run, with async-profiler over the measured window")
    _server_args(pr), _load_args(pr), _prefill_args(pr), _common(pr), add_cluster_args(pr, run=True, profile=True)
    add_arguments(pr.add_argument_group("profile"), ProfileParams, exclude=_PROFILE_HIDDEN, dest_prefix="profile_")
    b = sub.add_parser("breakpoint", help="find the highest rate the server keeps up with, with its interval")
    _server_args(b), _load_args(b, exclude=_SEARCH_OWNS), _prefill_args(b), _common(b), add_cluster_args(b)
    add_arguments(b.add_argument_group("pass criteria of a probe"), BreakpointCriteria, dest_prefix="criteria_")
    add_arguments(b.add_argument_group("search"), BreakpointParams, dest_prefix="search_", exclude=("seed", "seed_arg"))
    add_arguments(b.add_argument_group("validity thresholds (see perflab.config.ValidityThresholds)"),
                  ValidityThresholds, dest_prefix="validity_", flag_prefix="--validity-")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    f = sub.add_parser("prefill", help="fill a data directory in-process (deterministic)")
    f.add_argument("dir")
    _prefill_args(f, flags={"keys": "--keys"})
    f.add_argument("--backend", default="lsm", help="lsm or rocksdb (default lsm)")
    i = sub.add_parser("inspect", help="describe a data directory (SSTables, sizes, key range)")
    i.add_argument("dir")
    ru = sub.add_parser("runs", help="list recorded runs")
    ru.add_argument("--data")
    ru.add_argument("--last", type=int, default=30)
    ix = sub.add_parser("index", help="rebuild the DuckDB index of runs; optionally run SQL on it")
    ix.add_argument("--data")
    ix.add_argument("sql", nargs="?")
    h = sub.add_parser("host", help="does this machine keep one speed? time a fixed loop on every CPU for a while")
    h.add_argument("--seconds", type=float, default=30.0, help="how long to survey (default 30)")
    h.add_argument("--every", type=float, default=0.5, help="one calibration every this many seconds (default 0.5)")
    h.add_argument("--sample", type=float, default=0.1, help="seconds each calibration times the loop (default 0.1)")
    h.add_argument("--json", help="also write the summary and every calibration to this file")
    hs = sub.add_parser("hosts", help="the hosts of a cluster: roles, CPUs, versions, clock offsets, leases")
    _host_args(hs, only=("cluster",))
    from .bench import add_parser as add_bench
    add_bench(sub)
    sub.add_parser("report", help="run the notebooks and export the HTML report (see `perflab report --help`)",
                   add_help=False)
    ab = sub.add_parser("ab", help="did my change help? two servers, configurations or commits measured interleaved, "
                        "with a paired verdict")
    _ab_args(ab)
    cp = sub.add_parser("compare", help="two runs, or two report folders, side by side on one HTML page")
    cp.add_argument("a", help="A, the base: a run directory or run id, or a report folder; or an A/B run alone "
                    "(perflab ab), whose two sides are compared")
    cp.add_argument("b", nargs="?", help="B, compared against A: the same kind as A")
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
    if a.cmd == "prefill" and a.prefill_keys is None:
        parser.error("prefill: --keys N is required")
    from .bench import main as cmd_bench
    handlers = {"run": cmd_run, "profile": cmd_profile, "breakpoint": cmd_breakpoint, "prefill": cmd_prefill,
                "inspect": cmd_inspect, "runs": cmd_runs, "index": cmd_index, "bench": cmd_bench,
                "compare": cmd_compare, "host": cmd_host, "hosts": cmd_hosts, "ab": cmd_ab}
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
    except RunInterrupted as e:
        print(f"interrupted: {e}", file=sys.stderr)
        return 128 + signal.SIGTERM
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
