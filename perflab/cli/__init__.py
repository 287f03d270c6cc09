"""``python -m perflab`` (also the ``perflab`` script): the library's main calls from a shell.

Subcommands: ``run`` (one experiment; ``--nodes N``: a cluster), ``profile`` (a run with a profile),
``breakpoint``, ``ab`` (two servers, configurations or commits measured interleaved, with a paired verdict),
``gate`` (may a pull request go in? exit 0/1/2/3), ``bisect`` (which commit made the server slower?),
``history`` (a metric across commits, its change points checked),
``prefill``, ``inspect``, ``host`` (does the machine keep one speed?), ``hosts`` (a scheduler's hosts),
``scheduler``, ``worker`` and ``certs`` (several machines' hosts, with TLS: docs/hosts.md),
``runs`` (recorded runs), ``index`` (bring the DuckDB index up to date, optionally query it), ``bench`` (the server's
standard benchmark), ``compare`` (two runs or two reports side by side), ``report`` (run a plan of notebooks and
write the HTML report: :mod:`perflab.report`), ``markdown`` (a report as Markdown to hand in:
:mod:`perflab.report.markdown`).

Every parameter option is derived from the fields of the parameter classes (:mod:`.options`), so the
command line and Python give the same errors; :mod:`.commands` does what each subcommand says.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from .. import i18n, interrupt
from ..bench import add_parser as add_bench
from ..children import sigterm_as_exception
from ..config import (
    ABParams,
    BreakpointCriteria,
    BreakpointParams,
    ForeignServer,
    ProfileParams,
    ServerConfig,
    ValidityThresholds,
)
from ..config.fields import add_arguments
from ..config.hosts import HostOptions
from ..config.project import PROJECT_ENV
from ..config.regress import AtRate, BisectParams, GateParams, HistoryParams, RepoParams
from ..errors import PerflabError, RunInterrupted
from ..hosts import daemons, tls
from ..report.plans import BUILTIN as PLANS
from . import commands, options

#: ProfileParams fields left at their defaults on the command line (names taken by the load's options)
_PROFILE_HIDDEN = ("threads", "include", "exclude", "jstackdepth", "fallback")
#: ABParams and BreakpointParams fields of the same name: ``perflab ab`` takes them once (ABParams')
_AB_SHARED = ("probe_duration", "warmup", "cooldown", "server_warmup", "seed", "seed_arg", "restart_server")


def _measuring(p: argparse.ArgumentParser, load_exclude: tuple[str, ...] = ()) -> None:
    options.server_args(p)
    options.load_args(p, exclude=load_exclude)
    options.prefill_args(p)
    options.common_args(p)
    options.version_args(p)


def _validity(p: argparse.ArgumentParser) -> None:
    add_arguments(
        p.add_argument_group("validity thresholds (see perflab.config.ValidityThresholds)"),
        ValidityThresholds,
        dest_prefix="validity_",
        flag_prefix="--validity-",
    )


def _ab_args(p: argparse.ArgumentParser) -> None:
    options.server_args(p)
    for side in ("a", "b"):
        S = side.upper()
        g = p.add_argument_group(f"side {S} only (any built-in server flag as --{side}-FLAG overrides the shared one)")
        g.add_argument(
            f"--{side}-commit",
            metavar="REV",
            help=f"{S} is the built-in server at this git commit, built "
            "in a directory of its own (the working tree is never touched)",
        )
        g.add_argument(
            f"--{side}-project",
            metavar="FILE",
            help=f"{S} is the server a perflab.toml declares (a course "
            "student's stage, another student's, your own server), named by its label",
        )
        add_arguments(g, ForeignServer, dest_prefix=f"{side}_foreign_", flag_prefix=f"--{side}-")
        add_arguments(
            g, ServerConfig, exclude=("host", "port"), dest_prefix=f"{side}_server_", flag_prefix=f"--{side}-"
        )
    options.load_args(p, exclude=options.SEARCH_OWNS)
    p.add_argument(
        "-R",
        "--rate",
        dest="ab_rates",
        action="append",
        metavar="RATE[,RATE...]",
        help="offered rate(s) to compare at (repeatable; default: the load's rate, 1000)",
    )
    add_arguments(p.add_argument_group("comparison (interleaved pairs and the stop rule)"), ABParams, dest_prefix="ab_")
    add_arguments(
        p.add_argument_group("pass criteria (pass/fail at the SLA; the searches' criteria)"),
        BreakpointCriteria,
        dest_prefix="criteria_",
    )
    g = p.add_argument_group("breakpoint mode: two interleaved searches instead of fixed rates")
    g.add_argument(
        "--breakpoint",
        action="store_true",
        help="compare breakpoints (probes use --probe-duration, --warmup, --cooldown of the comparison)",
    )
    add_arguments(g, BreakpointParams, dest_prefix="search_", exclude=_AB_SHARED)
    _validity(p)
    options.prefill_args(p)
    options.common_args(p, hosts=False)  # both servers and the generator run on this machine (perflab.ab.run)


def _regress_args(p: argparse.ArgumentParser, params, what: str) -> None:
    """``perflab gate`` and ``perflab bisect``: whose commits, the built-in server's flags (the same for every
    commit), the load at one rate, the comparison's parameters with the command's defaults."""
    add_arguments(
        p.add_argument_group("whose commits (default: the built-in server of this checkout)"),
        RepoParams,
        dest_prefix="repo_",
    )
    add_arguments(
        p.add_argument_group("server (the built-in server's flags, the same for every commit)"),
        ServerConfig,
        exclude=options.LAB_SETS + ("install_dir",),
        dest_prefix="server_",
    )
    p.add_argument("--placement", default="shared", help="shared, split or 'server=0;load=1' (default shared)")
    options.load_args(p, exclude=options.SEARCH_OWNS)
    add_arguments(p, AtRate, dest_prefix="regress_")
    add_arguments(
        p.add_argument_group(f"{what}: each comparison (interleaved pairs and the stop rule)"),
        params,
        dest_prefix="ab_",
    )
    add_arguments(
        p.add_argument_group("pass criteria (pass/fail at the SLA; the searches' criteria)"),
        BreakpointCriteria,
        dest_prefix="criteria_",
    )
    _validity(p)
    options.prefill_args(p)
    options.run_args(p)


def _report_args(p: argparse.ArgumentParser) -> None:
    """``perflab report``: a plan of notebooks run with papermill, the HTML report written.

        python -m perflab report                 # the quick plan (what `make report` runs)
        python -m perflab report --plan full     # course-length durations
        python -m perflab report --plan my.json --only 01,02 --report-dir /tmp/r --data-dir /tmp/d

    Prints progress on stderr and the report's path on stdout; exits 1 if any notebook failed (after writing
    everything else), 2 for bad arguments or a missing build."""
    p.add_argument(
        "--plan", default="quick", help=f"a built-in plan ({', '.join(PLANS)}) or a plan JSON file (default: quick)"
    )
    p.add_argument("--only", default="", help="comma-separated notebook names (or prefixes, e.g. 01,02) to run")
    p.add_argument("--report-dir", default=None, help="report root (default: $PERFLAB_REPORT or <repo>/report)")
    p.add_argument("--data-dir", default=None, help="where runs are recorded (default: $PERFLAB_DATA or <repo>/data)")
    b = p.add_mutually_exclusive_group()
    b.add_argument(
        "--browser",
        dest="browser",
        action="store_true",
        default=None,
        help="check every page in headless chromium and take screenshots (default: if chromium is installed)",
    )
    b.add_argument("--no-browser", dest="browser", action="store_false", help="skip the chromium check")
    p.add_argument("--no-progress", action="store_true", help="no per-cell progress bars")
    p.add_argument("--cell-timeout", type=float, default=None, help="seconds a single cell may run (default: no limit)")
    p.add_argument(
        "--project",
        default=None,
        metavar="FILE",
        help=f"your server declared in a perflab.toml (default: ${PROJECT_ENV}, else ./perflab.toml when "
        f"there is one): notebooks that only apply to the built-in server are marked not applicable",
    )
    p.add_argument(
        "--server-cmd",
        default=None,
        metavar="COMMAND",
        help="test your server instead of the built-in one: a command with {port}; notebooks that only "
        "apply to the built-in server are marked not applicable",
    )
    p.add_argument(
        "--ready-path", default=None, help="with --server-cmd: a path that answers once it is up (default: /)"
    )
    p.add_argument(
        "--script-args",
        default=None,
        metavar="ARGS",
        help="with --server-cmd: workload script arguments for your API, e.g. 'path=/kv param=key'",
    )
    p.add_argument(
        "--lang",
        choices=i18n.LANGUAGES,
        default=None,
        help="the language of report.md and the index page (default: the project file's language; a course "
        "server's: ru; else en)",
    )
    p.add_argument(
        "--all",
        dest="every",
        action="store_true",
        help="a course server: every notebook, not only what its stage asks (with --only: implied)",
    )
    p.add_argument("--list", action="store_true", help="list the built-in plans and exit")
    add_arguments(
        p.add_argument_group("hosts: run the notebooks side by side on a scheduler's disjoint host sets"),
        HostOptions,
        exclude=("server_host", "lease_timeout"),
        dest_prefix="hosts_",
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="perflab",
        description="perflab: fixed-rate loads, profiles, breakpoints and records for the Java key-value server.",
    )
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    r = sub.add_parser(
        "run", help="start a server (or --nodes N: a cluster), (prefill,) hold one fixed-rate load, record it"
    )
    _measuring(r)
    options.cluster_args(r, run=True)
    pr = sub.add_parser("profile", help="like run, with async-profiler over the measured window")
    _measuring(pr)
    options.cluster_args(pr, run=True)
    add_arguments(pr.add_argument_group("profile"), ProfileParams, exclude=_PROFILE_HIDDEN, dest_prefix="profile_")
    b = sub.add_parser("breakpoint", help="find the highest rate the server keeps up with, with its interval")
    _measuring(b, load_exclude=options.SEARCH_OWNS)
    options.cluster_args(b)
    add_arguments(b.add_argument_group("pass criteria of a probe"), BreakpointCriteria, dest_prefix="criteria_")
    add_arguments(b.add_argument_group("search"), BreakpointParams, dest_prefix="search_", exclude=("seed", "seed_arg"))
    b.add_argument(
        "--second-opinion",
        metavar="WRK2|auto|none",
        default="auto",
        help="a real wrk2 binary that runs the held number again, 3 times, each on a freshly started server "
        "(its console beside perflab-load's); auto (default): $WRK2, else wrk2 on the PATH, else none; "
        "none: do not ask",
    )
    _validity(b)
    f = sub.add_parser("prefill", help="fill a data directory in-process (deterministic)")
    f.add_argument("dir")
    options.prefill_args(f, flags={"keys": "--keys"}, fill=False)
    f.add_argument("--backend", default="lsm", help="lsm or rocksdb (default lsm)")
    i = sub.add_parser("inspect", help="describe a data directory (SSTables, sizes, key range)")
    i.add_argument("dir")
    ru = sub.add_parser("runs", help="list recorded runs")
    ru.add_argument("--data")
    ru.add_argument("--last", type=int, default=30)
    ru.add_argument("--commit", metavar="SHA", help="only runs of the server at this commit (a hash or its prefix)")
    ru.add_argument("--label", help="only runs of the server with this version label (--version-label)")
    ix = sub.add_parser(
        "index",
        help="bring the DuckDB index of runs up to date (only new or changed runs are read); optionally run SQL on it",
    )
    ix.add_argument("--data")
    ix.add_argument("--full", action="store_true", help="build the index afresh from every run")
    ix.add_argument("sql", nargs="?")
    h = sub.add_parser("host", help="does this machine keep one speed? time a fixed loop on every CPU for a while")
    h.add_argument("--seconds", type=float, default=30.0, help="how long to survey (default 30)")
    h.add_argument("--every", type=float, default=0.5, help="one calibration every this many seconds (default 0.5)")
    h.add_argument("--sample", type=float, default=0.1, help="seconds each calibration times the loop (default 0.1)")
    h.add_argument("--json", help="also write the summary and every calibration to this file")
    hs = sub.add_parser("hosts", help="the hosts of a scheduler: roles, CPUs, versions, clock offsets, leases")
    options.host_args(hs, exclude=("generators", "server_host", "lease_timeout"))
    sc = sub.add_parser("scheduler", help="start the Dask scheduler of several machines' hosts (docs/hosts.md)")
    sc.add_argument(
        "--host", required=True, help="the address it listens on (the hosts and coordinators reach it there)"
    )
    sc.add_argument("--port", type=int, default=daemons.PORT, help=f"its port (default {daemons.PORT})")
    sc.add_argument(
        "--tls",
        metavar="DIR",
        help="TLS with the certificates `perflab certs` made (the hosts then join tls://HOST:PORT)",
    )
    sc.add_argument("--no-dashboard", action="store_true", help="serve no dashboard (it needs bokeh anyway)")
    wk = sub.add_parser(
        "worker", help="start a host: a Dask worker with its roles, joining a scheduler (docs/hosts.md)"
    )
    wk.add_argument("scheduler", metavar="ADDRESS", help="the scheduler, tls://HOST:8786 (or tcp://)")
    wk.add_argument("--name", required=True, help="the host's name (--server-host, --generators name it)")
    wk.add_argument("--roles", required=True, metavar="ROLES", help="server, generator, or server,generator")
    wk.add_argument("--host", help="the address it listens on (default: the one Dask picks)")
    wk.add_argument("--tls", metavar="DIR", help="the certificates `perflab certs` made (for a tls:// scheduler)")
    wk.add_argument(
        "--nthreads",
        type=int,
        default=daemons.NTHREADS,
        help=f"threads for the agents' calls (default {daemons.NTHREADS})",
    )
    wk.add_argument("--local-directory", metavar="DIR", help="Dask's scratch directory (default: Dask's)")
    wk.add_argument(
        "--death-timeout",
        type=float,
        default=daemons.DEATH_TIMEOUT_S,
        help=f"seconds without its scheduler before it exits (default {daemons.DEATH_TIMEOUT_S})",
    )
    ce = sub.add_parser(
        "certs",
        help="make the TLS certificates of the hosts once: a certificate authority and "
        "the certificate every member shows (docs/hosts.md)",
    )
    ce.add_argument("dir", metavar="DIR", help="where to write ca.pem, ca.key, cert.pem, key.pem (made, mode 700)")
    ce.add_argument("--days", type=int, default=tls.DAYS, help=f"how long they are valid (default {tls.DAYS})")
    add_bench(sub)
    _report_args(
        sub.add_parser(
            "report",
            prog="python -m perflab report",
            help="run the notebooks and export the HTML report (see `perflab report --help`)",
            description="Run the lab's notebooks with papermill and export an offline HTML report.",
        )
    )
    ab = sub.add_parser(
        "ab",
        help="did my change help? two servers, configurations or commits measured interleaved, with a paired verdict",
    )
    _ab_args(ab)
    g = sub.add_parser(
        "gate",
        help="may a pull request go in? HEAD against BASE, interleaved; exit 0 no regression "
        "beyond the margin, 1 a regression (proven), 2 undecided within the budget, 3 could not measure",
    )
    g.add_argument("base", metavar="BASE", help="the base commit (any revision git resolves)")
    g.add_argument("head", metavar="HEAD", help="the commit checked against it")
    _regress_args(g, GateParams, "the gate")
    g.add_argument(
        "--out",
        metavar="DIR",
        help="also write gate.md (for the pull request), gate.xml (JUnit) and "
        "gate.json here (they are always in the run's directory)",
    )
    bs = sub.add_parser(
        "bisect",
        help="which commit made the server slower? the first commit after GOOD up to BAD "
        "slower than GOOD beyond the margin, every step interleaved against GOOD; exit 0 answered, "
        "2 cannot tell at this precision",
    )
    bs.add_argument("good", metavar="GOOD", help="a commit whose server is as fast as it should be")
    bs.add_argument(
        "bad",
        metavar="BAD",
        help="a later commit whose server is slower (BAD's first-parent history from GOOD is searched)",
    )
    _regress_args(bs, BisectParams, "bisect")
    gb = bs.add_argument_group("breakpoint mode: each step compares breakpoints (two interleaved searches)")
    gb.add_argument("--breakpoint", action="store_true", help="slower means a lower breakpoint")
    add_arguments(gb, BreakpointParams, dest_prefix="search_", exclude=_AB_SHARED + ("retries",))
    hi = sub.add_parser(
        "history",
        help="a metric across commits: every commit of GOOD..BAD measured a few times at "
        "one rate (CPU per request, p50, p99 with intervals), the change points of the series, each "
        "checked by an interleaved comparison before it is called a regression",
    )
    hi.add_argument("good", metavar="GOOD", help="the first commit of the range")
    hi.add_argument("bad", metavar="BAD", help="the last (BAD's first-parent history from GOOD is measured)")
    _regress_args(hi, HistoryParams, "history: each commit's probes and each change point's check")
    md = sub.add_parser(
        "markdown",
        help="a report as Markdown to hand in: report.md with its figures (PNG) and flame "
        "graphs beside it, in the course's shape, into a folder of your choosing",
    )
    md.add_argument("report", metavar="REPORT_DIR", help="a report folder `perflab report` wrote (report/latest ...)")
    md.add_argument(
        "--out",
        metavar="DIR",
        help="where to write report.md and its files (default: the report "
        "folder), e.g. src/main/java/ru/vk/itmo/test/<you>/reports/stage6",
    )
    md.add_argument(
        "--lang",
        choices=i18n.LANGUAGES,
        default=None,
        help="the language of report.md (default: the report's own, as `perflab report --lang` chose it)",
    )
    cp = sub.add_parser("compare", help="two runs, or two report folders, side by side on one HTML page")
    cp.add_argument(
        "a",
        help="A, the base: a run directory or run id, or a report folder; or an A/B run alone "
        "(perflab ab), whose two sides are compared",
    )
    cp.add_argument("b", nargs="?", help="B, compared against A: the same kind as A")
    cp.add_argument("-o", "--output", help="the page to write (default: <report root>/compare/<A>-vs-<B>.html)")
    cp.add_argument("--data", help="data root where run ids are looked up (default $PERFLAB_DATA or <repo>/data)")
    return p


HANDLERS = {
    "run": commands.cmd_run,
    "profile": commands.cmd_profile,
    "breakpoint": commands.cmd_breakpoint,
    "prefill": commands.cmd_prefill,
    "inspect": commands.cmd_inspect,
    "runs": commands.cmd_runs,
    "index": commands.cmd_index,
    "bench": commands.cmd_bench,
    "compare": commands.cmd_compare,
    "host": commands.cmd_host,
    "hosts": commands.cmd_hosts,
    "ab": commands.cmd_ab,
    "gate": commands.cmd_gate,
    "bisect": commands.cmd_bisect,
    "history": commands.cmd_history,
    "markdown": commands.cmd_markdown,
    "report": commands.cmd_report,
    "scheduler": commands.cmd_scheduler,
    "worker": commands.cmd_worker,
    "certs": commands.cmd_certs,
}


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed; everything after the first ``--`` is the workload script's arguments, for every
    command that takes them. argparse alone matches a command's positionals once, together: in
    ``bisect GOOD BAD -R 2000 -- keys=10000`` GOOD and BAD take them, and ``keys=10000`` would be refused."""
    if "--" not in argv:
        return parser.parse_args(argv)
    i = argv.index("--")
    a = parser.parse_args(argv[:i])
    if not hasattr(a, "script_args"):
        parser.error(
            f"{a.cmd or 'perflab'}: takes no script arguments, got {' '.join(argv[i + 1 :]) or 'none'} after --"
        )
    a.script_args = [*a.script_args, *argv[i + 1 :]]
    return a


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        interrupt.install()  # the command line's own process (python -m perflab and the script did it first)
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        a = parse(parser, argv)
    except SystemExit as e:
        if argv and argv[0] == "gate" and e.code == 2:
            raise SystemExit(3) from None  # the gate's 2 is "undecided": a bad command line could not measure
        raise
    if not a.cmd:
        parser.print_help()
        return 0
    if a.cmd == "prefill" and a.prefill_keys is None:
        parser.error("prefill: --keys N is required")
    a.argv = argv  # the command line as typed, for what records it (a report's index page)
    return _ended(lambda: HANDLERS[a.cmd](a))


def _ended(command) -> int:
    """A command's exit status, however it ended: its own, 2 for bad input, 1 for perflab's errors, 130 on
    Ctrl-C, 143 on SIGTERM (raised as an exception, so that every ``finally`` stops what it started).

    A Ctrl-C is 130 whatever became of it on its way (:mod:`perflab.interrupt`): one an import swallowed is
    raised before the command starts, one a library turned into another error (Dask's start cut short, a
    ``__set_name__``) or that cut short a step that then failed ends as an interrupt, not as that error."""
    try:
        try:
            interrupt.check()
            with sigterm_as_exception():
                status = command()
            interrupt.check()
            return status
        except BaseException as e:
            if interrupt.received() and not isinstance(e, (KeyboardInterrupt, RunInterrupted, SystemExit)):
                raise KeyboardInterrupt(f"{type(e).__name__}: {e}") from e
            raise
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except PerflabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(f"interrupted (on its way it became {e})" if e.args else "interrupted", file=sys.stderr)
        return 130
    except RunInterrupted as e:
        print(f"interrupted: {e}", file=sys.stderr)
        return 128 + signal.SIGTERM
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        interrupt.delivered()
