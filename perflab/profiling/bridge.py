"""The in-process JVM (JPype): one per Python process, started on first use.

Why these go through JPype rather than subprocesses or HTTP:

* **Attaching async-profiler** uses the JDK Attach API (``com.sun.tools.attach.VirtualMachine``):
  ``loadAgentPath(libasyncProfiler.so, "start,event=cpu,...")`` injects the profiler into the
  running server and later sends ``stop``/``dump`` the same way, so profiling starts and stops at the
  exact edges of the measured window without restarting the server, and without depending on the
  ``asprof``/``jattach`` binaries (the build ships only the agent and jars). Each command is one
  Java call; an attach failure comes back as a Java exception we can report with its cause.
* **async-profiler's converter** (``one.convert.*`` in ``jfr-converter.jar``) writes the same HTML
  flame graphs async-profiler writes itself, including differential graphs (``--diff``). Calling its
  classes in-process avoids a JVM start per conversion (~0.5 s each, many per report).
* **Prefill and inspect** open the storage engine directly (``perflab.tools.Prefill`` /
  ``perflab.tools.Inspect`` from the server's jars): filling 1M keys through HTTP would take minutes
  and measure the HTTP path instead of producing a data directory; in-process it takes seconds, is
  deterministic by seed, and ``Inspect`` reads SSTable metadata without a running server.

The JVM is started with the server's classpath plus ``async-profiler.jar`` and
``jfr-converter.jar``, with ``-Xrs`` so Python keeps SIGINT/SIGTERM (Ctrl-C stays a
``KeyboardInterrupt``). A JVM cannot be restarted within a process: it lives until Python exits.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import jpype

from .. import jdk, paths
from ..config import BACKENDS, PrefillParams
from ..errors import BridgeError, ProfilerError

_lock = threading.RLock()
_started_by_us = False


def classpath() -> list[str]:
    """Jars the in-process JVM loads (fails with "run make setup" if something is not built)."""
    return [str(p) for p in paths.server_classpath()] + [str(paths.async_profiler_jar()), str(paths.converter_jar())]


def _libjvm(java_home: Path) -> str:
    for cand in ("lib/server/libjvm.so", "jre/lib/amd64/server/libjvm.so", "lib/server/libjvm.dylib"):
        p = java_home / cand
        if p.exists():
            return str(p)
    raise BridgeError(f"no libjvm in {java_home}: set JAVA_HOME to a full JDK")


def jvm_started() -> bool:
    return jpype.isJVMStarted()


def start_jvm(java_home: str | os.PathLike | None = None, max_heap: str = "2g") -> None:
    """Start the JVM if it is not running yet (idempotent). ``java_home`` only matters the first time."""
    global _started_by_us

    with _lock:
        if jpype.isJVMStarted():
            _check_classes()
            return
        jh = jdk.home(java_home)
        cp = classpath()
        try:
            # attachTimeout: a target busy under load may take longer than the default 10 s to answer.
            jpype.startJVM(
                _libjvm(jh),
                "-Xrs",
                f"-Xmx{max_heap}",
                "-Djava.awt.headless=true",
                "-Dsun.tools.attach.attachTimeout=30000",
                classpath=cp,
                convertStrings=False,
                interrupt=False,
            )
        except Exception as e:
            raise BridgeError(f"could not start the in-process JVM from {jh}: {e}") from e
        _started_by_us = True
        _check_classes()


def _check_classes():
    try:
        jpype.JClass("one.convert.FlameGraph")
    except Exception as e:
        raise BridgeError(
            "the in-process JVM was started without perflab's classpath "
            "(call perflab.profiling.bridge.start_jvm() before anything else starts JPype)"
        ) from e


def _jclass(name: str):
    start_jvm()
    try:
        return jpype.JClass(name)
    except Exception as e:
        raise BridgeError(f"class {name} not found on the server's classpath ({e}): rebuild with `make setup`") from e


def java_error_text(e: BaseException) -> str:
    """Message of a Java exception including its causes."""
    parts = []
    cur = e
    seen = 0
    while cur is not None and seen < 6:
        msg = cur.getMessage() if hasattr(cur, "getMessage") else str(cur)
        name = cur.getClass().getName() if hasattr(cur, "getClass") else type(cur).__name__
        parts.append(f"{name}: {msg}")
        cur = cur.getCause() if hasattr(cur, "getCause") else None
        seen += 1
    return " <- caused by ".join(str(p) for p in parts)


# ---------------------------------------------------------------------------------------------
# async-profiler through the Attach API
# ---------------------------------------------------------------------------------------------
def load_agent(pid: int, agent_path: str | os.PathLike, options: str) -> None:
    """Attach to JVM ``pid`` and load the native agent with ``options`` (one async-profiler command).

    Raises :class:`ProfilerError` with the cause when the attach or the command fails.
    """
    if not isinstance(pid, int) or pid <= 0:
        raise ValueError(f"pid must be a positive int, got {pid!r}")
    if not Path(agent_path).is_file():
        raise ValueError(f"agent_path: {agent_path} does not exist")
    if not isinstance(options, str) or not options:
        raise ValueError("options must be a non-empty agent option string")
    VirtualMachine = _jclass("com.sun.tools.attach.VirtualMachine")
    for attempt in range(3):
        try:
            vm = VirtualMachine.attach(str(pid))
            break
        except Exception as e:
            text = java_error_text(e)
            # A live JVM that did not answer in time (busy machine) is worth another try; a process
            # that is gone or not a JVM is not.
            if attempt == 2 or "doesn't respond" not in text or not _alive(pid):
                raise ProfilerError(f"cannot attach to JVM pid {pid}: {text}") from None
    try:
        vm.loadAgentPath(str(agent_path), options)
    except Exception as e:
        raise ProfilerError(
            f"async-profiler command {options.split(',')[0]!r} failed in pid {pid}: {java_error_text(e)}"
        ) from None
    finally:
        try:
            vm.detach()
        except Exception:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------
# Flame graphs with async-profiler's converter
# ---------------------------------------------------------------------------------------------
def _arguments(*args: str):
    Arguments = _jclass("one.convert.Arguments")
    return Arguments(jpype.JArray(jpype.JString)([str(a) for a in args]))


def _conv_args(title: str | None, reverse: bool, minwidth: float | None, extra=()) -> list[str]:
    a = []
    if title:
        a += ["--title", title]
    if reverse:
        a.append("--reverse")
    if minwidth:
        a += ["--minwidth", str(minwidth)]
    return a + list(extra)


def collapsed_to_html(
    collapsed: str | os.PathLike,
    html: str | os.PathLike,
    title: str | None = None,
    reverse: bool = False,
    minwidth: float | None = None,
) -> Path:
    """async-profiler's interactive HTML flame graph from a collapsed-stacks file."""
    src = Path(collapsed)
    if not src.is_file():
        raise ValueError(f"collapsed: {src} does not exist")
    out = Path(html)
    out.parent.mkdir(parents=True, exist_ok=True)
    Main = _jclass("one.convert.Main")
    try:
        args = _arguments(*_conv_args(title, reverse, minwidth))
        _dump(Main.parseFlameGraph(str(src), args), out)
    except Exception as e:
        raise BridgeError(f"flame graph conversion of {src} failed: {java_error_text(e)}") from None
    return out


def _dump(fg, out: Path) -> None:
    """Write a converter FlameGraph as HTML to ``out``."""
    stream = _jclass("java.io.FileOutputStream")(str(out))
    try:
        fg.dump(stream)
    finally:
        stream.close()


def diff_html(
    base: str | os.PathLike,
    new: str | os.PathLike,
    html: str | os.PathLike,
    title: str | None = None,
    minwidth: float | None = None,
) -> Path:
    """async-profiler's differential flame graph: the shape of ``new``, coloured by growth against
    ``base`` (both collapsed-stacks files; converter ``--diff``)."""
    for n, p in (("base", base), ("new", new)):
        if not Path(p).is_file():
            raise ValueError(f"{n}: {p} does not exist")
    out = Path(html)
    out.parent.mkdir(parents=True, exist_ok=True)
    Main = _jclass("one.convert.Main")
    try:
        args = _arguments(*_conv_args(title, False, minwidth, ["--diff"]))
        fg_base = Main.parseFlameGraph(str(base), args)
        fg_new = Main.parseFlameGraph(str(new), args)
        fg_new.diff(fg_base)  # same order as the converter's CLI: second input diffed against the first
        _dump(fg_new, out)
    except Exception as e:
        raise BridgeError(f"differential flame graph {base} vs {new} failed: {java_error_text(e)}") from None
    return out


def jfr_convert(
    jfr: str | os.PathLike,
    output: str | os.PathLike,
    event: str = "cpu",
    threads: bool = False,
    extra: list[str] | tuple = (),
    fmt: str | None = None,
) -> Path:
    """Convert a JFR recording to ``.collapsed`` or ``.html`` (by ``output``'s extension, or ``fmt``:
    ``collapsed``, ``html``, ``heatmap``).

    ``extra``: more converter options, e.g. ``["--from", epoch_ms, "--to", epoch_ms]`` to keep a
    time window (values above 1.5e12 are epoch milliseconds, smaller ones offsets from the start)."""
    if event not in ("cpu", "wall", "alloc", "lock", "live"):
        raise ValueError(f"event must be one of cpu, wall, alloc, lock, live, got {event!r}")
    src = Path(jfr)
    if not src.is_file():
        raise ValueError(f"jfr: {src} does not exist")
    fmt = fmt or Path(output).suffix.lstrip(".")
    if fmt not in ("collapsed", "html", "heatmap"):
        raise ValueError(f"fmt must be collapsed, html or heatmap, got {fmt!r}")
    Main = _jclass("one.convert.Main")
    try:
        args = _arguments("-o", fmt, f"--{event}", *(["--threads"] if threads else []), *[str(x) for x in extra])
        Main.convert(str(src), str(output), args)
    except Exception as e:
        raise BridgeError(f"JFR conversion of {src} failed: {java_error_text(e)}") from None
    return Path(output)


# ---------------------------------------------------------------------------------------------
# Storage engine in-process
# ---------------------------------------------------------------------------------------------
def prefill(
    data_dir: str | os.PathLike,
    keys: int,
    value_size: int = 100,
    seed: int = 0,
    key_prefix: str = "key",
    backend: str = "lsm",
) -> dict:
    """Fill ``data_dir`` with keys ``key_prefix + i`` for ``i < keys`` (``perflab.tools.Prefill``).

    Returns the tool's JSON as a dict (keys written, bytes, seconds, SSTables). The directory must
    not be open by a running server (the engine locks it; the error names the lock).
    """
    p = PrefillParams(keys=keys, value_size=value_size, seed=seed, key_prefix=key_prefix)  # validates
    if backend not in BACKENDS or backend == "memory":
        raise ValueError(f"backend must be 'lsm' or 'rocksdb' (memory has nothing to prefill), got {backend!r}")
    d = Path(data_dir)
    d.mkdir(parents=True, exist_ok=True)
    Prefill = _jclass("perflab.tools.Prefill")
    Paths = _jclass("java.nio.file.Paths")
    try:
        out = Prefill.run(
            Paths.get(str(d.resolve()), jpype.JArray(jpype.JString)([])),
            backend,
            jpype.JLong(p.keys),
            jpype.JInt(p.value_size),
            jpype.JLong(p.seed),
            p.key_prefix,
        )
    except Exception as e:
        raise BridgeError(f"prefill of {d} failed: {java_error_text(e)}") from None
    return json.loads(str(out))


def inspect(data_dir: str | os.PathLike) -> dict:
    """Describe a data directory without a server (``perflab.tools.Inspect``): backend, SSTables
    (file, entries, bytes, first/last key, level), totals."""
    d = Path(data_dir)
    if not d.is_dir():
        raise ValueError(f"data_dir: {d} is not a directory")
    Inspect = _jclass("perflab.tools.Inspect")
    Paths = _jclass("java.nio.file.Paths")
    try:
        out = Inspect.describe(Paths.get(str(d.resolve()), jpype.JArray(jpype.JString)([])))
    except Exception as e:
        raise BridgeError(f"inspect of {d} failed: {java_error_text(e)}") from None
    return json.loads(str(out))


def java_runtime_version() -> str:
    """``java.version`` of the in-process JVM."""
    System = _jclass("java.lang.System")
    return str(System.getProperty("java.version"))
