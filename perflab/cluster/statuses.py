"""What the clients got, per interval of the run: answers by status (2xx, 4xx, 504, other 5xx) and no
answer at all (timeouts, refused or reset connections), on the latency timeline's axis.

The generator's JSON gives, per interval, the requests offered and completed and *all* errors together
(non-2xx/3xx statuses and socket errors, docs/architecture.md section 5); by status it counts only over the
whole run. So the statuses per interval come from the nodes' own counters, which are exact for what a
client can get from a cluster node (architecture section 7): ``cluster.coordinated`` counts client requests,
``requests.*.504`` only client answers (an internal request is never answered 504), ``requests.*.5xx``
other server errors, ``requests.*.{400,405,413}`` client errors (``404`` and ``421`` are left out: a GET's
404 is an answer, and both are also internal answers). Counters are interpolated at each bin's edges
within one incarnation of a node. What no node counted, the generator did: *no answer* = the generator's
errors minus the error statuses the nodes answered, which is exact up to the interpolation, except when
the run got 404s (counted by the generator as errors, indistinguishable on the nodes from internal 404s):
then it is left empty and the run's totals by kind stand alone.

(A generator that wrote its status codes and error kinds per interval would make all of this exact and
direct; see the report of issue #25.)
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

#: the bins' columns: what the clients got
COLUMNS = ["start_s", "end_s", "offered", "completed", "generator_errors", "answered", "4xx", "504", "5xx",
           "no_answer"]
_CLIENT_4XX = ("400", "405", "413")


def _sum_matching(row_cols: list[str], status_ok) -> list[str]:
    out = []
    for c in row_cols:
        parts = c.split(".")
        if len(parts) == 3 and parts[0] == "requests" and parts[2].isdigit() and status_ok(parts[2]):
            out.append(c)
    return out


def _node_counts(stats: pd.DataFrame, edges: np.ndarray) -> pd.DataFrame:
    """Per bin, summed over nodes: coordinated, 504, other 5xx, client 4xx (counters interpolated at the
    edges within each node incarnation)."""
    n = len(edges) - 1
    out = {k: np.zeros(n) for k in ("coordinated", "504", "5xx", "4xx")}
    if stats is None or stats.empty or "t_s" not in stats:
        return pd.DataFrame(out)
    cols = list(stats.columns)
    groups = {"coordinated": [c for c in ("cluster.coordinated",) if c in cols],
              "504": _sum_matching(cols, lambda s: s == "504"),
              "5xx": _sum_matching(cols, lambda s: s.startswith("5") and s != "504"),
              "4xx": _sum_matching(cols, lambda s: s in _CLIENT_4XX)}
    keys = ["node", "incarnation"] if "incarnation" in cols else ["node"] if "node" in cols else []
    for _, g in (stats.groupby(keys) if keys else [((), stats)]):
        g = g.sort_values("t_s")
        t = g["t_s"].to_numpy(dtype=float)
        if len(t) < 2:
            continue
        lo, hi = np.clip(edges[:-1], t[0], t[-1]), np.clip(edges[1:], t[0], t[-1])
        for k, cs in groups.items():
            if not cs:
                continue
            c = g[cs].apply(pd.to_numeric, errors="coerce").fillna(0).sum(axis=1).to_numpy(dtype=float)
            out[k] += np.interp(hi, t, c) - np.interp(lo, t, c)
    return pd.DataFrame(out)


def status_intervals(load, stats: pd.DataFrame | None, bin_s: float = 1.0) -> tuple[pd.DataFrame, str]:
    """The bins of ``bin_s`` seconds over the measured window (see the module docstring) and a note on
    what they can and cannot say. ``load``: the run's :class:`~perflab.measure.result.LoadResult`;
    ``stats``: the nodes' ``/v0/stats`` frame (with ``node`` and ``incarnation``), ``None`` without one."""
    if not bin_s > 0:
        raise ValueError(f"bin_s must be > 0, got {bin_s!r}")
    ivs = pd.DataFrame(load.summary.get("intervals") or [], columns=["start_s", "end_s", "offered", "completed",
                                                                     "errors"])
    end = float(ivs["end_s"].max()) if len(ivs) else float(load.duration_s)
    nbins = max(1, math.ceil(end / bin_s - 1e-9))
    edges = np.arange(nbins + 1) * bin_s
    edges[-1] = max(edges[-1], end)
    idx = np.clip(np.searchsorted(edges, ivs["start_s"].to_numpy(dtype=float), side="right") - 1, 0, nbins - 1)
    gen = ivs.assign(bin=idx).groupby("bin")[["offered", "completed", "errors"]].sum().reindex(range(nbins), fill_value=0)
    df = pd.DataFrame({"start_s": edges[:-1], "end_s": edges[1:], "offered": gen["offered"].to_numpy(),
                       "completed": gen["completed"].to_numpy(), "generator_errors": gen["errors"].to_numpy()})
    has_stats = stats is not None and not stats.empty and "cluster.coordinated" in stats
    codes = load.status_counts
    fours = sum(v for k, v in codes.items() if k == "404")
    if has_stats:
        nc = _node_counts(stats, edges).round()
        df["504"], df["5xx"], df["4xx"] = nc["504"].to_numpy(), nc["5xx"].to_numpy(), nc["4xx"].to_numpy()
        df["answered"] = (nc["coordinated"] - nc["504"]).clip(lower=0).to_numpy()
        if fours:
            df["no_answer"] = np.nan
            note = (f"statuses per interval from the nodes' counters; the run got {fours:,} 404s, which the "
                    f"generator counts as errors and the nodes cannot tell from internal 404s, so requests "
                    f"without an answer are given for the whole run only")
        else:
            df["no_answer"] = (df["generator_errors"] - df["504"] - df["5xx"] - df["4xx"]).clip(lower=0)
            note = ("statuses per interval from the nodes' counters (interpolated at the bins' edges); no answer = "
                    "the generator's errors minus the error statuses the nodes answered")
    else:
        df["answered"] = (df["completed"] - df["generator_errors"]).clip(lower=0)
        for c in ("4xx", "504", "5xx", "no_answer"):
            df[c] = np.nan
        note = ("the nodes report no /v0/stats: per interval only answered and the generator's errors (all kinds "
                "together); by status and kind for the whole run only")
    return df[COLUMNS], note


def totals(load) -> dict:
    """The whole run's answers by status and errors by kind, as the generator counted them (exact)."""
    codes = load.status_counts
    err = load.errors
    ok = sum(v for k, v in codes.items() if k.isdigit() and int(k) < 400)
    return {"requests": load.requests, "2xx/3xx": ok, "404": codes.get("404", 0),
            "4xx": sum(v for k, v in codes.items() if k.isdigit() and 400 <= int(k) < 500 and k != "404"),
            "504": codes.get("504", 0),
            "5xx": sum(v for k, v in codes.items() if k.isdigit() and int(k) >= 500 and k != "504"),
            "timeout": err.get("timeout", 0), "connect": err.get("connect", 0),
            "read": err.get("read", 0), "write": err.get("write", 0), "status_codes": codes}
