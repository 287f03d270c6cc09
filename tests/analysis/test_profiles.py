"""Profiles: where each run's samples go (bars and a paragraph per run), every page async-profiler wrote linked
with a preview, and the difference between two runs."""

import pandas as pd
import pytest
import synthetic as syn
from synthetic import experiment, load, profile

from perflab.analysis import profiles
from perflab.analysis.profiles import figures as pfig
from perflab.analysis.profiles import sentences as psay
from perflab.profiling import bridge, flame

SYNC = (
    "[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/net/NativeSocket.read 1200\n"
    "[selector-1 tid=1];perflab/server/ApiHandler.handle;perflab/storage/lsm/MemTable.get 800\n"
)


ASYNC = (
    "[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/net/NativeSocket.read 600\n"
    "[worker-1 tid=2];java/util/concurrent/ThreadPoolExecutor.getTask 600\n"
    "[worker-1 tid=2];perflab/server/ApiHandler.handle;perflab/storage/lsm/MemTable.get 800\n"
)


def _runs(tmp_path):
    sync_cpu = profile(tmp_path, "sync-profile-cpu", SYNC)
    heatmap = tmp_path / "sync-heatmap.html"
    heatmap.write_text("<!DOCTYPE html><html>heatmap</html>")
    spikes = profile(tmp_path, "sync-spikes", SYNC, html=False)
    rest = tmp_path / "sync-rest.collapsed"
    rest.write_text(SYNC)
    diff = tmp_path / "sync-spikes-diff.html"
    diff.write_text("<!DOCTYPE html><html>diff</html>")
    return {
        "sync": experiment(
            load(),
            profiles={"cpu": sync_cpu},
            heatmap=heatmap,
            run_dir=tmp_path,
            spike_diff={"spikes": spikes, "rest_collapsed": rest, "diff_html": diff},
        ),
        "async": experiment(
            load(),
            profiles={
                "cpu": profile(tmp_path, "async-profile-cpu", ASYNC),
                "lock": profile(tmp_path, "async-profile-lock", "", "lock", html=False),
            },
            run_dir=tmp_path,
        ),
        "virtual": experiment(load(), meta={"profile_unavailable": "pid 7 is not a JVM"}),
    }


def test_category_sections_draw_the_runs_with_samples_and_describe_each(tmp_path):
    runs = _runs(tmp_path)
    note, fig, text = profiles.categories(runs, ("cpu", "lock")).parts
    assert note == ""  # a run has a profile
    assert fig.layout.title.text == "cpu profile: share of each run's samples by category"
    assert list(fig.data[0].y) == ["sync", "async"]  # the run without a profile is left out
    first, second = text.split("\n\n")
    assert first.startswith(
        "**sync** (cpu): Of the 2,000 CPU samples, 60% (1,200) network read, 40% (800) storage: memtable."
    )
    assert second.startswith("**async** (cpu): Of the 2,000 CPU samples, 40% (800) storage: memtable, 30% (600) ")
    none = profiles.categories({"virtual": runs["virtual"]}, ("cpu",))
    assert none.parts == ["No profile was recorded: pid 7 is not a JVM."]


def test_every_flame_graph_a_run_recorded_linked_with_its_preview(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    graphs = profiles.flamegraphs(_runs(tmp_path)).parts
    info = [g[profiles.FLAMEGRAPH_MIME] for g in graphs]
    assert [i["title"] for i in info] == [
        "sync: cpu flame graph",
        "sync: CPU heatmap (async-profiler)",
        "sync: latency spikes against the rest (cpu)",
        "async: cpu flame graph",
    ]
    assert info[0]["path"].endswith("sync-profile-cpu.html") and info[0]["event"] == "cpu"
    assert info[1]["collapsed"].endswith("sync-profile-cpu.collapsed")
    assert info[2]["collapsed"].endswith("sync-spikes.collapsed")
    assert (
        "href='sync-profile-cpu.html'" in graphs[0]["text/html"] and "perflab-flame-preview" in graphs[0]["text/html"]
    )


COLLAPSED = (
    "[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/net/NativeSocket.read 75\n"
    "[selector-1 tid=1];one/nio/net/SelectorThread.run;perflab/storage/lsm/MemTable.get 25\n"
)


def test_flamegraph_is_linked_with_a_preview_not_embedded(tmp_path, monkeypatch):
    page = tmp_path / "profile-cpu.html"
    page.write_text("<html><script>var s = 1;</script><body>async-profiler page body</body></html>")
    (tmp_path / "profile-cpu.collapsed").write_text(COLLAPSED)
    monkeypatch.chdir(tmp_path)
    bundle = profiles.flamegraph(page, title="cpu <1>")
    info = bundle[profiles.FLAMEGRAPH_MIME]
    assert info["path"] == str(page.resolve()) and info["event"] == "cpu" and info["title"] == "cpu <1>"
    out = bundle["text/html"]
    assert "cpu &lt;1&gt;" in out and "href='profile-cpu.html'" in out  # relative to the kernel's directory
    assert "srcdoc" not in out and "async-profiler page body" not in out  # the page is not embedded
    assert "<svg class='perflab-flame-preview'" in out and "NativeSocket.read" in out and "75.0%" in out
    with pytest.raises(FileNotFoundError):
        profiles.flamegraph(tmp_path / "missing.html")


def test_difference_from_one_run_to_another_with_async_profilers_page(tmp_path, monkeypatch):
    written = []

    def diff_html(base, new, out):
        written.append((base.name, new.name, out.name))
        out.write_text("<!DOCTYPE html><html>differential</html>")

    monkeypatch.setattr(bridge, "diff_html", diff_html)
    monkeypatch.chdir(tmp_path)
    runs = _runs(tmp_path)
    fig, text, why, page = profiles.difference(runs, "sync", "async", ("cpu", "lock")).parts
    assert fig.layout.title.text == "cpu: async relative to sync (share of samples)" and fig.data[0].type == "icicle"
    assert text == (
        "From sync (cpu) to async (cpu), grew: executor queue (+30 points); shrank: network read (-30 points)."
    )
    assert why == "No lock samples in one of the two profiles: nothing to compare."
    assert written == [("sync-profile-cpu.collapsed", "async-profile-cpu.collapsed", "diff-sync-async-cpu.html")]
    assert page[profiles.FLAMEGRAPH_MIME]["title"] == "async-profiler's differential flame graph (cpu), sync to async"
    alone = profiles.difference({"sync": runs["sync"]}, "sync", "async", ("cpu",))
    assert alone.parts == ["Both `sync` and `async` are needed for the differential view."]


def test_categories_normalise_and_keep_focus():
    text = psay.describe_categories(
        {"network I/O": 41, "HTTP parsing": 18, "storage": 9, "GC": 6, "JIT": 4, "locks": 2, "other": 20},
        "cpu",
        top=3,
        focus=("locks",),
    )
    assert text == "Of the CPU samples, 41% network I/O, 20% other, 18% HTTP parsing, 2% locks."


def test_diff_lists_growth_and_shrinkage():
    diff = pd.DataFrame({"category": ["executor queue", "network I/O", "storage"], "delta": [0.12, -0.08, 0.001]})
    text = psay.describe_diff(diff, "sync", "async")
    assert text == "From sync to async, grew: executor queue (+12 points); shrank: network I/O (-8 points)."
    # what counts as moved is the code's threshold, and the sentence says that threshold, not 'half a point'
    assert (
        psay.describe_diff(diff.assign(delta=[0.004, -0.003, 0.001]), "sync", "async")
        == f"From sync to async no category moved by more than {100 * psay.MOVED:g} percentage points."
    )
    assert (
        psay.describe_diff(diff, "sync", "async", moved=0.2)
        == "From sync to async no category moved by more than 20 percentage points."
    )


SAMPLES = (
    "[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/net/NativeSocket.read 500\n"
    "[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/http/HttpSession.processRead;"
    "one/nio/http/HttpSession.parseRequest 200\n"
    "[selector-1 tid=1];perflab/server/ApiHandler.handle;perflab/storage/lsm/MemTable.get 200\n"
    "[worker-1 tid=2];java/util/concurrent/ThreadPoolExecutor.execute;java/util/concurrent/LinkedBlockingQueue.offer 100\n"
)


def test_a_profile_paragraph_and_the_cpu_split(tmp_path):
    prof = syn.profile(tmp_path, "profile-cpu", SAMPLES)
    text = psay.describe_profile("async", prof, top=1, focus=("storage: memtable",))
    assert text.startswith(
        "**async** (cpu): Of the 1,000 CPU samples, 50% (500) network read, 20% (200) storage: memtable."
    )
    assert "The hottest frames by self time: `one/nio/net/NativeSocket.read` 50%" in text
    runs = {"async": syn.experiment(syn.load(), profiles={"cpu": prof}), "sync": syn.experiment(syn.load())}
    assert (
        profiles.findings(runs)
        == psay.describe_cpu_split(runs)
        == [
            "async: of the 1,000 CPU samples, 50% (500) network I/O, 20% (200) HTTP parsing, 20% (200) storage, "
            "10% (100) executor queue."
        ]
    )


COLD = (
    "[C2 CompilerThread0 tid=9];thread_native_entry;CompileBroker::compiler_thread_loop;C2Compiler::compile_method 450\n"
    "[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/net/NativeSocket.read 550\n"
)


def test_a_small_or_cold_profile_is_not_split_and_says_why(tmp_path):
    # 147 samples: a share of them moves by points between two runs; the page says so instead of "2% storage"
    small = syn.profile(
        tmp_path,
        "small-cpu",
        "[s-1 tid=1];perflab/storage/lsm/MemTable.get 3\n[s-1 tid=1];one/nio/net/NativeSocket.read 144\n",
    )
    text = psay.describe_profile("GET", small)
    assert (
        text.startswith("**GET** (cpu): 147 cpu samples, too few to split by category (at least 1,000")
        and "%" not in text
    )
    cold = syn.profile(tmp_path, "cold-cpu", COLD)
    assert psay.describe_profile("PUT", cold).startswith(
        "**PUT** (cpu): cold: 45% of its 1,000 samples are the JIT compiler compiling the server"
    )
    runs = {
        "GET": syn.experiment(syn.load(), profiles={"cpu": small}),
        "PUT": syn.experiment(syn.load(), profiles={"cpu": cold}),
    }
    split = psay.describe_cpu_split(runs)
    assert split[0].startswith("GET: the CPU profile is not split: 147 cpu samples") and "cold" in split[1]
    # neither gets a bar: only the paragraphs that say why
    assert [type(p).__name__ for p in profiles.categories(runs, ("cpu",)).parts] == ["str", "str"]


STACKS = flame.read_collapsed(
    "[w-1 tid=1];a;perflab/server/ApiHandler.handle;one/nio/net/JavaSocket.write 60\n"
    "[w-1 tid=1];a;perflab/storage/lsm/MemTable.get 40\n"
)


NEW = flame.read_collapsed(
    "[w-2 tid=7];a;perflab/server/ApiHandler.handle;one/nio/net/JavaSocket.write 20\n"
    "[w-2 tid=7];a;perflab/storage/lsm/MemTable.get 80\n"
)


def test_flame_diff_colours_each_frame_by_its_change():
    d = pfig.flame_diff(STACKS, NEW, min_share=0).data[0]
    assert d.branchvalues == "total" and d.tiling.flip == "y"  # root at the bottom, as flame graphs are drawn
    assert max(len(i) for i in d.ids) < 6, "short node ids keep deep profiles small"
    colour = dict(zip(d.labels, d.marker.colors))
    assert colour["perflab/storage/lsm/MemTable.get"] == pytest.approx(40.0)  # 40% -> 80%: +40 pp
    assert colour["perflab/server/ApiHandler.handle"] == pytest.approx(-40.0)


def test_category_bars():
    fig = pfig.category_bars({"sync": STACKS, "async": NEW})
    names = [t.name for t in fig.data]
    assert names == ["storage: memtable", "network write"]  # CATEGORY_ORDER, empty ones left out
    mem = fig.data[0]
    assert list(mem.y) == ["sync", "async"] and list(mem.x) == pytest.approx([40.0, 80.0])
    with pytest.raises(ValueError, match="expected a Profile or a stacks DataFrame"):
        pfig.category_bars({"x": 1})


def test_category_bars_name_what_a_bar_is():
    cats = pd.DataFrame({"category": ["network read", "GC"], "share": [0.7, 0.3]})
    fig = pfig.category_bars({"sync / lsm": cats}, by="configuration")
    assert fig.layout.yaxis.title.text == "configuration"
    assert [t.name for t in fig.data] == ["GC", "network read"] and list(fig.data[1].x) == pytest.approx([70.0])
