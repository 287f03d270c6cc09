"""What the clients got, per interval of the run: answers by status (2xx/3xx and a GET's 404, other 4xx,
504, other 5xx) and no answer at all (timeouts, refused or reset connections), on the latency timeline's
axis.

perflab-load counts them itself, per interval of its JSON summary (``intervals[].status_codes`` and
``intervals[].error_kinds``; a split load's parts add up exactly, :mod:`perflab.measure.merge`): what each
client saw, from any server, with or without ``/v0/stats``. The bins add the intervals that start in them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

#: the bins' columns: what the clients got
COLUMNS = ["start_s", "end_s", "offered", "completed", "generator_errors", "answered", "4xx", "504", "5xx", "no_answer"]
#: error kinds without an answer (``status`` is an answer with an error status, counted by its code)
NO_ANSWER = ("connect", "read", "write", "timeout")


def _status_class(code: str) -> str:
    """``answered`` (2xx/3xx, and 404: a GET's "not found" is an answer), ``4xx``, ``504`` or ``5xx``."""
    if not code.isdigit() or code == "404" or int(code) < 400:
        return "answered"
    return "504" if code == "504" else "5xx" if int(code) >= 500 else "4xx"


def status_intervals(load, bin_s: float = 1.0) -> tuple[pd.DataFrame, str]:
    """The bins of ``bin_s`` seconds over the measured window (see the module docstring) and a note on what
    they say. ``load``: the run's :class:`~perflab.measure.result.LoadResult` (perflab-load's)."""
    if not bin_s > 0:
        raise ValueError(f"bin_s must be > 0, got {bin_s!r}")
    ivs = load.summary.get("intervals") or []
    end = max((float(iv["end_s"]) for iv in ivs), default=float(load.duration_s))
    nbins = max(1, math.ceil(end / bin_s - 1e-9))
    edges = np.arange(nbins + 1) * bin_s
    edges[-1] = max(edges[-1], end)
    rows = {c: np.zeros(nbins) for c in COLUMNS[2:]}
    for iv in ivs:
        b = min(max(int(np.searchsorted(edges, float(iv["start_s"]), side="right")) - 1, 0), nbins - 1)
        rows["offered"][b] += iv.get("offered") or 0
        rows["completed"][b] += iv.get("completed") or 0
        rows["generator_errors"][b] += iv.get("errors") or 0
        for code, n in (iv.get("status_codes") or {}).items():
            rows[_status_class(str(code))][b] += n
        rows["no_answer"][b] += sum((iv.get("error_kinds") or {}).get(k, 0) for k in NO_ANSWER)
    df = pd.DataFrame({"start_s": edges[:-1], "end_s": edges[1:], **rows})
    note = (
        f"what the clients got per {bin_s:g} s, as the generator counted it: answers by status (404 an answer), "
        f"and requests without one (timeouts, refused or reset connections)"
    )
    return df[COLUMNS], note


def totals(load) -> dict:
    """The whole run's answers by status and errors by kind, as the generator counted them (exact)."""
    codes = load.status_counts
    err = load.errors
    ok = sum(v for k, v in codes.items() if k.isdigit() and int(k) < 400)
    return {
        "requests": load.requests,
        "2xx/3xx": ok,
        "404": codes.get("404", 0),
        "4xx": sum(v for k, v in codes.items() if k.isdigit() and 400 <= int(k) < 500 and k != "404"),
        "504": codes.get("504", 0),
        "5xx": sum(v for k, v in codes.items() if k.isdigit() and int(k) >= 500 and k != "504"),
        "timeout": err.get("timeout", 0),
        "connect": err.get("connect", 0),
        "read": err.get("read", 0),
        "write": err.get("write", 0),
        "status_codes": codes,
    }
