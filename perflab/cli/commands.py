"""What each subcommand does: it builds its parameters from the options (:mod:`.options`), calls the library
and prints what came out (the run's console output, its validity, where it is recorded)."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sys
import warnings
from pathlib import Path

import pandas as pd

from .. import Commit, compare_ab, find_breakpoint, hostspeed, paths, run_experiment
from ..analysis import breakpoints
from ..analysis.ab import lines as ab_lines
from ..analysis.cluster import describe_consistency
from ..analysis.history import history_lines
from ..analysis.regress import bisect_lines, gate_lines
from ..bench import main as bench_main
from ..commits.git import toplevel
from ..config import (
    ABParams,
    BreakpointCriteria,
    BreakpointParams,
    ForeignServer,
    LoadParams,
    ProfileParams,
    ServerConfig,
    ValidityThresholds,
)
from ..config.fields import cli_flag, from_arguments
from ..config.hosts import TLS_ENV, HostOptions
from ..config.measured import Given, resolve
from ..config.project import Project
from ..config.regress import AtRate, BisectParams, GateParams, HistoryParams, RepoParams
from ..config.version import Version
from ..core.session import SessionOptions
from ..errors import PerflabError
from ..hosts import daemons, tls
from ..hosts.inventory import check_versions, survey, table
from ..hosts.leases import held
from ..hosts.pool import connect
from ..lab import second_opinion
from ..profiling import bridge
from ..records import query, recorded, update_index
from ..regress import Found, run_bisect, run_gate, run_history
from ..regress.history import Found as HistoryFound
from ..report import markdown
from ..report.batch import run_plan
from ..report.compare import compare
from ..report.plans import BUILTIN as PLANS
from ..report.plans import load_plan
from ..report.regress import bisect_page, write_gate_files
from . import options


def _print_validity(v) -> None:
    if v is None:
        return
    print(f"validity: {v.level}")
    for r in v.reasons:
        print(f"  - {r}")


def cmd_run(a, profile: ProfileParams | None = None) -> int:
    target = options.target(a)
    cluster = {}
    if options.is_cluster(a):  # the cluster's flags (faults, checker, profiled nodes) given
        what, consistency = options.cluster_run(a)
        cluster = dict(
            faults=what.faults,
            consistency=consistency,
            profile_nodes=what.profile_nodes,
            keys=what.keys,
            status_bin=what.status_bin,
        )
    res = run_experiment(
        target,
        options.load(a),
        profile=profile,
        prefill=options.prefill(a),
        name=a.name,
        fill=options.fill(a),
        session=options.session(a),
        **cluster,
    )
    print(res.load.console, end="")
    print()
    if options.is_cluster(a):
        print_cluster_result(res)
    _print_validity(res.validity)
    print(f"run {res.run.id}: {res.run.dir}")
    if res.profile is not None:
        print(f"profile: {res.profile.html_path}")
        cats = res.profile.categories()
        for c, s in zip(cats["category"], cats["share"]):
            if s > 0:
                print(f"  {c:24s} {s:6.1%}")
    return 0


def cmd_profile(a) -> int:
    return cmd_run(a, options.profile(a))


def cmd_breakpoint(a) -> int:
    crit = from_arguments(BreakpointCriteria, a, "criteria_")
    bp = from_arguments(BreakpointParams, a, "search_")
    thresholds = from_arguments(ValidityThresholds, a, "validity_")
    wrk2 = second_opinion.choose(a.second_opinion)  # a wrong path is an error before any load
    session = options.session(a, thresholds=thresholds)
    target, load, prefill, fill = options.target(a), options.load(a), options.prefill(a), options.fill(a)
    res = find_breakpoint(
        target, load, crit, bp, name=a.name, prefill=prefill, fill=fill, progress=not a.quiet, session=session
    )
    cols = [
        c
        for c in ("probe", "phase", "rate", "passed", "validity", "p99_ms", "host_slowdown", "reason")
        if c in res.table
    ]
    if res.ramp:
        print(f"ramp: {res.ramp['reason']}")
    if len(res.table):
        print(res.table[cols].to_string(index=False))
    print(
        f"\nbreakpoint: {breakpoints.estimate(res)}; probes' validity: {res.validity}; {res.stop_reason}; "
        f"{res.seconds:.0f} s"
    )
    if breakpoints.host_note(res):
        print(breakpoints.host_note(res))
    if res.conditions:
        print(f"held in {res.params.sustain:g} s windows, {breakpoints.conditions_note(res.conditions)}")
    if wrk2 is not None and res.rate is not None and res.holds:
        print(f"asking real wrk2 ({wrk2}) to hold {res.rate:,.0f}/s from fresh starts ...", flush=True)
        said = second_opinion.ask(target, load, res, wrk2, fill=fill, prefill=prefill, session=session)
        print(said.words())
        if not said.agrees:
            print(f"breakpoint, both tools: {breakpoints.estimate(res)}")
    print(f"run {res.run_id}: {res.run.dir}")
    return 0 if res.rate is not None else 1


def cmd_prefill(a) -> int:
    p = options.prefill(a)
    out = bridge.prefill(a.dir, p.keys, p.value_size, p.seed, p.key_prefix, backend=a.backend)
    print(json.dumps(out, indent=2))
    return 0


def cmd_inspect(a) -> int:
    print(json.dumps(bridge.inspect(a.dir), indent=2))
    return 0


def cmd_runs(a):
    given = Version(commit=a.commit, label=a.label)  # checked before the runs are read
    df = recorded("runs", a.data, include_failed=True, include_invalid=True, commit=given.commit, label=given.label)
    if df.empty:
        print("no runs recorded" + (" of that version" if a.commit or a.label else ""))
        return 0
    df = df.assign(version_commit=df["version_commit"].map(lambda c: c[:10] if isinstance(c, str) else c))
    cols = [
        c
        for c in (
            "run_id",
            "kind",
            "status",
            "validity",
            "version_commit",
            "version_label",
            "server_mode",
            "server_backend",
            "load_rate",
            "result_achieved_rate",
            "result_p99_ms",
            "result_breakpoint_rate",
            "result_verdict",
            "result_ratio",
            "result_conclusion",
        )
        if c in df
    ]
    with pd.option_context("display.width", 220, "display.max_columns", 20):
        print(df[cols].tail(a.last).to_string(index=False))
    return 0


def cmd_index(a):
    path = update_index(a.data, full=a.full)
    print(f"index: {path}")
    if a.sql:
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(query(a.sql, a.data, update=False).to_string(index=False))
    return 0


def cmd_host(a):
    hostspeed.check_survey(a.seconds, a.every, a.sample, prefix="--")  # before the banner
    print(
        f"timing a fixed loop ({hostspeed.LOOP} iterations) on CPUs {hostspeed.cpus()} for {a.sample:g} s every "
        f"{a.every:g} s, {a.seconds:g} s in all; keep the machine otherwise idle",
        flush=True,
    )
    cals = hostspeed.survey(a.seconds, a.every, a.sample)
    summary = hostspeed.summarise(cals)
    print(f"{'cpu':>4} {'n':>4} {'fastest us':>11} {'median us':>10} {'slowest us':>11} {'spread':>7} {'slow':>6}")
    for c, r in summary["cpus"].items():
        print(
            f"{c:>4} {r['n']:>4} {r['fastest_us']:>11.0f} {r['median_us']:>10.0f} {r['slowest_us']:>11.0f} "
            f"{r['spread']:>6.2f}x {r['slow_share']:>6.0%}"
        )
    print(hostspeed.describe(summary))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(
                {
                    **summary,
                    "cpus": {str(k): v for k, v in summary["cpus"].items()},
                    "calibrations": [c.to_dict() for c in cals],
                },
                f,
                indent=2,
            )
        print(f"calibrations: {a.json}")
    return 0


def cmd_hosts(a) -> int:
    h = HostOptions(scheduler=a.hosts_scheduler, tls=a.hosts_tls)
    pool = connect(h.scheduler, h.tls)
    hosts = survey(pool)
    print(f"{pool.describe()}" + (f", dashboard {pool.dashboard_link}" if pool.dashboard_link else ""))
    print(table(hosts))
    busy = held(pool)
    for h, v in sorted(busy.items()):
        print(f"{h}: leased by {v['what']}")
    try:
        check_versions(hosts)
    except PerflabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_markdown(a) -> int:
    doc = markdown.write(a.report, a.out, language=a.lang)
    print(doc.path)
    print(
        f"{len(doc.figures)} figures, {len(doc.flamegraphs)} flame graph files beside it"
        + (f"; {len(doc.missing)} flame graphs no longer on disk" if doc.missing else ""),
        file=sys.stderr,
    )
    return 0


def cmd_report(a) -> int:
    """``perflab report`` (:func:`perflab.cli._report_args`): a plan of notebooks run and the HTML report written;
    1 when a notebook failed (after everything else is written), 2 for bad arguments or a missing build."""
    if a.list:
        for name, plan in PLANS.items():
            print(f"{name}: {plan.description}")
            for s in plan.notebooks:
                print(f"  {s.notebook} {s.parameters}")
        return 0
    plan = load_plan(a.plan)
    if a.only:
        plan = plan.only(a.only.split(","))
    if a.lang:
        plan = dataclasses.replace(plan, language=a.lang)
    plan = plan.aimed(options.report_measured(a), every=a.every or bool(a.only), language=a.lang)
    if a.cell_timeout is not None and a.cell_timeout <= 0:
        raise ValueError(f"--cell-timeout must be > 0, got {a.cell_timeout}")
    if a.hosts_scheduler is None and a.hosts_generators is not None:
        raise ValueError("--generators goes with --scheduler (on this machine there is one host)")
    hosts = (
        HostOptions(scheduler=a.hosts_scheduler, generators=a.hosts_generators, tls=a.hosts_tls).given()
        if a.hosts_scheduler is not None
        else {}
    )
    if a.data_dir:
        os.environ["PERFLAB_DATA"] = str(Path(a.data_dir).resolve())  # the kernels inherit it
    if a.report_dir:
        os.environ["PERFLAB_REPORT"] = str(Path(a.report_dir).resolve())
    try:
        paths.server_install_dir()
        paths.loadgen_binary()
        if hosts:
            connect(hosts["scheduler"], hosts.get("tls"))  # an unreachable scheduler: an error before any notebook
    except PerflabError as e:  # nothing could run: a bad command line's status, not a failed report's
        print(f"error: {e}", file=sys.stderr)
        return 2
    report, folder = run_plan(
        plan,
        progress=not a.no_progress,
        browser=a.browser,
        cell_timeout=a.cell_timeout,
        command="python -m perflab " + shlex.join(a.argv),
        hosts=hosts,
    )
    print(f"{folder / 'index.html'}")
    if report.failed:
        names = ", ".join(f"{n.notebook} ({n.error or n.export_error})" for n in report.failed)
        print(f"error: {len(report.failed)} of {len(report.notebooks)} notebooks failed: {names}", file=sys.stderr)
        return 1
    print(
        f"report written in {report.seconds:.0f} s: {folder} (also {Path(folder).parent / 'latest'})", file=sys.stderr
    )
    return 0


def cmd_scheduler(a) -> int:
    """Never returns: the process becomes the scheduler."""
    tls_dir = a.tls or os.environ.get(TLS_ENV) or None
    cmd = daemons.scheduler_command(a.host, a.port, tls_dir, dashboard=not a.no_dashboard)
    risk = daemons.scheduler_warning(a.host, a.port, tls_dir)
    if risk is not None:
        print(f"warning: {risk}", file=sys.stderr)
    print(f"scheduler at {'tls' if tls_dir else 'tcp'}://{a.host}:{a.port}", file=sys.stderr)
    daemons.become(cmd)
    return 0


def cmd_worker(a) -> int:
    """Never returns: the process becomes the worker."""
    tls_dir = a.tls or (os.environ.get(TLS_ENV) if a.scheduler.startswith("tls://") else None) or None
    roles = tuple(r.strip() for r in a.roles.split(",") if r.strip())
    daemons.become(
        daemons.worker_command(
            a.scheduler, a.name, roles, a.host, tls_dir, a.nthreads, a.local_directory, a.death_timeout
        )
    )
    return 0


def cmd_certs(a) -> int:
    made = tls.make(a.dir, a.days)
    for f in made:
        print(f)
    print(
        f"copy {', '.join(tls.FILES)} to every host (the scheduler's, the workers', the coordinators'); keep "
        f"{tls.CA_KEY} apart (it makes certificates)",
        file=sys.stderr,
    )
    return 0


def cmd_compare(a):
    c = compare(a.a, a.b, output=a.output, data_root=a.data)
    print(c.path)
    return 0


def _ab_side(a, side: str):
    """Side ``side`` ("a" or "b") from the shared and the side's own flags (the side's over the shared): a Commit,
    your server or a built-in configuration, resolved as every command resolves what it measures
    (:func:`perflab.config.measured.resolve`); and the project file that declared it (``None``: none did)."""
    S = side.upper()

    def merged(cls, prefix: str) -> dict:
        out = {}
        for f in dataclasses.fields(cls):
            v = getattr(a, f"{side}_{prefix}{f.name}", None)
            v = getattr(a, prefix + f.name, None) if v is None else v
            if v is not None:
                out[f.name] = tuple(v) if isinstance(v, list) else v
        return out

    built, foreign = merged(ServerConfig, "server_"), merged(ForeignServer, "foreign_")
    commit = getattr(a, f"{side}_commit")
    yours = foreign.get("command") is not None or foreign.get("url") is not None
    declared = getattr(a, f"{side}_project", None)
    own = any(getattr(a, f"{side}_server_{f.name}", None) is not None for f in dataclasses.fields(ServerConfig))
    if declared is not None and (commit is not None or yours):
        raise ValueError(
            f"--{side}-project and --{side}-commit/--{side}-server-cmd/--{side}-url: give one of them for side {S}"
        )
    if commit is not None and yours:
        raise ValueError(f"--{side}-commit and --{side}-server-cmd/--{side}-url: give one of them for side {S}")
    # a side that names nothing takes the shared project file (--project, $PERFLAB_PROJECT or ./perflab.toml)
    if declared is not None:
        proj = Project.load(declared)
    elif commit is None and not yours and not own:
        proj = options.project(a)
    else:
        proj = None
    if yours or proj is not None:
        given = [cli_flag(f) for f in dataclasses.fields(ServerConfig) if f.name in built and cli_flag(f)]
        if given or getattr(a, "prefill_keys", None) is not None:
            given += ["--prefill"] if getattr(a, "prefill_keys", None) is not None else []
            raise ValueError(
                f"{', '.join(given)}: option{'s' if len(given) > 1 else ''} of the built-in server; side {S} "
                f"is your server, which takes its own settings (put them in its command)"
            )
    elif foreign:
        raise ValueError(
            f"{', '.join('--' + k.replace('_', '-') for k in foreign)}: only with --{side}-server-cmd or "
            f"--{side}-url (your own server)"
        )
    try:
        m = resolve(
            Given(
                project=str(proj.path) if proj is not None else None,
                no_project=proj is None,
                yours=foreign if yours else {},
                builtin=built if proj is None and not yours else {},
            ),
            kind="server",
        )
    except ValueError as e:
        raise ValueError(f"side {S}: {e}") from None
    return (Commit(commit, m.target) if commit is not None else m.target), m.project


def _ab_load(a, projects: list[Project]) -> LoadParams:
    """The load of ``perflab ab``: with the sides' ``projects``, the API their files declare comes first in the
    script's arguments (both must declare the same API: one load is sent to both)."""
    apis = {p.script_args for p in projects}
    if len(apis) > 1:
        raise ValueError(
            "--a-project/--b-project: the two files declare different APIs ([api] path/param), and one "
            "load is sent to both sides"
        )
    return options.load(a, api=apis.pop() if apis else ())


def cmd_ab(a):
    (sa, pa), (sb, pb) = _ab_side(a, "a"), _ab_side(a, "b")
    load = _ab_load(a, [p for p in (pa, pb) if p is not None])
    ab = from_arguments(ABParams, a, "ab_")
    crit = from_arguments(BreakpointCriteria, a, "criteria_")
    thresholds = from_arguments(ValidityThresholds, a, "validity_")
    rates = [r.strip() for spec in a.ab_rates or () for r in spec.split(",") if r.strip()] or None
    search = None
    if a.breakpoint:
        if rates:
            raise ValueError(
                "-R/--rate: a breakpoint comparison searches the rates itself; give no -R with --breakpoint"
            )
        search = from_arguments(
            BreakpointParams,
            a,
            "search_",
            probe_duration=ab.probe_duration,
            warmup=ab.warmup,
            cooldown=ab.cooldown,
            server_warmup=ab.server_warmup,
        )
    else:
        given = [
            f"--{n.removeprefix('search_').replace('_', '-')}"
            for n, v in vars(a).items()
            if n.startswith("search_") and v is not None
        ]
        if given:
            raise ValueError(f"{', '.join(given)}: only with --breakpoint")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = compare_ab(
                sa,
                sb,
                load,
                rates=rates,
                params=ab,
                criteria=crit,
                search=search,
                prefill=options.prefill(a),
                fill=options.fill(a),
                name=a.name,
                progress=not a.quiet,
                session=SessionOptions(data_root=a.data, placement=a.placement, thresholds=thresholds),
            )
        finally:
            for w in caught:
                print(f"warning: {w.message}", file=sys.stderr)
    for line in ab_lines(res):
        print(line)
    print(f"run {res.run_id}: {res.run.dir}")
    return 0


def _regress(a, params_cls) -> dict:
    """What ``perflab gate`` and ``perflab bisect`` share: their keyword arguments from the options."""
    load = from_arguments(
        LoadParams,
        a,
        "load_",
        script_args=a.script_args or None,
        tool="wrk2" if getattr(a, "load_wrk_binary", None) else None,
    )
    return dict(
        load=load,
        params=from_arguments(params_cls, a, "ab_"),
        repo=_repo(a),
        server=from_arguments(ServerConfig, a, "server_"),
        rate=from_arguments(AtRate, a, "regress_").rate,
        criteria=from_arguments(BreakpointCriteria, a, "criteria_"),
        prefill=options.prefill(a),
        fill=options.fill(a),
        name=a.name,
        progress=not a.quiet,
        session=SessionOptions(
            data_root=a.data, placement=a.placement, thresholds=from_arguments(ValidityThresholds, a, "validity_")
        ),
    )


def _repo(a) -> RepoParams:
    """Whose commits: ``--repo`` (with ``--project`` relative to it), or ``--project FILE`` alone: the repository
    that file is in, its commits run as each one's copy of the file declares."""
    given = getattr(a, "repo_project", None)
    if getattr(a, "repo_repo", None) is None and given is not None and Path(given).is_file():
        top = toplevel(Path(given).resolve().parent)
        if top is None:
            raise ValueError(f"--project: {given} is in no git repository, so it has no commits to compare")
        return from_arguments(
            RepoParams, a, "repo_", repo=str(top), project=os.path.relpath(Path(given).resolve(), top)
        )
    return from_arguments(RepoParams, a, "repo_")


def cmd_gate(a) -> int:
    """Exit 0 (no regression beyond the margin), 1 (a regression, proven), 2 (undecided within the budget) or 3
    (could not measure: bad input included, so a CI job never reads a typo as "undecided")."""
    try:
        res = run_gate(a.base, a.head, **_regress(a, GateParams))
    except (ValueError, PerflabError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 3
    files = write_gate_files(res, a.out)
    for line in gate_lines(res):
        print(line)
    print(f"files: {', '.join(str(f) for f in files)}")
    print(f"run {res.run_id}: {res.run.dir}")
    return res.exit_code


def cmd_bisect(a) -> int:
    """Exit 0 with an answer (a first slower commit, no regression, or GOOD slower than BAD), 2 when it cannot
    tell at this precision."""
    kw = _regress(a, BisectParams)
    if a.breakpoint:
        if kw["rate"] is not None:
            raise ValueError(
                "-R/--rate: a breakpoint comparison searches the rates itself; give no -R with --breakpoint"
            )
        p = kw["params"]
        kw["search_params"] = from_arguments(
            BreakpointParams,
            a,
            "search_",
            probe_duration=p.probe_duration,
            warmup=p.warmup,
            cooldown=p.cooldown,
            server_warmup=p.server_warmup,
        )
    else:
        given = [
            f"--{n.removeprefix('search_').replace('_', '-')}"
            for n, v in vars(a).items()
            if n.startswith("search_") and v is not None
        ]
        if given:
            raise ValueError(f"{', '.join(given)}: only with --breakpoint")
    res = run_bisect(a.good, a.bad, **kw)
    for line in bisect_lines(res):
        print(line)
    print(f"page: {bisect_page(res)}")
    print(f"run {res.run_id}: {res.run.dir}")
    return 2 if res.found is Found.CANNOT_TELL else 0


def cmd_history(a) -> int:
    """Exit 0 with an answer (regressions confirmed or none), 2 when too few commits could be measured."""
    kw = _regress(a, HistoryParams)
    res = run_history(a.good, a.bad, **kw)
    for line in history_lines(res):
        print(line)
    print(f"run {res.run_id}: {res.run.dir}")
    return 2 if res.found is HistoryFound.TOO_FEW else 0


def cmd_bench(a) -> int:
    return bench_main(a)


def print_cluster_result(res) -> None:
    """What a cluster run adds to the console: entry nodes, answers, faults, recovery, consistency, keys."""
    for e in res.entries:
        print(
            f"entry node {e['node']} ({e['url']}): achieved {e['achieved_rate']:,.1f}/s of {e['offered_rate']:,.1f}/s, "
            f"{e['errors']} errors, statuses {e['status_codes']}"
        )
    a = res.answers
    print(
        f"answers: {a['2xx/3xx']:,} 2xx/3xx, {a['404']:,} 404, {a['4xx']:,} other 4xx, {a['504']:,} 504, "
        f"{a['5xx']:,} other 5xx; errors: {a['timeout']:,} timeouts, {a['connect']:,} connect, {a['read']:,} read"
    )
    for f in res.faults:
        print(
            f"fault {f['fault']!r}: {f['action']} node {f['node']} at {f['at_s']:g} s"
            + (f" (took {f['dur_us'] / 1e6:.2f} s)" if f["ts_us"] is not None else "")
            + (f" FAILED: {f['error']}" if f["error"] else "")
        )
    for r in res.recovery:
        when = f"{r['recovery_s']:.1f} s after it" if r["recovery_s"] is not None else "not within the window"
        print(f"  clients served as before {r['fault']!r}: {when}")
    if res.consistency is not None:
        print(describe_consistency(res.consistency))
    for i, rec in sorted(res.node_profiles.items()):
        for ev, prof in rec.profiles.items():
            cats = prof.categories()
            top = ", ".join(f"{c} {v:.0%}" for c, v in zip(cats["category"], cats["share"]) if v >= 0.05)
            print(
                f"profile of node {i} ({ev}, {prof.samples:,} samples): {prof.html_path or prof.collapsed_path}"
                + (f"\n  {top}" if top else "")
            )
    for i, entry in sorted((res.run.results.get("profiles") or {}).items()):
        if "unavailable" in entry:
            print(f"no profile of node {i}: {entry['unavailable']}")
    if res.distribution is not None:
        d = res.distribution
        counts = {"owners": d.owners, "replicas": d.replicas, "stored": d.stored}
        print(f"keys per node ({d.keys:,} keys):")
        for what, source in d.sources.items():
            cv = d.cvs()[what]
            print(f"  {what} {counts[what]}" + (f" (CV {cv:.3f})" if cv is not None else "") + f", from {source}")
        if d.note:
            print(f"  ({d.note})")
        if d.warning():
            print(f"  warning: {d.warning()}")
