"""What ``perflab gate``, ``perflab bisect`` and ``perflab history`` (:mod:`perflab.regress`) take beyond an A/B comparison's
parameters: whose commits (:class:`RepoParams`), and each command's own defaults of the comparison
(:class:`GateParams`, :class:`BisectParams`, :class:`HistoryParams`: an :class:`~perflab.config.ab.ABParams` with other defaults
and a few fields of their own).

Each comparison is :func:`perflab.compare_ab` of one commit against the base, so "slower" is its verdict on
``metric`` (the server's CPU per request by default: at a fixed rate it moves far less from pair to pair
than a latency percentile) beyond ``margin``, and ``alpha`` bounds the chance that it claims a difference
between identical servers.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ab import ABParams
from .fields import Params, option, with_default

#: the project file in your repository (:mod:`perflab.config.project`)
PROJECT_FILE = "perflab.toml"


@dataclass(frozen=True)
class RepoParams(Params):
    """Whose commits are compared: the built-in server of this checkout (``java-server/`` at each commit, built
    with Gradle: :class:`perflab.commits.Commit`), or your repository (``repo``): each commit exported whole,
    built with ``build`` in its own directory, and run as its ``project`` file declares it."""

    repo: str | None = option(
        None, "path", "your server's git repository (default: this checkout, the built-in server)", optional=True
    )
    build: str | None = option(
        None,
        "text",
        "the command that builds your server in a commit's exported tree "
        "(default: the project file's [server] build; none: nothing to build)",
        optional=True,
    )
    project: str = option(
        PROJECT_FILE,
        "text",
        "your server's declaration, relative to the repository: each "
        "commit's own copy, or the working tree's where a commit has none",
    )

    def _check(self):
        if self.repo is None and self.build is not None:
            raise ValueError(
                "build: only with repo (the built-in server is built with Gradle; PERFLAB_AB_BUILD "
                "replaces that command)"
            )


@dataclass(frozen=True)
class AtRate(Params):
    """The offered rate a gate, a bisection or a history compares at."""

    rate: float | None = option(
        None,
        "rate",
        "the offered rate compared at (default: the load's, 1000)",
        optional=True,
        min=0,
        min_open=True,
        short="-R",
    )


@dataclass(frozen=True)
class GateParams(ABParams):
    """``perflab gate BASE HEAD``: one interleaved comparison of HEAD against BASE for CI. Its default alpha
    is the stated bound on false alarms: the probability that it fails a pull request whose server is the
    same as the base's, whatever the noise."""

    metric: str = with_default(ABParams, "metric", "cpu")
    stop_at: str = with_default(ABParams, "stop_at", "not-worse")
    alpha: float = with_default(ABParams, "alpha", 1e-3)
    budget: float | None = with_default(ABParams, "budget", 240.0)
    idle_pairs: int = with_default(ABParams, "idle_pairs", 0)


@dataclass(frozen=True)
class BisectParams(ABParams):
    """``perflab bisect GOOD BAD``: each step one interleaved comparison of a commit against GOOD, with these
    parameters; ``alpha`` bounds each comparison's false claims. Where every commit builds, a bisection of
    N commits makes at most ``(1 + retries) x (ceil(log2 N) + 1)`` comparisons, so a history without a
    regression is reported as one with probability at most that many alphas (the result states the bound
    of the comparisons it made)."""

    metric: str = with_default(ABParams, "metric", "cpu")
    stop_at: str = with_default(ABParams, "stop_at", "not-worse")
    alpha: float = with_default(ABParams, "alpha", 1e-3)
    budget: float | None = with_default(ABParams, "budget", 120.0)
    idle_pairs: int = with_default(ABParams, "idle_pairs", 0)
    retries: int = option(
        1,
        "int",
        "a step that cannot decide is compared again this many times, each time with twice the pairs and budget",
        min=0,
        max=3,
    )


@dataclass(frozen=True)
class HistoryParams(ABParams):
    """``perflab history GOOD BAD``: every commit measured ``repeats`` times at one rate (each repeat a probe of
    ``probe_duration`` after ``warmup``, on a server warmed for ``server_warmup``), change points found on
    ``metric``'s series (steps within ``margin`` are none), and each one checked by an interleaved comparison of
    the commits on both sides with these parameters; ``alpha`` bounds each check's false claims, so a history
    without a change is reported with a regression with probability at most the checks made times alpha."""

    metric: str = with_default(ABParams, "metric", "cpu")
    stop_at: str = with_default(ABParams, "stop_at", "not-worse")
    alpha: float = with_default(ABParams, "alpha", 1e-3)
    budget: float | None = with_default(ABParams, "budget", 120.0)
    idle_pairs: int = with_default(ABParams, "idle_pairs", 0)
    repeats: int = option(
        3,
        "int",
        "probes of each commit (its interval: their range, which holds their median "
        "with probability 1 - 2^(1 - repeats): 75% for 3)",
        min=2,
        max=20,
    )
    check: bool = option(
        True,
        "bool",
        "check each change point by an interleaved comparison (without: candidates "
        "only, nothing is called a regression)",
    )

    def _check(self):
        super()._check()
        if self.metric not in ("cpu", "p50", "p99"):
            raise ValueError(f"metric: a history follows cpu, p50 or p99, got {self.metric!r}")
