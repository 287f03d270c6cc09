"""``LoadParams``: one load (wrk2's command line plus perflab-load's extras)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from ..paths import resolve_script, script_arguments
from ..units import arg_duration, arg_rate
from .fields import Params, option

LOAD_TOOLS = ("perflab-load", "wrk2")


@dataclass(frozen=True)
class LoadParams(Params):
    """One load against a server. Units: requests/s, seconds.

    With ``rate_steps=(a, b, step)`` (and ``step_duration``) or ``ramp=(a, b)`` the rate changes within
    one run; ``rate`` then becomes the schedule's first rate and, for steps, ``duration`` covers every
    step (the generator refuses anything else). ``tool='wrk2'`` with ``wrk_binary`` runs a user's real
    wrk2 instead of perflab-load.
    """

    rate: float = option(
        1000.0, "rate", "requests per second, all connections together", min=0, min_open=True, short="-R"
    )
    duration: float = option(
        10.0, "duration", "the measured window (after the warm-up)", min=0, min_open=True, short="-d"
    )
    threads: int = option(1, "int", "generator threads", min=1, short="-t")
    connections: int = option(1, "int", "connections, all threads together", min=1, short="-c")
    script: str | None = option(
        None,
        "text",
        "wrk Lua script: a path or a name in wrk-scripts/ (none: plain GETs of path)",
        optional=True,
        short="-s",
    )
    script_args: tuple = option((), "texts", "arguments for the script's init(args)", flag="")
    path: str = option("/", "text", "request path when there is no script")
    warmup: float = option(0.0, "duration", "load sent before the window and not recorded", min=0)
    timeout: float | None = option(
        None,
        "duration",
        "a response this late is a timeout (generator default 2s)",
        min=0,
        min_open=True,
        optional=True,
    )
    latency: bool = option(True, "bool", "print the latency distribution (wrk2's -L)")
    u_latency: bool = option(False, "bool", "also record uncorrected latency (wrk2's -U)")
    headers: tuple = option((), "texts", "extra request header 'Name: value'", flag="--header")
    hdr_interval: float = option(
        0.1, "duration", "interval of the latency timeline (hdr log); whole-run percentiles stay exact", min=0.01
    )
    rate_steps: tuple | None = option(
        None, "rates", "rates A:B:S, A, A+S, ... B within one run", choices=(3,), optional=True
    )
    step_duration: float | None = option(
        None, "duration", "length of each rate step", min=0, min_open=True, optional=True
    )
    ramp: tuple | None = option(
        None, "rates", "rate grows from A to B over the duration (A:B)", choices=(2,), optional=True
    )
    ramp_curve: str = option(
        "linear",
        "enum",
        "shape of the ramp: linear, or exp (a constant factor per second: even resolution over decades of rates)",
        choices=("linear", "exp"),
    )
    stop_on_p99: float | None = option(
        None,
        "duration",
        "end the window early once consecutive intervals have p99 above this (bracketing a breakpoint with a ramp)",
        min=0,
        min_open=True,
        optional=True,
    )
    allow_misses: bool = option(
        False,
        "bool",
        "the workload reads keys the store may not hold on purpose (a 404 "
        "is then an answer); otherwise a GET load with fewer than 99% hits is invalid",
    )
    tool: str = option("perflab-load", "enum", "the generator", choices=LOAD_TOOLS)
    wrk_binary: str | None = option(None, "path", "a real wrk2 binary (with tool='wrk2')", optional=True, flag="--wrk")
    send_slack: float | None = option(
        None,
        "duration",
        "perflab-load may send a request this late so one "
        "wake-up sends several; the lateness stays in the corrected latency "
        "(unset: the generator's auto, 1/8 of a connection's interval up to "
        "100us)",
        min=0,
        max=0.01,
        optional=True,
    )

    def _check(self):
        if self.connections < self.threads:
            raise ValueError(f"connections: must be >= threads ({self.threads}), got {self.connections}")
        if self.script is not None:
            self._set("script", str(resolve_script(self.script)))
        if not self.path.startswith("/"):
            raise ValueError(f"path: must start with '/', got {self.path!r}")
        for h in self.headers:
            if ":" not in h:
                raise ValueError(f"headers: entries must look like 'Name: value', got {h!r}")
        if self.rate_steps is not None and self.ramp is not None:
            raise ValueError("rate_steps and ramp are exclusive: give one of them")
        if self.rate_steps is not None:
            a, b, s = self.rate_steps
            if b < a:
                raise ValueError(f"rate_steps: the end must be >= the start, got {self.rate_steps!r}")
            if self.step_duration is None:
                raise ValueError("step_duration: must be given with rate_steps")
            self._set("rate", a)
            self._set("duration", (math.floor((b - a) / s + 1e-9) + 1) * self.step_duration)
        elif self.ramp is not None:
            self._set("rate", self.ramp[0])
        if self.ramp_curve == "exp" and self.ramp is None:
            raise ValueError("ramp_curve: 'exp' needs a ramp")
        if self.warmup > self.duration:
            raise ValueError(
                f"warmup: must not be longer than the measured window ({self.duration:g} s), got {self.warmup:g} s"
            )
        if self.tool == "wrk2":
            self._check_wrk2()

    def _check_wrk2(self):
        if not self.wrk_binary:
            raise ValueError("wrk_binary: must be given when tool='wrk2'")
        if not Path(self.wrk_binary).is_file() or not os.access(self.wrk_binary, os.X_OK):
            raise ValueError(f"wrk_binary: {self.wrk_binary} is not an executable file")
        for name in ("rate_steps", "ramp", "stop_on_p99"):
            if getattr(self, name) is not None:
                raise ValueError(f"{name}: needs perflab-load; wrk2 has no rate schedule")
        if self.send_slack is not None:
            raise ValueError("send_slack: needs perflab-load; wrk2's timer has ~1 ms granularity anyway")
        for name in ("duration", "warmup"):
            v = getattr(self, name)
            if v and not float(v).is_integer():
                raise ValueError(f"{name}: must be whole seconds for wrk2, got {v}")

    @property
    def workload_name(self) -> str:
        """What run names call the workload: the script's name without ``.lua`` (``path`` without one)."""
        return Path(self.script).stem if self.script else "path"

    def script_arg(self, name: str, default: str | None = None) -> str | None:
        """The value of the script argument ``name=...`` (the last one given), else ``default``."""
        found = [a.split("=", 1)[1] for a in self.script_args if a.split("=", 1)[0] == name and "=" in a]
        return found[-1] if found else default

    @property
    def entity_api(self) -> tuple[str, str]:
        """The key-value endpoint the script's requests name: its ``path=`` and ``param=`` arguments (the
        course API, ``/v0/entity`` and ``id``, by default); a fill and the consistency checker use the same."""
        return self.script_arg("path", "/v0/entity"), self.script_arg("param", "id")

    def for_probe(self, duration: float, warmup: float) -> LoadParams:
        """This workload as one fixed-rate probe of ``duration`` after ``warmup``: no rate schedule, no early
        stop (a search or a comparison sets each probe's rate itself)."""
        return self.replace(
            duration=duration,
            warmup=warmup,
            rate_steps=None,
            step_duration=None,
            ramp=None,
            ramp_curve="linear",
            stop_on_p99=None,
        )

    def args(self, url: str, json_path=None, hdr_log_path=None, extra: list[str] | tuple = ()) -> list[str]:
        """The generator's command-line arguments (without the binary); ``extra`` flags (perflab-load's
        ``--segment``/``--start-at`` of one host's part) go before the URL."""
        a = [
            "-t",
            str(self.threads),
            "-c",
            str(self.connections),
            "-d",
            arg_duration(self.duration),
            "-R",
            arg_rate(self.rate),
        ]
        if self.script:
            a += ["-s", self.script]
        for h in self.headers:
            a += ["-H", h]
        if self.latency:
            a.append("-L")
        if self.u_latency:
            a.append("-U")
        if self.timeout is not None:
            a += ["--timeout", arg_duration(self.timeout)]
        if self.tool == "perflab-load":
            if self.warmup:
                a += ["--warmup", arg_duration(self.warmup)]
            if json_path:
                a += ["--json", str(json_path)]
            if hdr_log_path:
                a += ["--hdr-log", str(hdr_log_path), "--hdr-interval", arg_duration(self.hdr_interval)]
            if self.rate_steps:
                a += [
                    "--rate-steps",
                    ":".join(arg_rate(x) for x in self.rate_steps),
                    "--step-duration",
                    arg_duration(self.step_duration),
                ]
            if self.ramp:
                a += ["--ramp", ":".join(arg_rate(x) for x in self.ramp)]
                if self.ramp_curve != "linear":
                    a += ["--ramp-curve", self.ramp_curve]
            if self.stop_on_p99 is not None:
                a += ["--stop-on-p99", arg_duration(self.stop_on_p99)]
            if self.send_slack is not None:
                a += ["--send-slack", arg_duration(self.send_slack)]
        a += list(extra)
        a.append(url.rstrip("/") + self.path)
        if self.full_script_args:
            a += ["--", *self.full_script_args]
        return a

    @property
    def full_script_args(self) -> tuple:
        """``script_args`` as the script gets them: a script that takes ``threads=`` (each thread its own keys)
        gets ``-t``'s value unless it is given, so it never has to be typed twice."""
        if self.script and self.script_arg("threads") is None and "threads" in script_arguments(self.script):
            return (*self.script_args, f"threads={self.threads}")
        return tuple(self.script_args)
