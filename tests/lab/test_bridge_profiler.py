"""The JPype bridge: attach async-profiler to a running server, convert with async-profiler's
converter, prefill and inspect a data directory in-process."""

import os
import time

import pytest

from perflab import LoadParams, ProfileParams, ProfilerError, ServerConfig
from perflab.errors import BridgeError
from perflab.measure.generator import start_load
from perflab.profiling import bridge, flame
from perflab.profiling.bridge import inspect, prefill
from perflab.profiling.profiler import Profiler, profile_for
from perflab.server import start_server


@pytest.fixture(scope="module")
def busy_server(server_build, loadgen_binary, profiler_lib, tmp_path_factory):
    """A server under a steady PUT load for the whole module (the load is stopped at the end)."""
    with start_server(ServerConfig(backend="memory", mode="async", workers=2)) as srv:
        lp = start_load(
            srv.url,
            LoadParams(rate=2000, duration=300, threads=1, connections=4, script="put.lua"),
            out_dir=tmp_path_factory.mktemp("bg-load"),
        )
        time.sleep(1.0)
        try:
            yield srv
        finally:
            lp.stop(grace_s=2)


def test_cpu_profile_contains_request_handling(busy_server, tmp_path):
    prof = profile_for(busy_server.pid, 2.0, ProfileParams("cpu", interval="2ms"), out_dir=tmp_path)
    assert prof.event == "cpu" and prof.samples > 50
    frames = set(prof.frames()["frame"])
    assert "perflab/server/ApiHandler.handle" in frames
    assert any(f.startswith("one/nio/") for f in frames)
    cats = prof.categories().set_index("category")["share"]
    assert cats["request handling"] + cats["network write"] + cats["network read"] > 0
    assert cats.sum() == pytest.approx(1.0)
    threads = set(prof.threads()["thread_group"])
    assert "worker" in threads  # thread-split stacks (the `threads` option)
    html = prof.html_path.read_text()
    assert prof.html_path.name == "profile-cpu.html" and "ApiHandler" in html and "<canvas" in html


@pytest.mark.parametrize("event", ["alloc", "lock", "wall"])
def test_other_modes(busy_server, tmp_path, event):
    prof = profile_for(busy_server.pid, 1.5, ProfileParams(event, interval="10ms", alloc_bytes="64k"), out_dir=tmp_path)
    assert prof.event == event and prof.collapsed_path.is_file()
    if event != "lock":  # lock contention may legitimately be absent in 1.5 s
        assert prof.samples > 0 and prof.html_path.is_file()


def test_wall_profile_counts_waiting_threads_as_idle(busy_server, tmp_path):
    prof = profile_for(busy_server.pid, 1.5, ProfileParams("wall", interval="10ms"), out_dir=tmp_path)
    cats = prof.categories().set_index("category")["share"]
    # at 2,000 PUT/s most of the JVM's threads wait most of the time (selectors in epoll_wait, workers parked in
    # getTask, GC and JIT threads on their monitors): idle, not executor queue, locks or other
    assert cats["idle"] > 0.5 and cats["idle"] > cats["executor queue"] + cats["locks"] + cats["other"]


def test_dump_without_stopping_then_stop(busy_server, tmp_path):
    p = Profiler(busy_server.pid, ProfileParams("cpu"), out_dir=tmp_path).start()
    time.sleep(0.5)
    dumped = p.dump()
    assert dumped.stat().st_size > 0 and p.active
    prof = p.stop()
    assert prof.samples > 0 and not p.active


def test_converter_html_and_diff(busy_server, tmp_path):
    a = profile_for(busy_server.pid, 1.0, ProfileParams("cpu"), out_dir=tmp_path / "a")
    b = profile_for(busy_server.pid, 1.5, ProfileParams("alloc", alloc_bytes="64k"), out_dir=tmp_path / "b")
    out = bridge.diff_html(a.collapsed_path, b.collapsed_path, tmp_path / "diff.html", title="cpu vs alloc")
    text = out.read_text()
    assert "cpu vs alloc" in text and len(text) > 5000
    again = bridge.collapsed_to_html(a.collapsed_path, tmp_path / "again.html", title="again", reverse=True)
    assert "again" in again.read_text()
    d = flame.diff_profiles(a.stacks, b.stacks, by="category")
    assert d["base_share"].sum() == pytest.approx(1.0) and d["new_share"].sum() == pytest.approx(1.0)


def test_attach_failures_have_causes(busy_server, tmp_path):
    # our own (Python) process is not a JVM: the attach must fail with a cause, not hang
    with pytest.raises(ProfilerError, match=f"cannot attach to JVM pid {os.getpid()}"):
        Profiler(os.getpid(), ProfileParams("cpu"), out_dir=tmp_path).start()
    p = Profiler(busy_server.pid, ProfileParams("cpu"), out_dir=tmp_path).start()
    try:
        # a second session in the same JVM is refused by async-profiler
        with pytest.raises(ProfilerError, match="failed in pid"):
            Profiler(busy_server.pid, ProfileParams("alloc"), out_dir=tmp_path / "second").start()
    finally:
        p.stop()
    with pytest.raises(ValueError, match="pid must be a positive int"):
        Profiler(0)
    with pytest.raises(ValueError, match="params must be a ProfileParams"):
        Profiler(1234, {"event": "cpu"})
    with pytest.raises(ValueError, match="collapsed: .* does not exist"):
        bridge.collapsed_to_html(tmp_path / "nope.collapsed", tmp_path / "x.html")


def test_prefill_and_inspect_in_process(server_build, tmp_path):
    t = time.monotonic()
    out = prefill(tmp_path / "db", keys=50_000, value_size=100, seed=7)
    assert out["keys"] == 50_000 and out["value_size"] == 100 and time.monotonic() - t < 60
    d = inspect(tmp_path / "db")
    assert d["backend"] == "lsm"
    tables = d["sstables"]
    assert sum(t["entries"] for t in tables) == 50_000
    keys = {t["first_key"] for t in tables} | {t["last_key"] for t in tables}
    assert "key0" in keys
    # deterministic by seed: the same call writes the same bytes
    out2 = prefill(tmp_path / "db2", keys=50_000, value_size=100, seed=7)
    assert out2["bytes"] == out["bytes"]
    assert [t["bytes"] for t in inspect(tmp_path / "db2")["sstables"]] == [t["bytes"] for t in tables]


def test_prefill_errors(server_build, tmp_path):
    with pytest.raises(ValueError, match="keys: must be >= 1"):
        prefill(tmp_path / "x", keys=0)
    with pytest.raises(ValueError, match="backend must be 'lsm' or 'rocksdb'"):
        prefill(tmp_path / "x", keys=10, backend="memory")
    with pytest.raises(ValueError, match="data_dir: .* is not a directory"):
        inspect(tmp_path / "missing")
    # a directory held open by a running server is locked: the error names the lock
    with start_server(ServerConfig(backend="lsm"), data_dir=tmp_path / "held"):
        with pytest.raises(BridgeError, match="(?i)lock"):
            prefill(tmp_path / "held", keys=10)


def test_cpu_falls_back_to_itimer_with_a_warning(busy_server, tmp_path, monkeypatch):
    # This machine allows perf_events (root); pretend it does not, as in a container.
    from perflab.profiling import profiler as profiler_mod

    monkeypatch.setattr(profiler_mod, "perf_events_usable", lambda: False)
    with pytest.warns(RuntimeWarning, match="falling back to itimer"):
        # itimer samples the process's CPU time: a lightly loaded server needs a fine interval, and a window
        # long enough that a machine busy with other tests still gives the server some CPU in it
        prof = profile_for(busy_server.pid, 4.0, ProfileParams("cpu", interval="1ms"), out_dir=tmp_path)
    assert prof.event == "itimer" and prof.requested_event == "cpu" and prof.samples > 0
    assert any("itimer" in w for w in prof.warnings)
    with pytest.raises(ProfilerError, match="cpu profiling unavailable"):
        Profiler(busy_server.pid, ProfileParams("cpu", fallback=False), out_dir=tmp_path / "nofb").start()


def test_jfr_recording_converts_in_process(busy_server, tmp_path, profiler_lib):
    jfr = tmp_path / "rec.jfr"
    # a fine interval: on a loaded machine the server may get little CPU in 2 s (10 ms once gave 8 samples, none
    # in ApiHandler); what this test proves is that the recording converts into the server's own stacks
    bridge.load_agent(
        busy_server.pid, profiler_lib, f"start,event=cpu,interval=1ms,jfr,file={jfr},log={tmp_path / 'ap.log'}"
    )
    time.sleep(2.0)
    bridge.load_agent(busy_server.pid, profiler_lib, f"stop,log={tmp_path / 'ap.log'}")
    assert jfr.stat().st_size > 0
    collapsed = bridge.jfr_convert(jfr, tmp_path / "rec.collapsed", event="cpu")
    st = flame.read_collapsed(collapsed)
    assert st["samples"].sum() > 0 and st["stack"].str.contains("one/nio/|perflab/server/").any()
    html = bridge.jfr_convert(jfr, tmp_path / "rec.html", event="cpu")
    assert "<canvas" in html.read_text()
    with pytest.raises(ValueError, match="event must be one of"):
        bridge.jfr_convert(jfr, tmp_path / "x.html", event="cycles")


def test_one_recording_gives_every_event_the_heatmap_gc_pauses_and_a_sub_window(busy_server, tmp_path):
    p = Profiler(busy_server.pid, ProfileParams("cpu,alloc,lock", alloc_bytes="64k"), out_dir=tmp_path).prepare()
    p.start_recording()
    t0 = time.time()
    time.sleep(0.5)
    bridge.start_jvm()
    # a forced full GC inside the server: one pause the recording must hold, on the epoch clock
    bridge.load_agent(busy_server.pid, p.agent, f"status,log={tmp_path / 'x.log'}")
    t_gc = time.time()
    _gc(busy_server.pid)
    t_gc_done = time.time()
    time.sleep(2.0)
    t1 = time.time()
    rec = p.stop_window(t0, t1)
    assert list(rec.profiles) == ["cpu", "alloc", "lock"] and rec.jfr_path.is_file()
    assert rec.profiles["cpu"].samples > 0 and rec.profiles["alloc"].samples > 0
    assert rec.profiles["cpu"].html_path.is_file() and rec.heatmap_path.is_file()
    gcs = [e for e in rec.gc_events if e["cause"] in ("System.gc()", "Diagnostic Command")]
    assert gcs, rec.gc_events[:3]
    assert all(t0 * 1e6 <= e["ts_us"] <= t1 * 1e6 for e in rec.gc_events)
    # during the call that forced it (an attach: from a few ms to seconds on a busy machine), on the epoch clock
    assert t_gc - 0.05 <= gcs[0]["ts_us"] / 1e6 <= t_gc_done + 0.05, (t_gc, t_gc_done, gcs[0])
    # the flame graph of a sub-window, and the differential of it against the rest
    diff = rec.spike_diff([(t0 + 0.5, t0 + 1.0), (t0 + 1.5, t0 + 2.0)])
    assert diff is not None and diff["diff_html"].is_file()
    spikes = diff["spikes"].samples
    assert 0 < spikes < rec.profiles["cpu"].samples


def _gc(pid: int) -> None:
    """System.gc() in the target JVM through the attach API's jcmd (GC.run)."""
    VM = bridge._jclass("com.sun.tools.attach.VirtualMachine")
    vm = VM.attach(str(pid))
    try:
        vm.executeJCmd("GC.run").close()
    finally:
        vm.detach()
