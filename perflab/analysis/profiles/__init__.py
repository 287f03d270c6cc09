"""Profiles: where each run's CPU time, allocations and lock waits go (by category: network I/O, HTTP
parsing, storage...), async-profiler's own flame graphs, and what changed from one run to another.

A notebook tells it with a few calls (``runs``: label -> ExperimentResult)::

    profiles.categories(runs, ("cpu", "alloc", "lock")).show()   # bars per event, a paragraph per run
    profiles.difference(runs, "sync", "async", ("cpu",)).show()  # differential flame graphs, by category
    profiles.flamegraphs(runs).show()                            # every page, linked with a preview
    findings.show(profiles.findings(runs))                       # each run's CPU split

The sentences are :mod:`.sentences`', the figures :mod:`.figures`', the linked pages :mod:`.pages`'.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...profiling import bridge, flame
from ..section import Section
from .figures import CATEGORY_COLORS, category_bars, flame_diff
from .pages import FLAMEGRAPH_MIME, flamegraph, flamegraph_html, preview_svg, top_frames_html
from .sentences import (
    MIN_SAMPLES,
    describe_categories,
    describe_cpu_split,
    describe_diff,
    describe_profile,
    no_profile_note,
    unsplit,
)

__all__ = [
    # what a notebook calls
    "categories",
    "flamegraphs",
    "difference",
    "findings",
    # what the other subjects and the report build on
    "category_bars",
    "describe_categories",
    "unsplit",
    "MIN_SAMPLES",
    "flamegraph",
    "CATEGORY_COLORS",
    "FLAMEGRAPH_MIME",
    "flamegraph_html",
    "preview_svg",
    "top_frames_html",
]

#: the categories the paragraphs always name when present (the storage work the lab reports ask about)
FOCUS = ("storage: memtable", "storage: SSTable read", "storage: flush")


def _with_samples(runs: Mapping, event: str) -> dict:
    return {k: r.profiles[event] for k, r in runs.items() if event in r.profiles and r.profiles[event].samples}


def categories(runs: Mapping, events, top: int = 4, focus: tuple[str, ...] = FOCUS) -> Section:
    """For each of ``events`` that some run recorded samples of, the category bars of those runs and a
    paragraph per run (its ``top`` categories, the ``focus`` ones always, and its hottest frames); why there
    is no profile when none of them has one."""
    parts = [no_profile_note(runs)]
    for event in events:
        profiles = _with_samples(runs, event)
        split = {k: p for k, p in profiles.items() if unsplit(p) is None}
        if split:  # a profile too small (or too cold) to split has no bar: its paragraph says why
            parts.append(category_bars(split, title=f"{event} profile: share of each run's samples by category"))
        if profiles:
            parts.append("\n\n".join(describe_profile(k, p, top=top, focus=focus) for k, p in profiles.items()))
    return Section(parts)


def flamegraphs(runs: Mapping) -> Section:
    """Every page async-profiler wrote for the runs, linked with its preview: each event's flame graph, the CPU
    heatmap, and the latency spikes against the rest of the window."""
    parts = []
    for label, r in runs.items():
        for event, p in r.profiles.items():
            if p.html_path is not None:
                parts.append(
                    flamegraph(
                        p.html_path, title=f"{label}: {event} flame graph", collapsed=p.collapsed_path, event=event
                    )
                )
        rec = getattr(r, "recording", None)
        if rec is not None and rec.heatmap_path is not None:
            parts.append(
                flamegraph(
                    rec.heatmap_path,
                    title=f"{label}: CPU heatmap (async-profiler)",
                    collapsed=next(iter(r.profiles.values())).collapsed_path,
                )
            )
        if r.spike_diff is not None:
            parts.append(
                flamegraph(
                    r.spike_diff["diff_html"],
                    title=f"{label}: latency spikes against the rest (cpu)",
                    collapsed=r.spike_diff["spikes"].collapsed_path,
                    base=r.spike_diff["rest_collapsed"],
                )
            )
    return Section(parts)


def difference(runs: Mapping, base_label: str, new_label: str, events) -> Section:
    """From ``runs[base_label]`` to ``runs[new_label]``, per event: the differential flame graph and what grew
    and shrank by category (or why there is nothing to compare); then async-profiler's differential flame
    graph of the first event, written next to the new run's files."""
    if base_label not in runs or new_label not in runs:
        return Section([f"Both `{base_label}` and `{new_label}` are needed for the differential view."])
    base, new = runs[base_label], runs[new_label]
    parts = []
    for event in events:
        a, b = base.profiles.get(event), new.profiles.get(event)
        if a is None or b is None or not a.samples or not b.samples:
            parts.append(f"No {event} samples in one of the two profiles: nothing to compare.")
            continue
        diff = flame.diff_profiles(a.stacks, b.stacks, by="category", event=event)
        parts += [
            flame_diff(a, b, title=f"{event}: {new_label} relative to {base_label} (share of samples)"),
            describe_diff(diff, f"{base_label} ({event})", f"{new_label} ({event})", name_col="key"),
        ]
    first = list(events)[0]
    a, b = base.profiles.get(first), new.profiles.get(first)
    if a is not None and b is not None and a.samples and b.samples:
        out = new.run_dir / f"diff-{base_label}-{new_label}-{first}.html"
        bridge.diff_html(a.collapsed_path, b.collapsed_path, out)
        parts.append(
            flamegraph(
                out,
                title=f"async-profiler's differential flame graph ({first}), {base_label} to {new_label}",
                collapsed=b.collapsed_path,
                base=a.collapsed_path,
                event=first,
            )
        )
    return Section(parts)


def findings(runs: Mapping) -> list[str]:
    """Each run's CPU split: network I/O, HTTP parsing, storage (and the executor queue and locks when present)."""
    return describe_cpu_split(runs)
