"""One load split over several perflab-load processes (``--segment I/N --start-at T``), read back as one.

Every part runs its share of one schedule (docs/architecture.md section 5: "Merging the logs of a split
run"): the hdr logs' intervals lie on one grid, so the merged log adds the histograms of the intervals with
the same ``StartTimestamp`` and tag; the JSON summaries add their counts (requests, errors by kind, status
codes, offered, ``intervals[]`` element by element) and the latency numbers are read from the merged
histograms, so the whole run's percentiles are exact, not averages of the parts'. What cannot be merged
exactly is said so: ``schedule_lag_us`` holds the worst part's value of each statistic (the mean weighted by
requests). The parts' own numbers stay in ``parts`` (what each entry achieved against its share).

:func:`merge_parts` writes the merged ``load-summary.json``, ``load-hdr.log``, ``load-console.txt`` and
``load-stderr.txt`` next to the parts, so :class:`~perflab.measure.result.LoadResult` and
:meth:`perflab.records.Run.load` read a split run like any other.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from hdrh.histogram import HdrHistogram

from .hdrlog import RE_LINE, mean_value, spectrum_from_histogram
from .result import CONSOLE, HDR_LOG, STDERR, SUMMARY

#: the percentiles of the summary's ``latency_us`` (name -> percentile)
_LEVELS = {"p50": 50, "p75": 75, "p90": 90, "p99": 99, "p99.9": 99.9, "p99.99": 99.99, "p99.999": 99.999}
_HIGHEST = 3_600_000_000


def _new_hist(like: HdrHistogram | None = None) -> HdrHistogram:
    """An empty histogram; shaped like ``like`` so adding it takes hdrh's fast path (one array addition,
    not a loop over every bucket in Python)."""
    if like is None:
        return HdrHistogram(1, _HIGHEST, 3)
    return HdrHistogram(like.lowest_trackable_value, like.highest_trackable_value, like.significant_figures)


def latency_block(h: HdrHistogram | None) -> dict | None:
    """The summary's ``latency_us`` object from a histogram of microseconds (the generator's conventions:
    percentiles are highest-equivalent values, ``max`` the lowest value of the highest bucket)."""
    if h is None or h.get_total_count() == 0:
        return None
    out = {"min": h.get_min_value(), "max": h.get_lowest_equivalent_value(h.max_value),
           "mean": round(mean_value(h), 2), "stdev": round(h.get_stddev(), 3)}
    out.update({k: h.get_value_at_percentile(p) for k, p in _LEVELS.items()})
    out["p100"] = h.get_max_value()
    return out


def _spectrum_rows(h: HdrHistogram | None) -> list | None:
    if h is None or h.get_total_count() == 0:
        return None
    sp = spectrum_from_histogram(h, unit_ms=1.0)
    return [[int(v), float(p), int(c)] for v, p, c in zip(sp["latency_ms"], sp["percentile"], sp["total_count"])]


def _histograms(path: Path):
    """``(tag, start_s, end_s, histogram)`` of each interval line of an hdr log, nothing computed from them
    (:func:`~perflab.measure.hdrlog.read_hdr_log` also takes each interval's percentiles: seconds per log)."""
    for n, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith('"StartTimestamp"'):
            continue
        m = RE_LINE.match(line)
        if not m:
            raise ValueError(f"{path}:{n}: not an interval line: {line[:80]!r}")
        s, length = float(m.group(2)), float(m.group(3))
        yield m.group(1) or "corrected", s, s + length, HdrHistogram.decode(m.group(5))


def merge_hdr_logs(paths: list[Path], out: Path) -> dict[str, HdrHistogram | None]:
    """Add the parts' hdr logs interval by interval (same start, same tag) into ``out``; returns the whole
    run's ``corrected`` and ``uncorrected`` histograms."""
    merged: dict[tuple[str, float], list] = {}
    for path in paths:
        for tag, s, e, h in _histograms(path):
            key = (tag, round(s, 3))
            if key not in merged:
                merged[key] = [e, _new_hist(h)]
            merged[key][0] = max(merged[key][0], e)
            merged[key][1].add(h)
    head = [ln for ln in Path(paths[0]).read_text().splitlines() if ln.startswith("#[")
            and not ln.startswith(("#[Segment", "#[Step", "#[Stopped"))]
    steps = [ln for ln in Path(paths[0]).read_text().splitlines() if ln.startswith("#[Step")]
    step_starts = {}
    for ln in steps:
        try:
            step_starts[round(float(ln.split("start=")[1].split()[0]), 3)] = ln
        except (IndexError, ValueError):
            continue
    lines = head + [f"#[Merged: {len(paths)} parts of one run (--segment), histograms of equal intervals added]",
                    '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"']
    totals = {"corrected": None, "uncorrected": None}
    for (tag, s) in sorted(merged, key=lambda k: (k[1], k[0] != "corrected")):
        e, h = merged[(tag, s)]
        if tag == "corrected" and s in step_starts:
            lines.append(step_starts.pop(s))
        prefix = "" if tag == "corrected" else f"Tag={tag},"
        mx = h.get_lowest_equivalent_value(h.max_value) / 1000.0 if h.get_total_count() else 0.0
        lines.append(f"{prefix}{s:.3f},{e - s:.3f},{mx:.3f},{h.encode().decode()}")
        if totals[tag] is None:
            totals[tag] = _new_hist(h)
        totals[tag].add(h)
    out.write_text("\n".join(lines) + "\n")
    return totals


def merge_summaries(parts: list[dict], hists: dict[str, HdrHistogram | None], labels: list[str]) -> dict:
    """The JSON summary of the whole run from its parts' summaries and the merged histograms."""
    first = parts[0]
    n = sum(p.get("requests") or 0 for p in parts)
    dur = max(float(p.get("duration_s") or 0) for p in parts)
    out = {k: first.get(k) for k in ("tool", "version", "script", "script_args", "warmup_s", "send_slack_us")}
    out["url"] = ",".join(str(p.get("url")) for p in parts)
    for k in ("threads", "connections", "requests", "bytes_read", "bytes_written", "offered", "unsent"):
        out[k] = sum(p.get(k) or 0 for p in parts)
    out["duration_s"] = dur
    out["target_rate"] = sum(float(p.get("target_rate") or 0) for p in parts)
    out["achieved_rate"] = n / dur if dur else 0.0
    out["start_ms"] = min(p.get("start_ms") or 0 for p in parts)
    out["end_ms"] = max(p.get("end_ms") or 0 for p in parts)
    out["warmup_start_ms"] = min(p.get("warmup_start_ms") or 0 for p in parts)
    out["errors"] = _add_dicts(p.get("errors") for p in parts)
    out["status_codes"] = _add_dicts(p.get("status_codes") for p in parts)
    out["latency_us"] = latency_block(hists.get("corrected"))
    out["latency_uncorrected_us"] = latency_block(hists.get("uncorrected"))
    out["steps"] = _merge_steps(parts)
    out["interrupted"] = any(p.get("interrupted") for p in parts)
    out["send_slack_auto"] = first.get("send_slack_auto")
    out["schedule_lag_us"] = _worst_lag(parts)
    out["cpu"] = {"user_s": sum((p.get("cpu") or {}).get("user_s", 0) for p in parts),
                  "sys_s": sum((p.get("cpu") or {}).get("sys_s", 0) for p in parts),
                  "cpus_allowed": sorted({c for p in parts for c in (p.get("cpu") or {}).get("cpus_allowed", [])}),
                  "threads": [t for p in parts for t in (p.get("cpu") or {}).get("threads", [])]}
    out["spectrum"] = _spectrum_rows(hists.get("corrected"))
    out["spectrum_uncorrected"] = _spectrum_rows(hists.get("uncorrected"))
    out["intervals"] = _merge_intervals(parts)
    out["stopped_early"] = None
    out["parts"] = [{"label": lab, "url": p.get("url"), "target_rate": p.get("target_rate"),
                     "achieved_rate": p.get("achieved_rate"), "requests": p.get("requests"),
                     "offered": p.get("offered"), "unsent": p.get("unsent"), "errors": p.get("errors"),
                     "status_codes": p.get("status_codes"), "segment": p.get("segment"),
                     "start_at": p.get("start_at"), "latency_us": {k: (p.get("latency_us") or {}).get(k)
                                                                  for k in ("p50", "p99", "max")}}
                    for lab, p in zip(labels, parts)]
    return out


def _add_dicts(ds) -> dict:
    out: dict = {}
    for d in ds:
        for k, v in (d or {}).items():
            out[k] = out.get(k, 0) + (v or 0)
    return out


def _merge_steps(parts: list[dict]) -> list[dict]:
    by_index: dict[int, dict] = {}
    for p in parts:
        for s in p.get("steps") or []:
            m = by_index.setdefault(s["index"], {"index": s["index"], "target_rate": 0.0, "start_s": s["start_s"],
                                                 "end_s": s["end_s"], "requests": 0, "achieved_rate": 0.0,
                                                 "errors": 0, "latency_us": {}})
            m["target_rate"] += s.get("target_rate") or 0
            m["requests"] += s.get("requests") or 0
            m["achieved_rate"] += s.get("achieved_rate") or 0
            m["errors"] += s.get("errors") or 0
            m["start_s"], m["end_s"] = min(m["start_s"], s["start_s"]), max(m["end_s"], s["end_s"])
            for k in ("p50", "p99", "max"):   # the worst part's: a step's merged histogram is in the hdr log
                v = (s.get("latency_us") or {}).get(k)
                if v is not None:
                    m["latency_us"][k] = max(m["latency_us"].get(k, 0), v)
    return [by_index[i] for i in sorted(by_index)]


def _worst_lag(parts: list[dict]) -> dict | None:
    lags = [(p.get("schedule_lag_us"), p.get("requests") or 0) for p in parts if p.get("schedule_lag_us")]
    if not lags:
        return None
    out = {k: max(lag.get(k, 0) for lag, _ in lags) for k in ("p50", "p99", "p999", "max")}
    n = sum(w for _, w in lags)
    out["mean"] = round(sum(lag.get("mean", 0) * w for lag, w in lags) / n, 2) if n else 0.0
    out["late_1ms"] = sum(lag.get("late_1ms", 0) for lag, _ in lags)
    return out


def _merge_intervals(parts: list[dict]) -> list[dict]:
    rows: dict[float, dict] = {}
    for p in parts:
        for iv in p.get("intervals") or []:
            key = round(iv["start_s"], 3)
            m = rows.setdefault(key, {"start_s": iv["start_s"], "end_s": iv["end_s"], "offered": 0, "completed": 0,
                                      "errors": 0})
            m["end_s"] = max(m["end_s"], iv["end_s"])
            for k in ("offered", "completed", "errors"):
                m[k] += iv.get(k) or 0
    return [rows[k] for k in sorted(rows)]


def merge_parts(part_dirs: list[Path], out_dir: Path, labels: list[str]) -> dict:
    """Merge the parts' files in ``part_dirs`` into ``out_dir`` (see the module docstring); returns the
    merged summary."""
    summaries = [json.loads((d / SUMMARY).read_text()) for d in part_dirs]
    logs = [d / HDR_LOG for d in part_dirs]
    hists = merge_hdr_logs(logs, out_dir / HDR_LOG) if all(p.is_file() for p in logs) else {}
    merged = merge_summaries(summaries, hists, labels)
    (out_dir / SUMMARY).write_text(json.dumps(merged, indent=2, allow_nan=False,
                                              default=lambda o: None if isinstance(o, float) and not math.isfinite(o)
                                              else str(o)) + "\n")
    for name in (CONSOLE, STDERR):
        text = "".join(f"=== {lab}: {d / name} ===\n{(d / name).read_text(errors='replace') if (d / name).is_file() else ''}\n"
                       for lab, d in zip(labels, part_dirs))
        (out_dir / name).write_text(text)
    return merged
