"""Where things are: the repository, build outputs, the data, runs and report roots.

The build layout is fixed by docs/contracts/server.md (section 1). Every accessor checks that the
artifact exists and raises :class:`~perflab.errors.NotBuiltError` telling how to build it, so a
missing build never shows up later as an obscure ``FileNotFoundError`` from a subprocess.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import NotBuiltError

#: Environment variable that overrides the data root (tests point it to a temp dir).
DATA_ENV = "PERFLAB_DATA"

_SERVER_HINT = "run `make setup` (or `cd java-server && gradle --no-daemon -q installDist`)"
_LOADGEN_HINT = "run `make setup` (or `cd loadgen && cargo build --release`)"


def repo_root() -> Path:
    """The repository root (the directory holding ``pyproject.toml`` above this package)."""
    env = os.environ.get("PERFLAB_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parent.parent
    return here


def _require(path: Path, what: str, hint: str) -> Path:
    if not path.exists():
        raise NotBuiltError(f"{what} not found at {path}: {hint}")
    return path


def server_install_dir(check: bool = True) -> Path:
    """``java-server/build/install/perflab-server``."""
    p = repo_root() / "java-server" / "build" / "install" / "perflab-server"
    return _require(p / "lib", "the server build", _SERVER_HINT).parent if check else p


def course_dir(check: bool = True) -> Path:
    """The course launcher and one-nio's run-time jars: ``<server install>/course/`` (``perflab-course.jar``,
    ``lib/*.jar``)."""
    p = server_install_dir(check=False) / "course"
    return _require(p / "perflab-course.jar", "the course launcher", _SERVER_HINT).parent if check else p


def server_classpath(check: bool = True) -> list[Path]:
    """All jars of the server (``lib/*.jar``), sorted for a stable classpath."""
    lib = server_install_dir(check) / "lib"
    jars = sorted(lib.glob("*.jar")) if lib.is_dir() else []
    if check and not jars:
        raise NotBuiltError(f"no jars in {lib}: {_SERVER_HINT}")
    return jars


def profiler_dir(check: bool = True) -> Path:
    return server_install_dir(check) / "profiler"


def async_profiler_lib(check: bool = True) -> Path:
    """The async-profiler native agent (``libasyncProfiler.so``)."""
    p = profiler_dir(check) / "libasyncProfiler.so"
    return _require(p, "async-profiler's native library", _SERVER_HINT) if check else p


def async_profiler_jar(check: bool = True) -> Path:
    p = profiler_dir(check) / "async-profiler.jar"
    return _require(p, "async-profiler's Java API jar", _SERVER_HINT) if check else p


def converter_jar(check: bool = True) -> Path:
    """async-profiler's converter (``jfr-converter.jar``: ``one.convert.*``)."""
    p = profiler_dir(check) / "jfr-converter.jar"
    return _require(p, "async-profiler's converter jar", _SERVER_HINT) if check else p


def loadgen_binary(check: bool = True) -> Path:
    """``loadgen/target/release/perflab-load`` (or ``PERFLAB_LOAD`` if set)."""
    env = os.environ.get("PERFLAB_LOAD")
    p = Path(env) if env else repo_root() / "loadgen" / "target" / "release" / "perflab-load"
    return _require(p, "the load generator perflab-load", _LOADGEN_HINT) if check else p


def wrk_scripts_dir() -> Path:
    return repo_root() / "wrk-scripts"


def resolve_script(script: str | os.PathLike) -> Path:
    """A workload script: an existing path, or a name (with or without ``.lua``) in ``wrk-scripts/``."""
    if script is None or str(script).strip() == "":
        raise ValueError("script must be a path or a name in wrk-scripts/, got empty")
    p = Path(script)
    if p.is_file():
        return p.resolve()
    for cand in (wrk_scripts_dir() / p, wrk_scripts_dir() / (str(p) + ".lua")):
        if cand.is_file():
            return cand.resolve()
    raise ValueError(f"script: {script!s} not found (neither a file nor a script in {wrk_scripts_dir()})")


def script_arguments(script: str | os.PathLike) -> list[str]:
    """The arguments a workload script documents in its header (``--   name=default  help`` lines)."""
    names = []
    for line in resolve_script(script).read_text().splitlines():
        if not line.startswith("--"):
            break
        m = re.match(r"^--\s+(\w+)=\S*\s", line + " ")
        if m and m.group(1) not in names:
            names.append(m.group(1))
    return names


def data_root(explicit: str | os.PathLike | None = None) -> Path:
    """Where runs are recorded: ``explicit``, else ``$PERFLAB_DATA``, else ``<repo>/data``."""
    if explicit is not None and str(explicit).strip() == "":
        raise ValueError("data_root must be a directory path, got empty")
    p = Path(explicit) if explicit is not None else Path(os.environ.get(DATA_ENV) or repo_root() / "data")
    p.mkdir(parents=True, exist_ok=True)
    return p.resolve()


def runs_root(root: str | os.PathLike | None = None) -> Path:
    """``<data root>/runs`` (``root``: the data root, default :func:`data_root`): one directory per run."""
    p = data_root(root) / "runs"
    p.mkdir(parents=True, exist_ok=True)
    return p


#: Environment variable that overrides the report root.
REPORT_ENV = "PERFLAB_REPORT"


def report_root(explicit: str | os.PathLike | None = None) -> Path:
    """Where reports go: ``explicit``, else ``$PERFLAB_REPORT``, else ``<repo>/report``."""
    p = Path(explicit) if explicit else Path(os.environ.get(REPORT_ENV) or repo_root() / "report")
    p.mkdir(parents=True, exist_ok=True)
    return p.resolve()
