"""The profile sections: category bars with a paragraph per run, every flame graph a run recorded, and the
difference between two runs."""

import plotly.graph_objects as go
import pytest
from IPython.core.interactiveshell import InteractiveShell  # noqa: F401  (display() needs IPython)
from synthetic import experiment, load, profile

from perflab.analysis import notebook as nb
from perflab.analysis import profiles
from perflab.profiling import bridge

SYNC = ("[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/net/NativeSocket.read 60\n"
        "[selector-1 tid=1];perflab/server/ApiHandler.handle;perflab/storage/lsm/MemTable.get 40\n")
ASYNC = ("[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/net/NativeSocket.read 30\n"
         "[worker-1 tid=2];java/util/concurrent/ThreadPoolExecutor.getTask 30\n"
         "[worker-1 tid=2];perflab/server/ApiHandler.handle;perflab/storage/lsm/MemTable.get 40\n")


@pytest.fixture
def shown(monkeypatch):
    """What the sections display, in order: figures (their titles) and IPython outputs."""
    import IPython.display as d

    out = []
    monkeypatch.setattr(d, "display", lambda obj, **kw: out.append(obj))
    monkeypatch.setattr(go.Figure, "show", lambda fig, *a, **kw: out.append(fig))
    return out


def _runs(tmp_path):
    sync_cpu = profile(tmp_path, "sync-profile-cpu", SYNC)
    heatmap = tmp_path / "sync-heatmap.html"
    heatmap.write_text("<!DOCTYPE html><html>heatmap</html>")
    spikes = profile(tmp_path, "sync-spikes", SYNC, html=False)
    rest = tmp_path / "sync-rest.collapsed"
    rest.write_text(SYNC)
    diff = tmp_path / "sync-spikes-diff.html"
    diff.write_text("<!DOCTYPE html><html>diff</html>")
    return {"sync": experiment(load(), profiles={"cpu": sync_cpu}, heatmap=heatmap, run_dir=tmp_path,
                               spike_diff={"spikes": spikes, "rest_collapsed": rest, "diff_html": diff}),
            "async": experiment(load(), profiles={"cpu": profile(tmp_path, "async-profile-cpu", ASYNC),
                                                  "lock": profile(tmp_path, "async-profile-lock", "", "lock", html=False)},
                                run_dir=tmp_path),
            "virtual": experiment(load(), meta={"profile_unavailable": "pid 7 is not a JVM"})}


def test_category_sections_draw_the_runs_with_samples_and_describe_each(tmp_path):
    runs = _runs(tmp_path)
    (fig, text), = profiles.category_sections(runs, ("cpu", "lock"))
    assert fig.layout.title.text == "cpu profile: share of each run's samples by category"
    assert list(fig.data[0].y) == ["sync", "async"]                          # the run without a profile is left out
    first, second = text.split("\n\n")
    assert first.startswith("**sync** (cpu, 100 samples): Of the CPU samples, 60% network read, 40% storage: memtable.")
    assert second.startswith("**async** (cpu, 100 samples): Of the CPU samples, 40% storage: memtable, 30% ")
    assert profiles.no_profile_note(runs) == ""
    assert profiles.no_profile_note({"virtual": runs["virtual"]}) == "No profile was recorded: pid 7 is not a JVM."


def test_show_categories_displays_figure_then_text(tmp_path, shown):
    profiles.show_categories(_runs(tmp_path), ("cpu",))
    assert isinstance(shown[0], go.Figure) and shown[1].data.startswith("**sync** (cpu, 100 samples)")
    shown.clear()
    profiles.show_categories({"virtual": _runs(tmp_path)["virtual"]}, ("cpu",))
    assert [s.data for s in shown] == ["No profile was recorded: pid 7 is not a JVM."]


def test_every_flame_graph_a_run_recorded(tmp_path):
    graphs = profiles.flamegraphs(_runs(tmp_path))
    assert [g["title"] for g in graphs] == ["sync: cpu flame graph", "sync: CPU heatmap (async-profiler)",
                                            "sync: latency spikes against the rest (cpu)", "async: cpu flame graph"]
    assert graphs[0]["path"].name == "sync-profile-cpu.html" and graphs[0]["event"] == "cpu"
    assert graphs[1]["collapsed"].name == "sync-profile-cpu.collapsed"
    assert graphs[2]["base"].name == "sync-rest.collapsed" and graphs[2]["collapsed"].name == "sync-spikes.collapsed"


def test_show_flamegraphs_links_each_with_its_preview(tmp_path, shown, monkeypatch):
    monkeypatch.chdir(tmp_path)
    profiles.show_flamegraphs(_runs(tmp_path))
    titles = [s[nb.FLAMEGRAPH_MIME]["title"] for s in shown]
    assert titles == [g["title"] for g in profiles.flamegraphs(_runs(tmp_path))]
    assert "href='sync-profile-cpu.html'" in shown[0]["text/html"] and "perflab-flame-preview" in shown[0]["text/html"]


def test_difference_from_one_run_to_another(tmp_path):
    runs = _runs(tmp_path)
    (fig, text), (none, why) = profiles.difference_sections(runs["sync"], runs["async"], ("cpu", "lock"), "sync", "async")
    assert fig.layout.title.text == "cpu: async relative to sync (share of samples)" and fig.data[0].type == "icicle"
    assert text == ("From sync (cpu) to async (cpu), grew: executor queue (+30 points); shrank: network read "
                    "(-30 points).")
    assert none is None and why == "No lock samples in one of the two profiles: nothing to compare."


def test_show_difference_adds_async_profilers_differential_page(tmp_path, shown, monkeypatch):
    written = []

    def diff_html(base, new, out):
        written.append((base.name, new.name, out.name))
        out.write_text("<!DOCTYPE html><html>differential</html>")

    monkeypatch.setattr(bridge, "diff_html", diff_html)
    monkeypatch.chdir(tmp_path)
    runs = _runs(tmp_path)
    profiles.show_difference(runs, "sync", "async", ("cpu",))
    assert written == [("sync-profile-cpu.collapsed", "async-profile-cpu.collapsed", "diff-sync-async-cpu.html")]
    assert isinstance(shown[0], go.Figure) and shown[1].data.startswith("From sync (cpu) to async (cpu), grew")
    assert shown[2][nb.FLAMEGRAPH_MIME]["title"] == "async-profiler's differential flame graph (cpu), sync to async"
    shown.clear()
    profiles.show_difference({"sync": runs["sync"]}, "sync", "async", ("cpu",))
    assert [s.data for s in shown] == ["Both `sync` and `async` are needed for the differential view."]
