"""The profile sections of a notebook: where each run's samples go, its flame graphs, and what changed
between two runs.

* :func:`category_sections` / :func:`show_categories` — per profiled event, the category bars of every run
  and a paragraph per run (categories and hottest frames)
* :func:`flamegraphs` / :func:`show_flamegraphs` — every flame graph a run recorded: one per event, the CPU
  heatmap, the latency spikes against the rest of the window
* :func:`difference_sections` / :func:`show_difference` — from one run to another: the differential flame
  graph per event with what grew and shrank by category, and async-profiler's own differential page

``runs``: label -> :class:`~perflab.experiment.ExperimentResult`. The ``show_`` functions display what the
others return, so a notebook cell is one call.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..profiling import flame
from . import commentary, plots

#: the categories the paragraphs always name when present (the storage work the lab reports ask about)
FOCUS = ("storage: memtable", "storage: SSTable read", "storage: flush")


def _with_samples(runs: Mapping, event: str) -> dict:
    return {k: r.profiles[event] for k, r in runs.items() if event in r.profiles and r.profiles[event].samples}


def category_sections(runs: Mapping, events, top: int = 4, focus: tuple[str, ...] = FOCUS) -> list:
    """For each of ``events`` that some run recorded samples of: ``(figure, markdown)``, the category bars of
    those runs and a paragraph per run (:func:`~perflab.analysis.commentary.describe_profile`)."""
    sections = []
    for event in events:
        profiles = _with_samples(runs, event)
        if profiles:
            fig = plots.category_bars(profiles, title=f"{event} profile: share of each run's samples by category")
            text = "\n\n".join(commentary.describe_profile(k, p, top=top, focus=focus) for k, p in profiles.items())
            sections.append((fig, text))
    return sections


def no_profile_note(runs: Mapping) -> str:
    """Why none of ``runs`` has a profile ('' when one has): each run's recorded reason."""
    if any(r.profiles for r in runs.values()):
        return ""
    return "No profile was recorded: " + "; ".join(
        str(r.run.meta.get("profile_unavailable", "not requested")) for r in runs.values()) + "."


def show_categories(runs: Mapping, events, top: int = 4, focus: tuple[str, ...] = FOCUS) -> None:
    """Display :func:`category_sections` (or why there is no profile)."""
    from .notebook import show_markdown

    show_markdown(no_profile_note(runs))
    for fig, text in category_sections(runs, events, top, focus):
        fig.show()
        show_markdown(text)


def flamegraphs(runs: Mapping) -> list[dict]:
    """Every flame graph the runs recorded, as :func:`~perflab.analysis.notebook.show_flamegraph`'s
    arguments: each event's graph, the CPU heatmap, and the latency spikes against the rest of the window."""
    out = []
    for label, r in runs.items():
        for event, p in r.profiles.items():
            if p.html_path is not None:
                out.append({"path": p.html_path, "title": f"{label}: {event} flame graph", "collapsed": p.collapsed_path,
                            "event": event})
        rec = getattr(r, "recording", None)
        if rec is not None and rec.heatmap_path is not None:
            out.append({"path": rec.heatmap_path, "title": f"{label}: CPU heatmap (async-profiler)",
                        "collapsed": next(iter(r.profiles.values())).collapsed_path})
        if r.spike_diff is not None:
            out.append({"path": r.spike_diff["diff_html"], "title": f"{label}: latency spikes against the rest (cpu)",
                        "collapsed": r.spike_diff["spikes"].collapsed_path, "base": r.spike_diff["rest_collapsed"]})
    return out


def show_flamegraphs(runs: Mapping) -> None:
    """Display :func:`flamegraphs`, each linked with its preview."""
    from .notebook import show_flamegraph

    for graph in flamegraphs(runs):
        show_flamegraph(**graph)


def difference_sections(base, new, events, base_label: str, new_label: str) -> list:
    """From run ``base`` to run ``new``, per event: ``(figure or None, markdown)``, the differential flame
    graph (:func:`~perflab.analysis.plots.flame_diff`) and what grew and shrank by category
    (:func:`~perflab.analysis.commentary.describe_diff`); the figure is ``None`` when one of the two has no
    samples of the event."""
    sections = []
    for event in events:
        a, b = base.profiles.get(event), new.profiles.get(event)
        if a is None or b is None or not a.samples or not b.samples:
            sections.append((None, f"No {event} samples in one of the two profiles: nothing to compare."))
            continue
        fig = plots.flame_diff(a, b, title=f"{event}: {new_label} relative to {base_label} (share of samples)")
        diff = flame.diff_profiles(a.stacks, b.stacks, by="category", event=event)
        sections.append((fig, commentary.describe_diff(diff, f"{base_label} ({event})", f"{new_label} ({event})",
                                                      name_col="key")))
    return sections


def show_difference(runs: Mapping, base_label: str, new_label: str, events) -> None:
    """Display :func:`difference_sections` from ``runs[base_label]`` to ``runs[new_label]``, then
    async-profiler's differential flame graph of the first event (written next to the new run's files);
    when one of the two runs is missing, say so."""
    from ..profiling import bridge
    from .notebook import show_flamegraph, show_markdown

    if base_label not in runs or new_label not in runs:
        show_markdown(f"Both `{base_label}` and `{new_label}` are needed for the differential view.")
        return
    base, new = runs[base_label], runs[new_label]
    for fig, text in difference_sections(base, new, events, base_label, new_label):
        if fig is not None:
            fig.show()
        show_markdown(text)
    first = list(events)[0]
    a, b = base.profiles.get(first), new.profiles.get(first)
    if a is not None and b is not None and a.samples and b.samples:
        out = new.run_dir / f"diff-{base_label}-{new_label}-{first}.html"
        bridge.diff_html(a.collapsed_path, b.collapsed_path, out)
        show_flamegraph(out, title=f"async-profiler's differential flame graph ({first}), {base_label} to {new_label}",
                        collapsed=b.collapsed_path, base=a.collapsed_path, event=first)
