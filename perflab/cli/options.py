"""The command line's options, derived from the parameter classes (:mod:`perflab.config`), and the parameter
objects built back from what was given: the direction is one way, flags then options.

Every option group is a class's fields (``add_arguments``), so the command line and Python check a value the
same way and a default or a bound is written once: the built-in server's flags (``ServerConfig``, itself
from the server's ``--options-json``), your server's (``ForeignServer``), the load's (``LoadParams``), the
prefill's, the hosts' (``HostOptions``), a cluster's (``ClusterConfig``, ``ClusterRunParams``,
``ConsistencyParams``). Each group has its own ``dest`` prefix, so no two fields of the same name meet.
"""

from __future__ import annotations

import argparse
import dataclasses

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
from ..config.project import FILENAME, PROJECT_ENV, Project
from ..config.project import find as find_project
from ..config.version import Version
from ..targets import target_of
from ..workloads import script_args

#: LoadParams fields a search or a comparison sets itself (per probe / for the ramp)
SEARCH_OWNS = ("rate", "duration", "warmup", "rate_steps", "step_duration", "ramp", "ramp_curve", "stop_on_p99")
#: ServerConfig fields the lab sets itself (a node's --cluster and --self-url come with --nodes)
LAB_SETS = ("host", "port", "cluster", "self_url")
#: ClusterConfig fields the command line takes from your-own-server options when --nodes is given
_FROM_FOREIGN = {
    "server_cmd": "command",
    "ready_path": "ready_path",
    "workdir": "workdir",
    "startup_timeout": "startup_timeout",
}


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
        f"${PROJECT_ENV}, else ./{FILENAME} when there is one); flags override it",
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


def refuse_builtin_flags(a, yours: str, prefix: str = "server_") -> None:
    """Built-in server options (``--memtable-size``, ``--prefill``...) given for your server: an error naming
    them, since your server takes its own settings (``yours``: which of your options was given)."""
    given = given_flags(a, ServerConfig, prefix)
    if getattr(a, "prefill_keys", None) is not None:
        given.append("--prefill")
    if given:
        raise ValueError(
            f"{', '.join(given)}: option{'s' if len(given) > 1 else ''} of the built-in server; with "
            f"{yours} your server takes its own settings (put them in its command)"
        )


def project(a) -> Project | None:
    """The project file that applies (``--project``, ``$PERFLAB_PROJECT``, ``./perflab.toml``), ``None`` with
    ``--no-project`` or none."""
    if getattr(a, "no_project", False):
        return None
    return find_project(getattr(a, "project", None))


def server(a) -> ServerConfig | ForeignServer:
    """The built-in server's configuration, yours (``--server-cmd``/``--url``), or the project file's."""
    proj = project(a)
    if proj is not None and a.foreign_command is None and a.foreign_url is None:
        refuse_builtin_flags(a, f"{proj.path}")
        return proj.server
    if a.foreign_command is None and a.foreign_url is None:
        for name in ("pid", "ready_path", "startup_timeout"):
            if getattr(a, "foreign_" + name) is not None:
                raise ValueError(f"--{name.replace('_', '-')}: only with --server-cmd or --url (your own server)")
        return from_arguments(ServerConfig, a, "server_")
    refuse_builtin_flags(a, "--server-cmd" if a.foreign_command is not None else "--url")
    return from_arguments(ForeignServer, a, "foreign_")


def is_cluster(a) -> bool:
    """A cluster is measured: ``--nodes N`` given, or the project file that applies declares one (``[cluster]``)
    and no server of your own is given on the command line."""
    if getattr(a, "cluster_nodes", None) is not None:
        return True
    if getattr(a, "foreign_command", None) is not None or getattr(a, "foreign_url", None) is not None:
        return False
    proj = project(a) if hasattr(a, "cluster_nodes") else None  # a command that takes no cluster: never
    return proj is not None and proj.cluster is not None


def cluster(a) -> ClusterConfig:
    """The ClusterConfig the options describe: the built-in server's options for every node, your nodes
    (``--server-cmd`` with the cluster's placeholders, ``--ready-path``, ``--server-dir``, ``--startup-timeout``),
    or the project file's (its ``[cluster]``, with the options given here on top)."""
    proj = project(a)
    if proj is not None and a.foreign_command is None and a.foreign_url is None:
        refuse_builtin_flags(a, f"{proj.path}")
        given = {
            f.name: getattr(a, "cluster_" + f.name)
            for f in dataclasses.fields(ClusterConfig)
            if getattr(a, "cluster_" + f.name, None) is not None
        }
        return proj.cluster_config(**given)

    if getattr(a, "foreign_url", None) is not None:
        raise ValueError(
            "--url: a cluster is started by perflab (--nodes); a cluster that is already running is "
            "measured from Python (pl.start_cluster, pl.run_experiment)"
        )
    if getattr(a, "foreign_pid", None) is not None:
        raise ValueError("--pid: perflab knows the pids of the nodes it starts")
    if a.foreign_command is None:
        unused = [
            name
            for name in _FROM_FOREIGN.values()
            if name != "command" and getattr(a, "foreign_" + name, None) is not None
        ]
        if unused:
            raise ValueError(
                f"--{unused[0].replace('_', '-').replace('workdir', 'server-dir')}: only with --server-cmd "
                f"(your own nodes)"
            )
        return from_arguments(ClusterConfig, a, "cluster_", server=from_arguments(ServerConfig, a, "server_"))
    refuse_builtin_flags(a, "--server-cmd", "server_")
    fixed = {k: getattr(a, "foreign_" + v, None) for k, v in _FROM_FOREIGN.items()}
    return from_arguments(ClusterConfig, a, "cluster_", **fixed)


def target(a):
    """The built-in server, yours, or with --nodes a cluster of either."""
    if is_cluster(a):
        t = cluster(a)
        if getattr(a, "prefill_keys", None) is not None:
            raise ValueError(f"--prefill: {target_of(t).why_not('prefill')}")
        return t
    given = given_flags(a, ClusterConfig, "cluster_") + given_flags(a, ClusterRunParams, "clusterrun_")
    if given:
        raise ValueError(
            f"{', '.join(given)}: cluster option{'s' if len(given) > 1 else ''}; give --nodes N to start a cluster"
        )
    return server(a)


def cluster_run(a) -> tuple[ClusterRunParams, ConsistencyParams | None]:
    """A cluster run's faults, fill, profiled nodes... and the checker's parameters (``None`` without --check)."""
    what = from_arguments(ClusterRunParams, a, "clusterrun_")
    if not what.check:
        given = given_flags(a, ConsistencyParams, "check_", "--check-")
        if given:
            raise ValueError(f"{given[0]}: give --check to run the consistency checker")
        return what, None
    return what, from_arguments(ConsistencyParams, a, "check_")


def load(a) -> LoadParams:
    """The load; a project file's API comes first in the script's arguments (the ones given here win), and a
    script that takes ``keys=`` reads the keys ``--fill N`` or ``--prefill N`` wrote unless ``keys=`` is given
    (its own default, a million, would read 1% of a 10,000-key fill)."""
    proj = project(a) if a.foreign_command is None and a.foreign_url is None else None
    args = (*(proj.script_args if proj is not None else ()), *a.script_args)
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
    proj = project(a) if a.foreign_command is None and a.foreign_url is None else None
    cats = tuple(getattr(a, "profile_category", None) or ()) or (proj.categories if proj is not None else ())
    return from_arguments(ProfileParams, a, "profile_", category=cats or None)


def prefill(a) -> PrefillParams | None:
    return from_arguments(PrefillParams, a, "prefill_") if a.prefill_keys is not None else None


def fill(a) -> int | None:
    return from_arguments(FillParams, a, "fill_").keys


def hosts(a) -> dict:
    """The host options given, as keywords of a session (``scheduler=...``)."""
    return {
        f.name: getattr(a, "hosts_" + f.name)
        for f in dataclasses.fields(HostOptions)
        if getattr(a, "hosts_" + f.name, None) is not None
    }
