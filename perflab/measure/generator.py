"""Running the load generator: perflab-load, or a user's real wrk2 (:class:`LoadTool`).

``run_load(url, LoadParams(...))`` starts the generator in its own process group, waits for it, and
returns a :class:`~perflab.measure.result.LoadResult`. ``start_load`` does the same without waiting, so a
caller can act at the start of the measured window (the profiler does).
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .. import children, paths
from ..config import LoadParams
from ..errors import LoadError
from .result import CONSOLE, HDR_LOG, STDERR, SUMMARY, LoadResult, read_outputs


@dataclass(frozen=True)
class LoadTool:
    """The generator a load runs with: ``perflab-load`` (built here) or ``wrk2`` (a user's binary)."""

    name: str
    binary: Path

    @classmethod
    def of(cls, params: LoadParams) -> LoadTool:
        if params.tool == "wrk2":
            return cls("wrk2", Path(params.wrk_binary))
        return cls("perflab-load", paths.loadgen_binary())

    @property
    def starts_at_a_time(self) -> bool:
        """Whether the tool takes a start time set ahead (perflab-load's ``--start-at``), so the measured
        window's edges are known before it starts."""
        return self.name == "perflab-load"

    def version(self) -> str | None:
        """The first line of the tool's ``-v`` output (for the run's record)."""
        try:
            out = subprocess.run([str(self.binary), "-v"], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        text = (out.stdout + out.stderr).strip().splitlines()
        return text[0] if text else None


def expected_seconds(p: LoadParams) -> float:
    """How long a load of ``p`` runs: its duration (or its steps'), and perflab-load's warm-up."""
    total = p.duration
    if p.rate_steps and p.step_duration:
        a, b, s = p.rate_steps
        total = max(total, (math.floor((b - a) / s + 1e-9) + 1) * p.step_duration)
    return total + (p.warmup if p.tool == "perflab-load" else 0)


class LoadProcess:
    """A running load generator (see :func:`start_load`). Without ``out_dir`` its files go to a temporary
    directory of its own, removed once they are read (:meth:`wait`) or the generator is stopped."""

    def __init__(
        self,
        url: str,
        params: LoadParams,
        out_dir: str | os.PathLike | None = None,
        cpu_prefix: list[str] | None = None,
        extra: list[str] | tuple = (),
    ):
        self.url = url
        self.extra = list(extra)
        self.cpu_prefix = list(cpu_prefix or [])
        self.params = params
        self._tmp = out_dir is None
        self.out_dir = Path(out_dir) if out_dir is not None else None  # a temporary one is made by start()
        self.proc: subprocess.Popen | None = None
        self.command: list[str] = []
        self.started_at = 0.0
        self.measure_start_monotonic = 0.0

    @property
    def binary(self) -> Path:
        return LoadTool.of(self.params).binary

    def start(self) -> LoadProcess:
        if self.out_dir is None:
            self.out_dir = Path(tempfile.mkdtemp(prefix="perflab-load-"))
        self.out_dir.mkdir(parents=True, exist_ok=True)
        try:
            return self._start()
        except BaseException:
            self.stop(0)
            raise

    def _start(self) -> LoadProcess:
        p = self.params
        binary = self.binary
        if p.tool == "wrk2" and p.warmup:
            # wrk2 has no warm-up flag: an unrecorded run at the same rate plays that role.
            self._run_wrk2_warmup(binary)
        self.command = [
            *self.cpu_prefix,
            str(binary),
            *p.args(self.url, self.out_dir / SUMMARY, self.out_dir / HDR_LOG, self.extra),
        ]
        self._stdout = open(self.out_dir / CONSOLE, "wb")
        self._stderr = open(self.out_dir / STDERR, "wb")
        self.started_at = time.time()
        t = time.monotonic()
        self.proc = subprocess.Popen(
            self.command,
            stdout=self._stdout,
            stderr=self._stderr,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=str(paths.repo_root()),
        )
        children.register(self.proc)
        self.measure_start_monotonic = t + (p.warmup if p.tool == "perflab-load" else 0.0)
        return self

    def _run_wrk2_warmup(self, binary: Path):
        wp = self.params.replace(duration=self.params.warmup, warmup=0, latency=False, u_latency=False)
        cmd = [*self.cpu_prefix, str(binary), *wp.args(self.url)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        children.register(proc)
        try:
            out, _ = proc.communicate(timeout=self.params.warmup + 60)
        except BaseException:
            children.kill_group(proc, 1)
            raise
        children.unregister(proc)
        if proc.returncode != 0:
            raise LoadError(
                f"wrk2 warm-up run exited with status {proc.returncode}", out.decode("utf-8", "replace")[-4000:]
            )

    @property
    def expected_seconds(self) -> float:
        return expected_seconds(self.params)

    def poll(self) -> int | None:
        return self.proc.poll() if self.proc else None

    def stop(self, grace_s: float = 5.0) -> None:
        """Interrupt the generator (SIGINT: it prints results so far), then kill its group."""
        try:
            if self.proc is not None:
                children.kill_group(self.proc, grace_s, sig=signal.SIGINT)
        finally:
            self._close()
            self._discard()

    def _discard(self):
        if self._tmp and self.out_dir is not None:
            shutil.rmtree(self.out_dir, ignore_errors=True)

    def _close(self):
        for f in (getattr(self, "_stdout", None), getattr(self, "_stderr", None)):
            if f is not None and not f.closed:
                f.close()

    def wait(self, timeout: float | None = None) -> LoadResult:
        """Wait for the generator and parse its outputs. Raises :class:`LoadError` on a non-zero exit
        (with the stderr tail) or when it overruns ``timeout`` (default: expected time + 60 s)."""
        if self.proc is None:
            raise RuntimeError("start() first")
        limit = timeout if timeout is not None else self.expected_seconds + 60
        try:
            try:
                rc = self.proc.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                tails = children.tail(self.out_dir / STDERR) + "\n" + children.tail(self.out_dir / CONSOLE)
                self.stop(1)
                raise LoadError(f"{self.binary.name} did not finish within {limit:g} s; killed", tails) from None
            except BaseException:
                self.stop(2)
                raise
            children.unregister(self.proc)
            self._close()
            ended = time.time()
            console = (self.out_dir / CONSOLE).read_text(errors="replace")
            err_tail = children.tail(self.out_dir / STDERR)
            if rc != 0:
                lines = [ln for ln in err_tail.splitlines() if ln.strip()]
                cause = f"{self.binary.name} exited with status {rc}" + (f": {lines[-1]}" if lines else "")
                raise LoadError(cause, err_tail + ("\n" + children.tail(self.out_dir / CONSOLE, 15) if console else ""))
            summary, hdr = read_outputs(self.out_dir, self.params, console, self.binary.name, err_tail)
            return LoadResult(
                params=self.params,
                url=self.url,
                command=self.command,
                returncode=rc,
                console=console,
                summary=summary,
                hdr=hdr,
                out_dir=None if self._tmp else self.out_dir,
                started_at=self.started_at,
                ended_at=ended,
                stderr_tail=err_tail,
                tool_version=summary.get("version"),
            )
        finally:
            self._discard()


def start_load(
    url: str, params: LoadParams, out_dir: str | os.PathLike | None = None, cpu_prefix: list[str] | None = None
) -> LoadProcess:
    """Start the generator without waiting; ``.wait()`` returns the :class:`LoadResult`."""
    return LoadProcess(url, params, out_dir, cpu_prefix).start()


def run_load(
    url: str, params: LoadParams, out_dir: str | os.PathLike | None = None, cpu_prefix: list[str] | None = None
) -> LoadResult:
    """Run one load against ``url`` and return its parsed result.

    ``out_dir`` keeps the raw files (``load-console.txt``, ``load-stderr.txt``, ``load-summary.json``,
    ``load-hdr.log``); without it they are read and deleted.
    """
    lp = LoadProcess(url, params, out_dir, cpu_prefix)
    lp.start()
    return lp.wait()
