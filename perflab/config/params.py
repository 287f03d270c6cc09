"""Typed, validated parameters for everything perflab runs.

All classes are frozen dataclasses: build one, then derive variants with :func:`dataclasses.replace`
(or the ``replace`` method), which validates again. Validation happens on construction and names
the bad field (``ValueError: rate must be > 0, got 0``), so a notebook fails in its first cell, not
minutes later inside a subprocess.

Units on the Python side are plain numbers: seconds, bytes, requests per second. Strings the tools
accept (``"4m"``, ``"500ms"``, ``"10k"``) are converted on construction.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..units import fmt_duration, fmt_rate, fmt_size, parse_duration, parse_rate, parse_size

BACKENDS = ("lsm", "memory", "rocksdb")
MODES = ("sync", "async", "virtual")
QUEUE_KINDS = ("array", "linked", "lifo")
WAL_POLICIES = ("none", "batch", "always")
PROFILE_EVENTS = ("cpu", "alloc", "lock", "wall", "itimer", "ctimer")
LOAD_TOOLS = ("perflab-load", "wrk2")
GC_FLAGS = {
    "g1": "-XX:+UseG1GC",
    "parallel": "-XX:+UseParallelGC",
    "serial": "-XX:+UseSerialGC",
    "z": "-XX:+UseZGC",
    "zgc": "-XX:+UseZGC",
    "shenandoah": "-XX:+UseShenandoahGC",
    "epsilon": "-XX:+UseEpsilonGC",
}


def _set(obj, name, value):
    object.__setattr__(obj, name, value)


def _choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")


def _int(name, value, minimum=None, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
        isinstance(value, float) and not value.is_integer()
    ):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _positive(name, value):
    if value is None or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return value


def _strings(name, value):
    if value is None:
        return ()
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a list of strings, got a single string {value!r}")
    out = tuple(value)
    for v in out:
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise ValueError(f"{name} must hold strings, got {v!r}")
    return tuple(str(v) for v in out)


class _Base:
    def replace(self, **changes):
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-friendly dict (tuples as lists)."""
        def conv(v):
            if isinstance(v, tuple):
                return [conv(x) for x in v]
            if isinstance(v, Path):
                return str(v)
            return v
        return {f.name: conv(getattr(self, f.name)) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class ServerConfig(_Base):
    """How to start the Java server (flags of ``perflab.server.Main`` plus JVM settings).

    ``selectors``/``workers`` ``None`` leave the server's default (CPU count). ``port=0`` lets the
    server pick a free port (it reports it in its ``ready`` line). ``heap`` sets ``-Xmx`` (and ``-Xms``
    when ``fixed_heap``). ``gc`` is one of ``g1, parallel, serial, z, shenandoah, epsilon``.
    ``debug_delay`` (seconds) is the server's artificial per-request delay, used by tests that need a
    server of known capacity; ``None`` leaves it off.
    """

    backend: str = "lsm"
    mode: str = "sync"
    selectors: int | None = None
    workers: int | None = None
    queue: int = 1024
    queue_kind: str = "array"
    memtable_size: int | str = 4 * 1024 * 1024
    max_immutable: int = 2
    flush_threads: int = 1
    compaction_threads: int = 1
    wal: str = "batch"
    wal_batch_delay: float | str = 0.005
    heap: int | str | None = None
    fixed_heap: bool = False
    gc: str | None = None
    jvm_flags: tuple[str, ...] = ()
    java_home: str | None = None
    host: str = "127.0.0.1"
    port: int = 0
    debug_delay: float | str | None = None
    extra_args: tuple[str, ...] = ()

    def __post_init__(self):
        _choice("backend", self.backend, BACKENDS)
        _choice("mode", self.mode, MODES)
        _choice("queue_kind", self.queue_kind, QUEUE_KINDS)
        _choice("wal", self.wal, WAL_POLICIES)
        _set(self, "selectors", _int("selectors", self.selectors, 1, allow_none=True))
        _set(self, "workers", _int("workers", self.workers, 1, allow_none=True))
        _set(self, "queue", _int("queue", self.queue, 1))
        _set(self, "memtable_size", parse_size(self.memtable_size, "memtable_size"))
        if self.memtable_size <= 0:
            raise ValueError(f"memtable_size must be > 0, got {self.memtable_size}")
        _set(self, "max_immutable", _int("max_immutable", self.max_immutable, 1))
        _set(self, "flush_threads", _int("flush_threads", self.flush_threads, 1))
        _set(self, "compaction_threads", _int("compaction_threads", self.compaction_threads, 1))
        _set(self, "wal_batch_delay", parse_duration(self.wal_batch_delay, "wal_batch_delay"))
        if self.heap is not None:
            heap = parse_size(self.heap, "heap")
            if heap < 16 * 1024 * 1024:
                raise ValueError(f"heap must be >= 16m, got {self.heap!r}")
            _set(self, "heap", heap)
        if self.gc is not None:
            gc = str(self.gc).lower().removesuffix("gc") if str(self.gc).lower() not in GC_FLAGS else str(self.gc).lower()
            if gc not in GC_FLAGS:
                raise ValueError(f"gc must be one of {', '.join(sorted(set(GC_FLAGS)))}, got {self.gc!r}")
            _set(self, "gc", gc)
        _set(self, "jvm_flags", _strings("jvm_flags", self.jvm_flags))
        for f in self.jvm_flags:
            if not f.startswith("-"):
                raise ValueError(f"jvm_flags entries must start with '-', got {f!r}")
        _set(self, "extra_args", _strings("extra_args", self.extra_args))
        if self.java_home is not None:
            jh = Path(self.java_home)
            if not (jh / "bin" / "java").exists():
                raise ValueError(f"java_home: {jh} has no bin/java")
            _set(self, "java_home", str(jh))
        if not isinstance(self.host, str) or not self.host:
            raise ValueError(f"host must be a non-empty string, got {self.host!r}")
        _set(self, "port", _int("port", self.port, 0))
        if self.port > 65535:
            raise ValueError(f"port must be <= 65535, got {self.port}")
        if self.debug_delay is not None:
            d = parse_duration(self.debug_delay, "debug_delay")
            _set(self, "debug_delay", d if d > 0 else None)

    @property
    def needs_data_dir(self) -> bool:
        return self.backend != "memory"

    def jvm_args(self) -> list[str]:
        """JVM flags in the order they are passed (heap, GC, then the user's flags last so they win)."""
        args = []
        if self.heap is not None:
            args.append(f"-Xmx{fmt_size(self.heap)}")
            if self.fixed_heap:
                args.append(f"-Xms{fmt_size(self.heap)}")
        if self.gc is not None:
            args.append(GC_FLAGS[self.gc])
        # async-profiler attaches later: without DebugNonSafepoints its Java stacks are skewed to safepoints;
        # StartAttachListener opens the attach socket at start-up instead of on the first attach, which a
        # JVM busy under load may answer too late (AttachNotSupportedException after 10 s).
        args += ["-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints", "-XX:+StartAttachListener"]
        args += list(self.jvm_flags)
        return args

    def server_args(self, data_dir: str | os.PathLike | None) -> list[str]:
        """``perflab.server.Main`` flags (architecture.md section 2)."""
        a = ["--host", self.host, "--port", str(self.port), "--backend", self.backend, "--mode", self.mode]
        if data_dir is not None:
            a += ["--data-dir", str(data_dir)]
        if self.selectors is not None:
            a += ["--selectors", str(self.selectors)]
        if self.workers is not None:
            a += ["--workers", str(self.workers)]
        a += ["--queue", str(self.queue), "--queue-kind", self.queue_kind,
              "--memtable-size", fmt_size(self.memtable_size), "--max-immutable", str(self.max_immutable),
              "--flush-threads", str(self.flush_threads), "--compaction-threads", str(self.compaction_threads),
              "--wal", self.wal, "--wal-batch-delay", fmt_duration(self.wal_batch_delay)]
        if self.debug_delay:
            a += ["--debug-delay", fmt_duration(self.debug_delay)]
        return a + list(self.extra_args)

    def storage_options(self) -> dict[str, str]:
        """Option map for ``StorageFactory.open`` / Prefill (same keys as the server flags)."""
        return {
            "memtable-size": fmt_size(self.memtable_size),
            "max-immutable": str(self.max_immutable),
            "flush-threads": str(self.flush_threads),
            "compaction-threads": str(self.compaction_threads),
            "wal": self.wal,
            "wal-batch-delay": fmt_duration(self.wal_batch_delay),
        }


@dataclass(frozen=True)
class LoadParams(_Base):
    """One fixed-rate load (wrk2's command line plus perflab-load's extras).

    ``rate`` is the total rate of the run in requests/s; ``duration`` the measured window in seconds;
    ``warmup`` seconds of load sent before it and not recorded (perflab-load's ``--warmup``; for a real
    wrk2, a separate unrecorded wrk2 run at the same rate). ``script`` is a path or a name in
    ``wrk-scripts/`` (``None``: plain GETs of ``path``); ``script_args`` go to the script's ``init``.
    ``rate_steps=(a, b, step)`` with ``step_duration`` or ``ramp=(a, b)`` sweep rates within one run;
    with a schedule, ``rate`` becomes its first rate and, for steps, ``duration`` covers every step
    (the generator refuses anything else).
    ``tool='wrk2'`` with ``wrk_binary`` runs a user's real wrk2 instead of perflab-load.
    ``send_slack`` (seconds, at most 10 ms) lets perflab-load send a request that late so one wake-up
    sends several: less generator CPU at mid rates, the lateness counted in the corrected latency.
    """

    rate: float | str = 1000.0
    duration: float | str = 10.0
    threads: int = 1
    connections: int = 1
    script: str | None = None
    script_args: tuple[str, ...] = ()
    path: str = "/"
    warmup: float | str = 0.0
    timeout: float | str | None = None
    latency: bool = True
    u_latency: bool = False
    headers: tuple[str, ...] = ()
    hdr_interval: float | str = 1.0
    rate_steps: tuple[float, float, float] | None = None
    step_duration: float | str | None = None
    ramp: tuple[float, float] | None = None
    tool: str = "perflab-load"
    wrk_binary: str | None = None
    send_slack: float | str = 0.0

    def __post_init__(self):
        _set(self, "rate", _positive("rate", parse_rate(self.rate, "rate")))
        _set(self, "duration", _positive("duration", parse_duration(self.duration, "duration")))
        _set(self, "threads", _int("threads", self.threads, 1))
        _set(self, "connections", _int("connections", self.connections, 1))
        if self.connections < self.threads:
            raise ValueError(f"connections must be >= threads ({self.threads}), got {self.connections}")
        _set(self, "script_args", _strings("script_args", self.script_args))
        if self.script is not None:
            from ..paths import resolve_script
            _set(self, "script", str(resolve_script(self.script)))
        if not isinstance(self.path, str) or not self.path.startswith("/"):
            raise ValueError(f"path must start with '/', got {self.path!r}")
        _set(self, "warmup", parse_duration(self.warmup, "warmup"))
        if self.warmup > self.duration:
            raise ValueError(f"warmup must not be longer than duration ({self.duration:g} s), got {self.warmup:g} s")
        if self.timeout is not None:
            _set(self, "timeout", _positive("timeout", parse_duration(self.timeout, "timeout")))
        _set(self, "headers", _strings("headers", self.headers))
        for h in self.headers:
            if ":" not in h:
                raise ValueError(f"headers entries must look like 'Name: value', got {h!r}")
        _set(self, "hdr_interval", _positive("hdr_interval", parse_duration(self.hdr_interval, "hdr_interval")))
        _choice("tool", self.tool, LOAD_TOOLS)
        _set(self, "send_slack", parse_duration(self.send_slack, "send_slack"))
        if not 0 <= self.send_slack <= 0.01:
            raise ValueError(f"send_slack must be between 0 and 10 ms, got {self.send_slack:g} s")
        if self.rate_steps is not None and self.ramp is not None:
            raise ValueError("rate_steps and ramp are exclusive: give one of them")
        if self.rate_steps is not None:
            try:
                a, b, s = (parse_rate(x, "rate_steps") for x in self.rate_steps)
            except TypeError:
                raise ValueError(f"rate_steps must be (start, end, step), got {self.rate_steps!r}") from None
            if a <= 0 or b < a or s <= 0:
                raise ValueError(f"rate_steps must be (start > 0, end >= start, step > 0), got {self.rate_steps!r}")
            _set(self, "rate_steps", (a, b, s))
            if self.step_duration is None:
                raise ValueError("step_duration must be given with rate_steps")
        if self.step_duration is not None:
            _set(self, "step_duration", _positive("step_duration", parse_duration(self.step_duration, "step_duration")))
        if self.ramp is not None:
            try:
                a, b = (parse_rate(x, "ramp") for x in self.ramp)
            except (TypeError, ValueError):
                raise ValueError(f"ramp must be (start, end) rates, got {self.ramp!r}") from None
            if a <= 0 or b <= 0:
                raise ValueError(f"ramp rates must be > 0, got {self.ramp!r}")
            _set(self, "ramp", (a, b))
        self._derive_from_schedule()
        if self.tool == "wrk2":
            if not self.wrk_binary:
                raise ValueError("wrk_binary must be given when tool='wrk2'")
            if not Path(self.wrk_binary).is_file() or not os.access(self.wrk_binary, os.X_OK):
                raise ValueError(f"wrk_binary: {self.wrk_binary} is not an executable file")
            if self.rate_steps or self.ramp:
                raise ValueError("rate_steps/ramp need perflab-load; wrk2 has no rate schedule")
            if self.send_slack:
                raise ValueError("send_slack needs perflab-load; wrk2's timer has ~1 ms granularity anyway")
            for n in ("duration", "warmup"):
                v = getattr(self, n)
                if v and not float(v).is_integer():
                    raise ValueError(f"{n} must be whole seconds for wrk2, got {v}")

    def _derive_from_schedule(self):
        if self.rate_steps is not None:
            a, b, s = self.rate_steps
            steps = math.floor((b - a) / s + 1e-9) + 1
            _set(self, "rate", a)
            _set(self, "duration", steps * self.step_duration)
            if self.warmup > self.duration:
                raise ValueError(f"warmup must not be longer than the steps' total ({self.duration:g} s), got {self.warmup:g} s")
        elif self.ramp is not None:
            _set(self, "rate", self.ramp[0])

    def args(self, url: str, json_path=None, hdr_log_path=None) -> list[str]:
        """The generator's command-line arguments (without the binary)."""
        a = ["-t", str(self.threads), "-c", str(self.connections), "-d", fmt_duration(self.duration),
             "-R", fmt_rate(self.rate)]
        if self.script:
            a += ["-s", self.script]
        for h in self.headers:
            a += ["-H", h]
        if self.latency:
            a.append("-L")
        if self.u_latency:
            a.append("-U")
        if self.timeout is not None:
            a += ["--timeout", fmt_duration(self.timeout)]
        if self.tool == "perflab-load":
            if self.warmup:
                a += ["--warmup", fmt_duration(self.warmup)]
            if json_path:
                a += ["--json", str(json_path)]
            if hdr_log_path:
                a += ["--hdr-log", str(hdr_log_path), "--hdr-interval", fmt_duration(self.hdr_interval)]
            if self.rate_steps:
                a += ["--rate-steps", ":".join(fmt_rate(x) for x in self.rate_steps),
                      "--step-duration", fmt_duration(self.step_duration)]
            if self.ramp:
                a += ["--ramp", ":".join(fmt_rate(x) for x in self.ramp)]
            if self.send_slack:
                a += ["--send-slack", fmt_duration(self.send_slack)]
        a.append(url.rstrip("/") + self.path)
        if self.script_args:
            a += ["--", *self.script_args]
        return a


@dataclass(frozen=True)
class ProfileParams(_Base):
    """What async-profiler records.

    ``event``: ``cpu`` (perf_events, falls back to ``itimer`` with a warning when perf_events is not
    usable and ``fallback`` is true), ``alloc``, ``lock``, ``wall``, ``itimer``, ``ctimer``.
    ``interval`` is seconds between samples for cpu/wall/itimer/ctimer; ``alloc_bytes`` the allocation
    sampling interval; ``lock_threshold`` the minimum contended time (seconds) recorded in lock mode.
    ``threads`` splits stacks by thread (thread name as the root frame).
    """

    event: str = "cpu"
    interval: float | str = 0.005
    alloc_bytes: int | str = 512 * 1024
    lock_threshold: float | str = 10e-6
    threads: bool = True
    fallback: bool = True
    jstackdepth: int = 2048
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __post_init__(self):
        _choice("event", self.event, PROFILE_EVENTS)
        _set(self, "interval", _positive("interval", parse_duration(self.interval, "interval")))
        _set(self, "alloc_bytes", parse_size(self.alloc_bytes, "alloc_bytes"))
        if self.alloc_bytes <= 0:
            raise ValueError(f"alloc_bytes must be > 0, got {self.alloc_bytes}")
        _set(self, "lock_threshold", parse_duration(self.lock_threshold, "lock_threshold"))
        _set(self, "jstackdepth", _int("jstackdepth", self.jstackdepth, 1))
        _set(self, "include", _strings("include", self.include))
        _set(self, "exclude", _strings("exclude", self.exclude))
        for p in self.include + self.exclude:
            if "," in p:
                raise ValueError(f"include/exclude patterns must not contain ',', got {p!r}")

    def agent_start_options(self, event: str | None = None) -> str:
        """The ``start,...`` command for the async-profiler agent."""
        ev = event or self.event
        opts = ["start"]
        if ev == "alloc":
            opts += ["event=alloc", f"alloc={self.alloc_bytes}"]
        elif ev == "lock":
            opts += ["event=lock", f"lock={int(self.lock_threshold * 1e9)}"]
        else:
            opts += [f"event={ev}", f"interval={int(self.interval * 1e9)}"]
        if self.threads:
            opts.append("threads")
        opts.append(f"jstackdepth={self.jstackdepth}")
        opts += [f"include={p}" for p in self.include] + [f"exclude={p}" for p in self.exclude]
        return ",".join(opts)


@dataclass(frozen=True)
class PrefillParams(_Base):
    """A deterministic bulk load of the data directory (``perflab.tools.Prefill``).

    Key ``i`` is ``key_prefix + str(i)`` for ``i`` in ``[0, keys)`` (the keys the workload scripts
    send); the value bytes derive from ``(seed, i)``.
    """

    keys: int = 100_000
    value_size: int | str = 100
    seed: int = 0
    key_prefix: str = "key"

    def __post_init__(self):
        _set(self, "keys", _int("keys", self.keys, 1))
        _set(self, "value_size", parse_size(self.value_size, "value_size"))
        _set(self, "seed", _int("seed", self.seed))
        if not isinstance(self.key_prefix, str):
            raise ValueError(f"key_prefix must be a string, got {self.key_prefix!r}")


@dataclass(frozen=True)
class BreakpointCriteria(_Base):
    """When a probe at a fixed rate counts as "the server keeps up".

    ``min_achieved``: achieved/target rate (0.99); ``sla_p99``: p99 bound in seconds (10 ms);
    ``max_error_ratio``: errors (socket errors + non-2xx/3xx) / requests (0.001);
    ``trend``: reject a probe whose per-interval latency grows during the probe (a queue building up),
    judged on the hdr log: the median p50 of the last third of intervals exceeds ``trend_factor`` times
    the first third's plus ``trend_floor`` seconds, and the rank correlation of p50 with time is at
    least ``trend_min_corr``.
    """

    min_achieved: float = 0.99
    sla_p99: float | str = 0.010
    max_error_ratio: float = 0.001
    trend: bool = True
    trend_factor: float = 2.0
    trend_floor: float | str = 0.001
    trend_min_corr: float = 0.6

    def __post_init__(self):
        if not (0 < self.min_achieved <= 1):
            raise ValueError(f"min_achieved must be in (0, 1], got {self.min_achieved!r}")
        _set(self, "sla_p99", _positive("sla_p99", parse_duration(self.sla_p99, "sla_p99")))
        if not (0 <= self.max_error_ratio < 1):
            raise ValueError(f"max_error_ratio must be in [0, 1), got {self.max_error_ratio!r}")
        if not self.trend_factor >= 1:
            raise ValueError(f"trend_factor must be >= 1, got {self.trend_factor!r}")
        _set(self, "trend_floor", parse_duration(self.trend_floor, "trend_floor"))
        if not (0 <= self.trend_min_corr <= 1):
            raise ValueError(f"trend_min_corr must be in [0, 1], got {self.trend_min_corr!r}")


@dataclass(frozen=True)
class BreakpointParams(_Base):
    """How the breakpoint search probes.

    Starting at ``start_rate``, rates grow by ``growth`` until a probe fails (or shrink until one
    passes), then the bracket is bisected until ``(hi - lo) <= precision * lo``; at most ``max_probes``
    probes. Each probe holds its rate for ``probe_duration`` seconds after ``warmup`` seconds, with
    ``cooldown`` seconds of idle between probes (or a fresh server with ``restart_server``).
    ``server_warmup``: seconds of unrecorded load at ``start_rate`` once, before the first probe (and
    after each restart), so the first probes do not measure the JIT compiling the request path.
    ``seed`` is appended to the script arguments as ``seed=<n>`` when ``seed_arg`` is true, so
    randomised scripts send the same keys on every search. ``retries``: a failed probe is repeated up
    to this many times and passes if any repetition passes (guards against a transient stall of a
    shared machine being taken for the server's limit; every repetition is recorded).
    """

    start_rate: float | str = 1000.0
    max_rate: float | str = 1_000_000.0
    min_rate: float | str = 10.0
    growth: float = 2.0
    precision: float = 0.05
    max_probes: int = 14
    server_warmup: float | str = 0.0
    probe_duration: float | str = 5.0
    warmup: float | str = 1.0
    cooldown: float | str = 1.0
    restart_server: bool = False
    seed: int = 0
    seed_arg: bool = False
    retries: int = 0

    def __post_init__(self):
        _set(self, "retries", _int("retries", self.retries, 0))
        for n in ("start_rate", "max_rate", "min_rate"):
            _set(self, n, _positive(n, parse_rate(getattr(self, n), n)))
        if not self.min_rate <= self.start_rate <= self.max_rate:
            raise ValueError(
                f"start_rate must be within [min_rate, max_rate] = [{self.min_rate:g}, {self.max_rate:g}], got {self.start_rate:g}")
        if not (self.growth > 1 and math.isfinite(self.growth)):
            raise ValueError(f"growth must be > 1, got {self.growth!r}")
        if not (0 < self.precision < 1):
            raise ValueError(f"precision must be in (0, 1), got {self.precision!r}")
        _set(self, "max_probes", _int("max_probes", self.max_probes, 2))
        _set(self, "probe_duration", _positive("probe_duration", parse_duration(self.probe_duration, "probe_duration")))
        _set(self, "warmup", parse_duration(self.warmup, "warmup"))
        _set(self, "cooldown", parse_duration(self.cooldown, "cooldown"))
        _set(self, "server_warmup", parse_duration(self.server_warmup, "server_warmup"))
        _set(self, "seed", _int("seed", self.seed))
