"""``python -m perflab report``: run a plan of notebooks and write the HTML lab report.

    python -m perflab report                 # the quick plan (what `make report` runs)
    python -m perflab report --plan full     # course-length durations
    python -m perflab report --plan my.json --only 01,02 --report-dir /tmp/r --data-dir /tmp/d

Prints progress on stderr and the report's path on stdout; exits 1 if any notebook failed (after
writing everything else), 2 for bad arguments or a missing build.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import replace
from pathlib import Path

from .. import i18n, paths
from ..config.fields import add_arguments
from ..config.hosts import HostOptions
from ..config.project import PROJECT_ENV
from ..config.project import find as find_project
from ..errors import NotBuiltError, PerflabError
from ..hosts.pool import connect
from .batch import run_plan
from .plans import BUILTIN, load_plan


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m perflab report",
        description="Run the lab's notebooks with papermill and export an offline HTML report.",
    )
    p.add_argument(
        "--plan", default="quick", help=f"a built-in plan ({', '.join(BUILTIN)}) or a plan JSON file (default: quick)"
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
        "--ready-path", default="/", help="with --server-cmd: a path that answers once it is up (default: /)"
    )
    p.add_argument(
        "--script-args",
        default="",
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
    p.add_argument("--list", action="store_true", help="list the built-in plans and exit")
    add_arguments(
        p.add_argument_group("hosts: run the notebooks side by side on a scheduler's disjoint host sets"),
        HostOptions,
        exclude=("server_host", "lease_timeout"),
        dest_prefix="hosts_",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list:
        for name, plan in BUILTIN.items():
            print(f"{name}: {plan.description}")
            for s in plan.notebooks:
                print(f"  {s.notebook} {s.parameters}")
        return 0
    try:
        plan = load_plan(args.plan)
        if args.only:
            plan = plan.only(args.only.split(","))
        project = find_project(args.project) if not args.server_cmd else None
        if args.server_cmd and args.project:
            raise ValueError("--project and --server-cmd: give one (the project file declares your server's command)")
        if args.server_cmd:
            plan = plan.for_server(args.server_cmd, args.ready_path, tuple(shlex.split(args.script_args)))
        elif args.ready_path != "/" or args.script_args:
            raise ValueError("--ready-path and --script-args go with --server-cmd")
        elif project is not None:
            plan = plan.for_project(project)
        if args.lang:
            plan = replace(plan, language=args.lang)
        if args.cell_timeout is not None and args.cell_timeout <= 0:
            raise ValueError(f"--cell-timeout must be > 0, got {args.cell_timeout}")
        if args.hosts_scheduler is None and args.hosts_generators is not None:
            raise ValueError("--generators goes with --scheduler (on this machine there is one host)")
        hosts = (
            HostOptions(scheduler=args.hosts_scheduler, generators=args.hosts_generators, tls=args.hosts_tls).given()
            if args.hosts_scheduler is not None
            else {}
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.data_dir:
        os.environ["PERFLAB_DATA"] = str(Path(args.data_dir).resolve())  # the kernels inherit it
    if args.report_dir:
        os.environ["PERFLAB_REPORT"] = str(Path(args.report_dir).resolve())
    try:
        paths.server_install_dir()
        paths.loadgen_binary()
    except NotBuiltError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    command = "python -m perflab report " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])
    )
    if hosts:
        try:
            connect(hosts["scheduler"], hosts.get("tls"))  # an unreachable scheduler: an error before any notebook
        except PerflabError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    report, folder = run_plan(
        plan,
        progress=not args.no_progress,
        browser=args.browser,
        cell_timeout=args.cell_timeout,
        command=command.strip(),
        hosts=hosts,
    )
    failed = report.failed
    print(f"{folder / 'index.html'}")
    if failed:
        names = ", ".join(f"{n.notebook} ({n.error or n.export_error})" for n in failed)
        print(f"error: {len(failed)} of {len(report.notebooks)} notebooks failed: {names}", file=sys.stderr)
        return 1
    print(
        f"report written in {report.seconds:.0f} s: {folder} (also {Path(folder).parent / 'latest'})", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
