"""``perflab.toml``: your server declared once, in your project's directory; every command reads it.

::

    label = "alice, stage 6"                    # how reports name your server
    language = "ru"                             # the report's language: "ru" or "en" (a course server: "ru")
    stage = 2                                   # the course stage the report answers (a course server: its factory's)

    [server]                                    # your command (placeholders {port}, {host}, {dir}) ...
    command = "java -jar build/libs/kv.jar --port {port} --data {dir}"
    ready_path = "/v0/status"                   # polled until it answers (any status; default /)
    build = "./gradlew installDist"             # what builds it in a checkout (perflab gate, perflab bisect)
    # ... or a highload-dht course server, from the student's build output:
    # course = "build/classes/java/main"        # factory = "...", stage = 6, java_home = "...", heap = "256m"

    [api]                                       # what the workload scripts send (default: the course API)
    path = "/v0/entity"                         # the key-value endpoint
    param = "id"                                # its key parameter
    status = "/v0/status"                       # a no-op endpoint: the ceiling search ("" : none, no ceiling)

    [cluster]                                   # your nodes: the command once per node, with {cluster}, {self}
    nodes = 3
    ack = 2                                     # from = 3; api = "ack-from" (&ack=&from=) or "replicas"

    [categories]                                # profile categories: a name and a regex on frames, in order
    storage = "ru/vk/itmo/test/alice/dao/"

    [previous]                                  # the stage this one is compared with (notebook 08), one of:
    stage = 5                                   # (a course server) that stage's factory in the same classes
    # project = "../stage5/perflab.toml"        # another declaration (another build output, another command)
    # commit = "stage-5"                        # this repository at that commit, built with [server] build
    label = "stage 5"                           # how reports name it (default: its own name)

Paths are relative to the file's directory. An unknown table or key is an error naming it and the file, so a
typo never falls back to a default silently. Flags on the command line override the file.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .. import i18n
from .cluster import ClusterConfig
from .course import CourseServer
from .target import ForeignServer

#: the file's name in your project's directory
FILENAME = "perflab.toml"
#: the environment variable a report's notebooks read it from
PROJECT_ENV = "PERFLAB_PROJECT"
#: the course API: what the workload scripts send when the file says nothing else
COURSE_API = {"path": "/v0/entity", "param": "id", "status": ""}

_KEYS = {
    "": ("label", "server", "api", "cluster", "categories", "previous", "language", "stage"),
    "server": (
        "command",
        "ready_path",
        "startup_timeout",
        "workdir",
        "course",
        "factory",
        "stage",
        "java_home",
        "heap",
        "build",
    ),
    "api": ("path", "param", "status"),
    "cluster": ("nodes", "ack", "from", "api", "entry"),
    "previous": ("stage", "project", "commit", "label"),
}


@dataclass(frozen=True)
class Project:
    """What ``perflab.toml`` declares (see the module docstring); :meth:`load` reads and checks it."""

    path: Path
    label: str | None
    server: ForeignServer
    course: CourseServer | None = None
    api: dict = field(default_factory=lambda: dict(COURSE_API))
    cluster: dict | None = None
    categories: tuple[str, ...] = ()
    build: str | None = None
    previous: dict | None = None  # [previous]: one of stage, project (a resolved path), commit; and a label
    language: str | None = None  # the report's language as the file gives it (see report_language)
    declared_stage: int | None = None  # the file's top-level ``stage`` (see stage)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Project:
        """Read and check the file at ``path`` (a ``ValueError`` naming the file and what is wrong)."""
        p = Path(path).resolve()
        if p.is_dir():
            p = p / FILENAME
        if not p.is_file():
            raise ValueError(f"project: no {FILENAME} at {p}")
        try:
            data = tomllib.loads(p.read_text())
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"project: {p} is not valid TOML: {e}") from None
        where = f"project {p}"
        _known(data, "", where)
        for table in ("server", "api", "cluster", "categories", "previous"):
            if table in data and not isinstance(data[table], dict):
                raise ValueError(f"{where}: [{table}] must be a table")
            if table in data and table != "categories":
                _known(data[table], table, where)
        try:
            return cls._of(p, data)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None

    @classmethod
    def _of(cls, p: Path, data: dict) -> Project:
        base = p.parent
        s = dict(data.get("server") or {})
        build = s.pop("build", None)
        if build is not None and (not isinstance(build, str) or not build.strip()):
            raise ValueError(f"server.build: a shell command, got {build!r}")
        label = data.get("label")
        course = None
        if "course" in s:
            if "command" in s:
                raise ValueError("server: give command or course, not both")
            classes = os.pathsep.join(str((base / c).resolve()) for c in str(s.pop("course")).split(os.pathsep))
            extra = {k: s.pop(k) for k in ("factory", "stage", "java_home", "heap") if k in s}
            if "java_home" in extra:
                extra["java_home"] = str((base / extra["java_home"]).resolve())
            course = CourseServer(classes=classes, label=label, **extra)
            server = course.server()
            if s:
                server = server.replace(**s)
        elif "command" in s:
            bad = [k for k in ("factory", "stage", "java_home", "heap") if k in s]
            if bad:
                raise ValueError(f"server.{bad[0]}: only with server.course (a course server)")
            s.setdefault("workdir", str(base))
            server = ForeignServer(label=label, **s)
        else:
            raise ValueError(
                "[server]: give command (your server's, with {port}) or course (a course server's build output)"
            )
        api = {**COURSE_API, **(data.get("api") or {})}
        for k in ("path", "status"):
            if api[k] and not str(api[k]).startswith("/"):
                raise ValueError(f"api.{k}: a path starting with '/', got {api[k]!r}")
        cats = []
        for name, rx in (data.get("categories") or {}).items():
            try:
                re.compile(rx)
            except (re.error, TypeError) as e:
                raise ValueError(f"categories.{name}: not a regular expression ({e}): {rx!r}") from None
            cats.append(f"{name}={rx}")
        cluster = data.get("cluster")
        if cluster is not None:
            cluster = {("from_" if k == "from" else k): v for k, v in cluster.items()}
            cls._cluster_of(server, course, cluster)  # checked now, not when a run starts
        previous = cls._previous_of(base, course, data.get("previous"))
        language = data.get("language")
        if language is not None:
            i18n.check(language)
        stage = data.get("stage")
        if stage is not None:
            if course is not None:
                raise ValueError(
                    "stage: a course server's stage is its factory's (@ServiceFactory(stage = N)); to run another "
                    "of its factories, give [server] stage"
                )
            if not isinstance(stage, int) or isinstance(stage, bool) or stage < 1:
                raise ValueError(f"stage: the course stage your server answers, a number >= 1, got {stage!r}")
        return cls(p, label, server, course, api, cluster, tuple(cats), build, previous, language, stage)

    @staticmethod
    def _previous_of(base: Path, course: CourseServer | None, fields: dict | None) -> dict | None:
        """``[previous]`` checked: exactly one of ``stage`` (a course server's), ``project`` (a file, resolved
        against this one's directory) and ``commit``; ``label`` a short text."""
        if fields is None:
            return None
        given = [k for k in ("stage", "project", "commit") if k in fields]
        if len(given) != 1:
            raise ValueError(
                "[previous]: give one of stage (a course server's earlier factory), project (another "
                f"perflab.toml) or commit (a git revision of this repository), got {given or 'none'}"
            )
        out = dict(fields)
        if "stage" in out:
            if course is None:
                raise ValueError("previous.stage: only for a course server (server.course); give project or commit")
            if not isinstance(out["stage"], int) or isinstance(out["stage"], bool) or out["stage"] < 1:
                raise ValueError(f"previous.stage: a stage number >= 1, got {out['stage']!r}")
        for k in ("project", "commit", "label"):
            if k in out and (not isinstance(out[k], str) or not out[k].strip()):
                raise ValueError(f"previous.{k}: a non-empty text, got {out[k]!r}")
        if "project" in out:
            path = (base / out["project"]).resolve()
            if path.is_dir():
                path = path / FILENAME
            if not path.is_file():
                raise ValueError(f"previous.project: no {FILENAME} at {path}")
            out["project"] = str(path)
        return out

    @staticmethod
    def _cluster_of(server: ForeignServer, course: CourseServer | None, fields: dict) -> ClusterConfig:
        if course is not None:
            return course.cluster(**fields)
        cmd = server.command
        return ClusterConfig(
            command=cmd,
            ready_path=server.ready_path,
            workdir=server.workdir,
            startup_timeout=server.startup_timeout,
            **fields,
        )

    # --- what the commands and notebooks take from it ----------------------------------------------
    def cluster_config(self, **fields) -> ClusterConfig:
        """The cluster the file declares (``[cluster]``), with ``fields`` (ClusterConfig's) on top; a
        ``ValueError`` when neither says how many nodes."""
        merged = {**(self.cluster or {}), **fields}
        if "nodes" not in merged:
            raise ValueError(f"project {self.path}: no [cluster] table (nodes = 3, ...) and no node count given")
        return self._cluster_of(self.server, self.course, merged)

    @property
    def script_args(self) -> tuple[str, ...]:
        """The workload scripts' arguments for this API (``path=``, ``param=``)."""
        return (f"path={self.api['path']}", f"param={self.api['param']}")

    @property
    def status_path(self) -> str | None:
        """The no-op endpoint of the ceiling search, ``None`` when the server has none."""
        return self.api["status"] or None

    @property
    def report_language(self) -> str:
        """The language its reports are written in: the file's ``language``, else Russian for a course server
        (the course, its README and its students' reports are in Russian), else English."""
        return self.language or ("ru" if self.course is not None else i18n.DEFAULT)

    @property
    def stage(self) -> int | None:
        """The course stage the server answers: a course server's factory's (``@ServiceFactory(stage = N)``),
        else the file's ``stage``; ``None`` when neither tells."""
        if self.course is not None:
            chosen = self.course.chosen()
            return chosen.stage if chosen is not None else None
        return self.declared_stage

    @property
    def name(self) -> str:
        return self.label or self.server.name


def _known(table: dict, name: str, where: str) -> None:
    for k in table:
        if k not in _KEYS[name]:
            prefix = f"{name}." if name else ""
            raise ValueError(
                f"{where}: unknown key {prefix}{k} (known{' in [' + name + ']' if name else ''}: "
                f"{', '.join(_KEYS[name])})"
            )


def build_command(path: str | os.PathLike) -> str | None:
    """The ``[server] build`` command of the project file at ``path``, read before what it builds exists (a
    course server's classes are checked by :meth:`Project.load`, so they must be built first)."""
    try:
        data = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"project: cannot read {path}: {e}") from None
    build = (data.get("server") or {}).get("build")
    if build is not None and (not isinstance(build, str) or not build.strip()):
        raise ValueError(f"project {path}: server.build: a shell command, got {build!r}")
    return build


def find(explicit: str | os.PathLike | None = None) -> Project | None:
    """The project to use: ``explicit`` (a file or a directory), else ``$PERFLAB_PROJECT``, else
    ``./perflab.toml`` when there is one; ``None`` when there is none."""
    given = explicit or os.environ.get(PROJECT_ENV)
    if given:
        return Project.load(given)
    here = Path.cwd() / FILENAME
    return Project.load(here) if here.is_file() else None
