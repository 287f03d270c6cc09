"""The command line's options, derived from the parameter classes (:mod:`perflab.config`), and the parameter
objects built back from what was given: the direction is one way, flags then options.

Every option group is a class's fields (``add_arguments``), so the command line and Python check a value the
same way and a default or a bound is written once: the built-in server's flags (``ServerConfig``, itself
from the server's ``--options-json``), your server's (``ForeignServer``), the load's (``LoadParams``), the
prefill's, the hosts' (``HostOptions``), a cluster's (``ClusterConfig``, ``ClusterRunParams``,
``ConsistencyParams``). Each group has its own ``dest`` prefix, so no two fields of the same name meet.

What is measured (which server, the project file, a cluster) is not decided here: :func:`given` hands the flags
to :func:`perflab.config.measured.resolve`, the one resolver the notebooks and the report use too.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex

from ..config import (
    ClusterConfig,
    ClusterRunParams,
    ConsistencyParams,
    FillParams,
    ForeignServer,
    HostOptions,
    LoadParams,
    PrefillParams,
    ProfileParams,
    ServerConfig,
)
from ..config.fields import add_arguments, cli_flag, from_arguments
from ..config.measured import Given, Measured, project_of, resolve
from ..config.project import FILENAME, PROJECT_ENV, Project
from ..config.version import Version
from ..core.session import SessionOptions
from ..targets import target_of
from ..workloads import script_args

#: LoadParams fields a search or a comparison sets itself (per probe / for the ramp)
SEARCH_OWNS = ("rate", "duration", "warmup", "rate_steps", "step_duration", "ramp", "ramp_curve", "stop_on_p99")
#: ServerConfig fields the lab sets itself (a node's --cluster and --self-url come with --nodes)
LAB_SETS = ("host", "port", "cluster", "self_url")


# --- groups ----------------------------------------------------------------------------------------------
def server_args(p: argparse.ArgumentParser) -> None:
    add_arguments(
        p.add_argument_group("server (perflab.server.Main flags and the JVM)"),
        ServerConfig,
        exclude=LAB_SETS,
        dest_prefix="server_",
    )
    add_arguments(
        p.add_argument_group("your own server instead of the built-in one"), ForeignServer, dest_prefix="foreign_"
    )
    p.add_argument(
        "--placement",
        default="shared",
        help="shared (server and generator on all CPUs) or split (disjoint CPU sets), or "
        "'server=0;load=1' (default shared)",
    )


def load_args(p: argparse.ArgumentParser, exclude: tuple[str, ...] = ()) -> None:
    g = p.add_argument_group("load (wrk2's options and perflab-load's)")
    add_arguments(g, LoadParams, exclude=("tool", "script_args") + exclude, dest_prefix="load_")
    g.add_argument("script_args", nargs="*", help="arguments for the script's init(args) (after --)")


def prefill_args(p: argparse.ArgumentParser, flags: dict | None = None, fill: bool = True) -> None:
    g = p.add_argument_group(
        "data before the load: --prefill N (the built-in server's storage, before it starts) "
        "or --fill N (any server, through its API)"
    )
    add_arguments(g, PrefillParams, dest_prefix="prefill_", flags=flags)
    if fill:
        add_arguments(g, FillParams, dest_prefix="fill_")


def host_args(p: argparse.ArgumentParser, exclude: tuple[str, ...] = ()) -> None:
    add_arguments(
        p.add_argument_group("hosts (see `perflab hosts`; default: this machine alone)"),
        HostOptions,
        exclude=exclude,
        dest_prefix="hosts_",
    )


def version_args(p: argparse.ArgumentParser) -> None:
    add_arguments(
        p.add_argument_group("the version of the server measured (the run index is keyed by it)"),
        Version,
        dest_prefix="version_",
        flag_prefix="--version-",
    )


def version(a) -> Version:
    return from_arguments(Version, a, "version_")


def run_args(p: argparse.ArgumentParser) -> None:
    """What every command that records a run takes, written once: its name, the data root, no progress bars."""
    p.add_argument("--name", help="run name (part of the run id)")
    p.add_argument("--data", help="data root (default $PERFLAB_DATA or <repo>/data)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def common_args(p: argparse.ArgumentParser, hosts: bool = True) -> None:
    """:func:`run_args`, the project file (or none), and the hosts (``hosts``)."""
    run_args(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--project",
        metavar="FILE",
        help=f"your server declared in a {FILENAME} (default: "
        f"${PROJECT_ENV}, else ./{FILENAME} when there is one); flags override it (docs/your-server.md)",
    )
    g.add_argument("--no-project", action="store_true", help=f"ignore ./{FILENAME}: the built-in server")
    if hosts:
        host_args(p)


def cluster_args(p: argparse.ArgumentParser, run: bool = False) -> None:
    """With ``--nodes`` a command targets a cluster: the built-in server's flags configure every node;
    ``--server-cmd`` (with ``{port}`` and ``{cluster}``, or ``{ports}``), ``--ready-path``, ``--server-dir`` and
    ``--startup-timeout`` describe your own nodes instead. ``run``: a run's faults, fill, checker too."""
    g = p.add_argument_group("cluster (--nodes N: N nodes, each its own process; docs/contracts/cluster.md section 7)")
    add_arguments(g, ClusterConfig, dest_prefix="cluster_")
    if not run:
        return
    add_arguments(g, ClusterRunParams, dest_prefix="clusterrun_")
    add_arguments(
        p.add_argument_group("consistency checker (with --check)"),
        ConsistencyParams,
        dest_prefix="check_",
        flag_prefix="--check-",
    )


# --- what was given, as parameters ----------------------------------------------------------------
def given_flags(a, cls, prefix: str, flag_prefix: str | None = None) -> list[str]:
    """The flags of ``cls``'s fields given on the command line (under ``prefix``; ``flag_prefix`` as in
    :func:`~perflab.config.fields.add_arguments`)."""
    flags = [
        cli_flag(f)
        for f in dataclasses.fields(cls)
        if getattr(a, prefix + f.name, None) not in (None, False, []) and cli_flag(f)
    ]
    return [flag_prefix + f[2:] for f in flags] if flag_prefix else flags


def given(a) -> Given:
    """What the command line gave about what is measured, in the config classes' field names (flags not given
    are left out): the input of :func:`perflab.config.measured.resolve`."""

    def fields(cls, prefix: str) -> dict:
        return {
            f.name: tuple(v) if isinstance(v, list) else v
            for f in dataclasses.fields(cls)
            if (v := getattr(a, prefix + f.name, None)) is not None
        }

    return Given(
        project=getattr(a, "project", None),
        no_project=getattr(a, "no_project", False),
        yours=fields(ForeignServer, "foreign_"),
        builtin=fields(ServerConfig, "server_"),
        cluster=fields(ClusterConfig, "cluster_"),
        script_args=tuple(getattr(a, "script_args", None) or ()),
        categories=tuple(getattr(a, "profile_category", None) or ()),
    )


def measured(a) -> Measured:
    """What the command line measures (:func:`perflab.config.measured.resolve`: flags over the project file over
    the defaults), resolved once per command line. A command without ``--nodes`` measures one server."""
    if "_measured" not in vars(a):
        a._measured = resolve(given(a), kind="either" if hasattr(a, "cluster_nodes") else "server")
    return a._measured


def project(a) -> Project | None:
    """The project file that applies (``--project``, ``$PERFLAB_PROJECT``, ``./perflab.toml``), ``None`` with
    ``--no-project``, with a server of your own given, or none."""
    return project_of(given(a))


def is_cluster(a) -> bool:
    """A cluster is measured: ``--nodes N`` given, or the project file that applies declares one (``[cluster]``)
    and no server of your own is given on the command line."""
    return measured(a).cluster


def target(a):
    """The built-in server, yours, the project file's, or a cluster of either (:func:`measured`); a cluster
    run's options without a cluster, and ``--prefill`` for a server that is not prefilled, are errors."""
    m = measured(a)
    if not m.cluster:
        runs = given_flags(a, ClusterRunParams, "clusterrun_")
        if runs:
            raise ValueError(
                f"{', '.join(runs)}: cluster option{'s' if len(runs) > 1 else ''}; give --nodes N to start a cluster"
            )
    if getattr(a, "prefill_keys", None) is not None and not target_of(m.target).prefills:
        if m.cluster:
            raise ValueError(f"--prefill: {target_of(m.target).why_not('prefill')}")
        whose = m.project.path if m.project is not None else "--server-cmd" if a.foreign_command else "--url"
        raise ValueError(
            f"--prefill: option of the built-in server; with {whose} your server takes its own settings "
            "(--fill N writes keys through its API)"
        )
    return m.target


def report_measured(a) -> Measured:
    """What ``perflab report`` aims its notebooks at, resolved as every command's (:func:`measured`): the project
    file (``--project``, else found), or your server (``--server-cmd`` with ``--ready-path`` and
    ``--script-args``, run in the directory the report starts in: the notebooks run in ``notebooks/``), or the
    built-in server. With a project file the file declares its ready path and API (notebooks 08 and 09 take the
    file alone, so a flag on top of it would reach some notebooks and not others)."""
    args = tuple(shlex.split(a.script_args or ""))
    yours = {"command": a.server_cmd, "ready_path": a.ready_path, "workdir": os.getcwd() if a.server_cmd else None}
    m = resolve(Given(project=a.project, yours=yours, script_args=args), kind="server")
    extra = [f for f, v in (("--ready-path", a.ready_path), ("--script-args", args)) if v]
    if extra and m.project is not None:
        raise ValueError(
            f"{', '.join(extra)} with {m.project.path}: the project file declares them ([server] ready_path, [api]); "
            "they go with --server-cmd"
        )
    if args and m.builtin:
        raise ValueError("--script-args goes with --server-cmd (the built-in plan's notebooks choose their own)")
    return m


def cluster_run(a) -> tuple[ClusterRunParams, ConsistencyParams | None]:
    """A cluster run's faults, fill, profiled nodes... and the checker's parameters (``None`` without --check)."""
    what = from_arguments(ClusterRunParams, a, "clusterrun_")
    if not what.check:
        given = given_flags(a, ConsistencyParams, "check_", "--check-")
        if given:
            raise ValueError(f"{given[0]}: give --check to run the consistency checker")
        return what, None
    return what, from_arguments(ConsistencyParams, a, "check_")


def load(a, api: tuple[str, ...] | None = None) -> LoadParams:
    """The load; the API of what is measured (a project file's, :func:`measured`; ``api`` when the caller knows
    it) comes first in the script's arguments (the ones given here win), and a script that takes ``keys=`` reads
    the keys ``--fill N`` or ``--prefill N`` wrote unless ``keys=`` is given (its own default, a million, would
    read 1% of a 10,000-key fill)."""
    args = measured(a).script_args if api is None else (*api, *a.script_args)
    filled = fill(a) if hasattr(a, "fill_keys") else None
    filled = filled if filled is not None else getattr(a, "prefill_keys", None)
    script = getattr(a, "load_script", None)
    if filled is not None and script and not any(x.split("=", 1)[0] in ("keys", "count") for x in args):
        args = (*script_args(script, keys=filled), *args)
    return from_arguments(
        LoadParams, a, "load_", script_args=args or None, tool="wrk2" if getattr(a, "load_wrk_binary", None) else None
    )


def profile(a) -> ProfileParams:
    """The profile; a project file's categories when no --category is given."""
    return from_arguments(ProfileParams, a, "profile_", category=measured(a).categories or None)


def prefill(a) -> PrefillParams | None:
    return from_arguments(PrefillParams, a, "prefill_") if a.prefill_keys is not None else None


def fill(a) -> int | None:
    return from_arguments(FillParams, a, "fill_").keys


def session(a, **more) -> SessionOptions:
    """How and where the command measures (:class:`~perflab.core.session.SessionOptions`): its data root, CPU
    placement, the version of the server measured and the hosts, with ``more`` (a command's own: ``thresholds``)."""
    return SessionOptions(data_root=a.data, placement=a.placement, version=version(a), **hosts(a), **more)


def hosts(a) -> dict:
    """The host options given, as keywords of a session (``scheduler=...``)."""
    return {
        f.name: getattr(a, "hosts_" + f.name)
        for f in dataclasses.fields(HostOptions)
        if getattr(a, "hosts_" + f.name, None) is not None
    }
