"""Results built by hand, in the shapes the lab's runs produce, for the analysis tests (no server): a load
with its summary and interval log, an experiment's result with events and profiles, a breakpoint search
with its probes."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from perflab import BreakpointCriteria, BreakpointParams, LoadParams
from perflab.breakpoint import BreakpointResult, Outcome, Probe
from perflab.experiment import ExperimentResult
from perflab.measure.judgement import Judgement
from perflab.measure.result import LoadResult
from perflab.measure.validity import Level, Validity
from perflab.profiling.profile import Profile
from perflab.timeline.attribution import attribute
from perflab.timeline.events import events_frame


class _Hdr:
    def __init__(self, intervals: pd.DataFrame):
        self.intervals = intervals


def intervals(p99s: list[float], step: float = 0.1) -> pd.DataFrame:
    """Corrected latency intervals of ``step`` seconds with these p99s (p50 a fifth, p99.9 1.5 times, max twice)."""
    n = len(p99s)
    return pd.DataFrame(
        {
            "tag": "corrected",
            "start_s": [i * step for i in range(n)],
            "end_s": [(i + 1) * step for i in range(n)],
            "count": [100] * n,
            "p50_ms": [p / 5 for p in p99s],
            "p99_ms": p99s,
            "p999_ms": [p * 1.5 for p in p99s],
            "max_ms": [p * 2 for p in p99s],
        }
    )


def load(
    p99: float = 1.0,
    rate: float = 500.0,
    achieved: float | None = None,
    requests: int = 5000,
    status: dict | None = None,
    errors: dict | None = None,
    p99s: list[float] | None = None,
) -> LoadResult:
    """A load whose summary gives p50 = p99/4, p99.9 = 2 p99, max = 3 p99 (spectrum included) and, with
    ``p99s``, an interval log."""
    points = [(0.0, p99 / 10), (0.5, p99 / 4), (0.9, p99 / 2), (0.99, p99), (0.999, 2 * p99), (1.0, 3 * p99)]
    summary = {
        "target_rate": rate,
        "achieved_rate": rate if achieved is None else achieved,
        "requests": requests,
        "latency_us": {"p50": p99 / 4 * 1000, "p99": p99 * 1000, "p99.9": 2 * p99 * 1000, "p100": 3 * p99 * 1000},
        "spectrum": [[ms * 1000, p, max(1, int(p * requests))] for p, ms in points],
        "status_codes": status if status is not None else {"200": requests},
        "errors": errors or {},
    }
    return LoadResult(
        LoadParams(path="/v0/entity", rate=rate),
        "http://127.0.0.1:1",
        [],
        0,
        f"console of {p99} ms",
        summary,
        hdr=_Hdr(intervals(p99s)) if p99s is not None else None,
    )


def events(*spans: tuple[str, float, float]) -> pd.DataFrame:
    """Server events ``(kind, start_s, duration_ms)`` on the intervals' time axis."""
    return events_frame([{"event": k, "ts_us": int(s * 1e6), "dur_us": int(d * 1000)} for k, s, d in spans], 0.0)


def profile(tmp_path: Path, name: str, collapsed: str, event: str = "cpu", html: bool = True) -> Profile:
    """A profile recorded to ``tmp_path/<name>.collapsed`` (and an HTML page when ``html``)."""
    path = tmp_path / f"{name}.collapsed"
    path.write_text(collapsed)
    page = None
    if html:
        page = tmp_path / f"{name}.html"
        page.write_text("<!DOCTYPE html><html><body>flame graph</body></html>")
    return Profile(
        event=event, requested_event=event, collapsed_path=path, html_path=page, started_at=0.0, stopped_at=1.0
    )


def experiment(
    lr: LoadResult,
    validity: str | None = "valid",
    reasons: tuple[str, ...] = (),
    ev=None,
    profiles: dict | None = None,
    run_id: str = "run-1",
    prefill: dict | None = None,
    meta: dict | None = None,
    run_dir: Path | None = None,
    heatmap: Path | None = None,
    spike_diff: dict | None = None,
):
    """An experiment's result around ``lr``: its validity, events (and the attribution of its spikes to
    them), profiles (a recording with a heatmap when given)."""
    attribution = attribute(lr.intervals, ev) if not lr.intervals.empty else None
    recording = SimpleNamespace(profiles=profiles, heatmap_path=heatmap) if profiles else None
    run = SimpleNamespace(id=run_id, dir=run_dir or Path("/nonexistent"), meta=meta or {})
    v = Validity(Level(validity), list(reasons)) if validity else None
    return ExperimentResult(
        run=run,
        load=lr,
        stats=pd.DataFrame(),
        server={},
        prefill=prefill,
        validity=v,
        recordings={None: recording} if recording is not None else {},
        events=ev,
        attribution=attribution,
        spike_diff=spike_diff,
    )


def search(
    rate: float | None,
    interval: tuple,
    points=(),
    outcome: str = "resolved",
    validity: str = "valid",
    seconds: float = 30.0,
) -> BreakpointResult:
    """A breakpoint search from ``(rate, passed, p99)`` probe points (passed None: inconclusive); its
    edges are the highest passing and the lowest failing rate, each probe's validity ``validity``; a
    passing probe carries its load."""
    probes = []
    for i, (r, ok, p99) in enumerate(points):
        why = "ok: p99 within the SLA" if ok else f"p99 {p99} ms > SLA 10 ms"
        j = Judgement(
            ok,
            [why],
            {"achieved_rate": r, "p50_ms": p99 / 4, "p99_ms": p99, "p999_ms": 2 * p99},
            {"verdict": validity, "reasons": [], "checks": {}},
        )
        probes.append(Probe(i, r, j, "bisect", load(p99, rate=r) if ok else None))
    passed = [r for r, ok, _ in points if ok]
    failed = [r for r, ok, _ in points if ok is False]
    edges = (max(passed, default=None), min(failed, default=None))
    return BreakpointResult(
        rate,
        interval,
        Outcome(outcome),
        probes,
        BreakpointParams(),
        BreakpointCriteria(),
        "converged",
        edges=edges,
        seconds=seconds,
    )
