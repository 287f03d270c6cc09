"""What is measured: the one answer to "which server, with which API and profile categories?" for the command
line, the notebooks and the report.

The built-in server, yours started by a command or running at a URL, one a ``perflab.toml`` declares (a command
or a course server), or a cluster of any of them: :func:`resolve` merges what a caller was given (:class:`Given`:
flags, or a notebook's parameters) with the project file and the defaults, in one precedence:

1. **what was given explicitly** (a flag, a notebook parameter that is not ``None``) wins;
2. then **the project file**: ``project`` given, else ``$PERFLAB_PROJECT``, else ``./perflab.toml`` (none with
   ``no_project``, and none found when your own server is given by ``command`` or ``url``: it is another server);
3. then **the defaults**: the classes', or the caller's own (a notebook's built-in server settings and cluster
   shape: a notebook cannot tell a value it was given from its default, so these stand below the file).

Given values merge on top of the file where they can: your server's ``ready_path``, ``workdir``,
``startup_timeout`` and ``label`` on its server (or nodes), cluster fields on its ``[cluster]``, script arguments
after its API's (later ones win), categories and the status path instead of its own. What cannot merge is an
error naming both sides: a project file given together with a command or URL of your own, the built-in server's
settings with your server, your server's settings without one, cluster settings where no cluster is measured.

The result, :class:`Measured`, is what the CLI, a notebook and a report plan read, so the three measure the same
target from the same inputs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .cluster import ClusterConfig
from .fields import cli_flag
from .project import Project, find
from .server import ServerConfig
from .target import ForeignServer

#: what measures: one server, a cluster, or either (a cluster when cluster fields say so or the file has one)
KINDS = ("server", "cluster", "either")
#: your server's fields that say which server it is; the others (ready_path, workdir, ...) only describe it
_WHICH = ("command", "url")
#: your server's fields a cluster of your nodes takes (ClusterConfig's of the same name)
_NODE_FIELDS = ("command", "ready_path", "workdir", "startup_timeout")


@dataclass(frozen=True)
class Given:
    """What a caller was given explicitly (``None`` or empty: not given), in the config classes' field names.

    ``project``: a project file's path; ``no_project``: no project file at all; ``yours``: ``ForeignServer``
    fields (``command``, ``url``, ``pid``, ``workdir``, ``ready_path``, ``startup_timeout``, ``label``);
    ``builtin``: ``ServerConfig`` fields; ``cluster``: ``ClusterConfig`` fields (``nodes``, ``ack``, ``from_``,
    ``entry``, ``api``); ``script_args``: the workload script's arguments; ``categories``: profile categories
    (``name=regex``); ``status_path``: the no-op endpoint of the ceiling search. ``names``: how a caller that takes
    parameters spells a field in its errors (a notebook's ``server_cmd``; a field not in it by its own name);
    ``None``: the command line's, every field named by its flag (``--server-cmd``)."""

    project: str | None = None
    no_project: bool = False
    yours: Mapping[str, Any] = field(default_factory=dict)
    builtin: Mapping[str, Any] = field(default_factory=dict)
    cluster: Mapping[str, Any] = field(default_factory=dict)
    script_args: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status_path: str | None = None
    names: Mapping[str, str] | None = field(default=None, compare=False)

    def name(self, cls, name: str) -> str:
        """How the caller spells ``cls``'s field ``name``."""
        if self.names is not None:
            return self.names.get(name, name)
        f = next((f for f in dataclasses.fields(cls) if f.name == name), None)
        return (cli_flag(f) if f is not None else None) or "--" + name.replace("_", "-")


@dataclass(frozen=True)
class Measured:
    """What is measured: the ``target`` (``ServerConfig``, ``ForeignServer`` or ``ClusterConfig``), the project
    file it came from (``None``: none), the workload script's arguments for its API, its profile categories and
    its no-op endpoint (``None``: not declared)."""

    target: ServerConfig | ForeignServer | ClusterConfig
    project: Project | None = None
    script_args: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status_path: str | None = None

    @property
    def cluster(self) -> bool:
        return isinstance(self.target, ClusterConfig)

    @property
    def builtin(self) -> bool:
        """The built-in server (or a cluster of it) is measured."""
        t = self.target
        return isinstance(t, ServerConfig) or (isinstance(t, ClusterConfig) and not t.foreign)


def project_of(given: Given) -> Project | None:
    """The project file that applies to ``given`` (precedence 2 of the module docstring), or a ``ValueError`` when
    a file given explicitly meets your own server given explicitly."""
    which = [k for k in _WHICH if given.yours.get(k) is not None]
    if given.project and given.no_project:
        raise ValueError(f"{given.name(Given, 'project')} and --no-project: give one")
    if given.project and which:
        raise ValueError(
            f"{given.name(Given, 'project')} {given.project} and {given.name(ForeignServer, which[0])}: give one "
            "(the project file declares your server's command)"
        )
    if given.no_project or which:
        return None
    return find(given.project)


def resolve(
    given: Given,
    kind: str = "either",
    builtin_defaults: Mapping[str, Any] | None = None,
    cluster_defaults: Mapping[str, Any] | None = None,
) -> Measured:
    """What is measured from ``given``, the project file and the defaults, in the module docstring's precedence.

    ``kind``: ``"server"`` (one server: a file's ``[cluster]`` is not used), ``"cluster"`` (always a cluster) or
    ``"either"`` (a cluster when ``given.cluster`` has ``nodes`` or the file declares one, and no server of
    yours is given). ``builtin_defaults`` / ``cluster_defaults``: the caller's defaults (precedence 3) for the
    built-in server's ``ServerConfig`` fields and the cluster's ``ClusterConfig`` fields."""
    if kind not in KINDS:
        raise ValueError(f"kind: one of {', '.join(KINDS)}, got {kind!r}")
    proj = project_of(given)
    yours = {k: v for k, v in given.yours.items() if v is not None}
    which = [k for k in _WHICH if k in yours]
    builtin = {k: v for k, v in given.builtin.items() if v is not None}
    if builtin and (proj is not None or which):
        names = [given.name(ServerConfig, k) for k in builtin]
        whose = f"{proj.path}" if proj is not None else given.name(ForeignServer, which[0])
        raise ValueError(
            f"{', '.join(names)}: option{'s' if len(names) > 1 else ''} of the built-in server; with {whose} your "
            "server takes its own settings (put them in its command)"
            + ("" if which or given.project else f"; --no-project measures the built-in server instead of {whose}")
        )
    if proj is None and not which and yours:
        first = next(iter(yours))
        raise ValueError(
            f"{given.name(ForeignServer, first)}: only with {given.name(ForeignServer, 'command')} or "
            f"{given.name(ForeignServer, 'url')} (your own server) or a project file"
        )
    cluster = {k: v for k, v in given.cluster.items() if v is not None}
    is_cluster = kind == "cluster" or (
        kind == "either" and ("nodes" in cluster or (not which and proj is not None and proj.cluster is not None))
    )
    if is_cluster:
        target = _cluster(given, proj, yours, cluster, builtin, builtin_defaults or {}, cluster_defaults or {})
    elif cluster:
        names = [given.name(ClusterConfig, k) for k in cluster]
        raise ValueError(
            f"{', '.join(names)}: cluster option{'s' if len(names) > 1 else ''}; give "
            f"{given.name(ClusterConfig, 'nodes')} N to start a cluster"
        )
    elif proj is not None:
        target = proj.server.replace(**yours) if yours else proj.server
    elif which:
        target = ForeignServer(**yours)
    else:
        target = ServerConfig(**{**(builtin_defaults or {}), **builtin})
    return Measured(
        target,
        proj,
        script_args=(*(proj.script_args if proj is not None else ()), *given.script_args),
        categories=tuple(given.categories) or (proj.categories if proj is not None else ()),
        status_path=given.status_path or (proj.status_path if proj is not None else None),
    )


def _cluster(given, proj, yours, cluster, builtin, builtin_defaults, cluster_defaults) -> ClusterConfig:
    """The cluster of :func:`resolve`: the file's ``[cluster]`` (your nodes), your nodes by command, or the built-in
    server on every node; given fields over the file's over the defaults."""
    if "url" in yours:
        raise ValueError(
            f"{given.name(ForeignServer, 'url')}: a cluster is started by perflab ({given.name(ClusterConfig, 'nodes')}"
            "); a cluster that is already running is measured from Python (pl.start_cluster, pl.run_experiment)"
        )
    for k in ("pid", "label"):
        if k in yours:
            raise ValueError(f"{given.name(ForeignServer, k)}: a single server's; perflab starts a cluster's nodes")
    nodes = {k: yours[k] for k in _NODE_FIELDS if k in yours}
    if proj is not None:
        declared = proj.cluster or {}
        cfg = proj.cluster_config(**{**{k: v for k, v in cluster_defaults.items() if k not in declared}, **cluster})
        return cfg.replace(**nodes) if nodes else cfg
    if "command" in nodes:
        return ClusterConfig(**{**cluster_defaults, **cluster, **nodes})
    return ClusterConfig(**{**cluster_defaults, **cluster}, server=ServerConfig(**{**builtin_defaults, **builtin}))
