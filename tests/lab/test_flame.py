"""Frames, categories and differences on collapsed stacks with known content."""

import pytest

from perflab.profiling import flame

SEL = "[NIO Selector #0 tid=10];one/nio/server/SelectorThread.run;one/nio/net/Session.process;one/nio/http/HttpSession.processRead"
WORK = "[worker-1 tid=11];java/lang/Thread.run;java/util/concurrent/ThreadPoolExecutor.runWorker;perflab/server/ApiHandler.handle"
TEXT = "\n".join([
    f"{SEL};one/nio/net/NativeSocket.read;__recv 30",
    f"{SEL};one/nio/http/HttpSession.processHttpBuffer;one/nio/http/HttpSession.parseRequest 20",
    f"{WORK};perflab/server/ApiHandler.entity;perflab/storage/lsm/LsmStorage.get;perflab/storage/lsm/MemTable.get 10",
    f"{WORK};perflab/server/ApiHandler.send;perflab/server/KvSession.send;one/nio/net/JavaSocket.write 25",
    f"{WORK};perflab/server/ApiHandler.respond 5",
    "[worker-1 tid=11];java/lang/Thread.run;java/util/concurrent/ThreadPoolExecutor.getTask;"
    "java/util/concurrent/ArrayBlockingQueue.take;jdk/internal/misc/Unsafe.park 6",
    "[GC Thread#0 tid=3];GangWorker::loop;G1ParEvacuateFollowersClosure::do_void 4",
    "[C2 CompilerThread0 tid=4];CompileBroker::compiler_thread_loop;C2Compiler::compile_method 2",
    "[Flusher tid=12];perflab/storage/lsm/LsmStorage.flushLoop;java/io/FileOutputStream.write;__GI_write 8",
]) + "\n"


def test_read_collapsed_merges_and_keeps_threads(tmp_path):
    st = flame.read_collapsed(TEXT + f"{WORK};perflab/server/ApiHandler.respond 5\n")
    assert st["samples"].sum() == 115
    assert st.loc[st["stack"] == f"{WORK};perflab/server/ApiHandler.respond", "samples"].item() == 10
    assert set(st["thread"]) >= {"NIO Selector #0", "worker-1", "GC Thread#0"}
    p = tmp_path / "x.collapsed"
    p.write_text(TEXT)
    assert flame.read_collapsed(p)["samples"].sum() == 110
    # frame-type marks from JFR conversions are stripped (kernel marks kept); equal stacks merge
    typed = flame.read_collapsed("a_[0];b_[1];c_[k] 2\na;b_[j];c_[k] 3\n")
    assert typed["stack"].tolist() == ["a;b;c_[k]"] and typed["samples"].tolist() == [5]
    with pytest.raises(ValueError, match="line 1 does not end with a sample count"):
        flame.read_collapsed("a;b;c\n")
    with pytest.raises(ValueError, match="neither an existing file nor collapsed text"):
        flame.read_collapsed("/no/such/file")


def test_frames_self_and_total():
    ft = flame.frames_table(flame.read_collapsed(TEXT)).set_index("frame")
    assert ft.loc["one/nio/server/SelectorThread.run", "total"] == 50
    assert ft.loc["one/nio/server/SelectorThread.run", "self"] == 0
    assert ft.loc["perflab/server/ApiHandler.respond", "self"] == 5
    assert ft.loc["java/lang/Thread.run", "total_share"] == pytest.approx(46 / 110)
    # thread frames are stripped by default
    assert not any(f.startswith("[") for f in ft.index)


def test_categories_answer_the_reports_questions():
    cats = flame.categorize(flame.read_collapsed(TEXT)).set_index("category")["samples"]
    assert list(flame.categorize(flame.read_collapsed(TEXT))["category"]) == flame.CATEGORY_ORDER
    assert cats["network read"] == 30
    assert cats["HTTP parsing"] == 20
    assert cats["storage: memtable"] == 10
    assert cats["network write"] == 25
    assert cats["request handling"] == 5
    assert cats["executor queue"] == 6
    assert cats["GC"] == 4 and cats["JIT"] == 2
    assert cats["storage: flush"] == 8  # a file write under the flusher is flush, not network
    assert cats.sum() == 110


def test_leaf_only_rules():
    assert flame.classify_stack(["one/nio/server/SelectorThread.run"]) == "network read"
    assert flame.classify_stack(["java/lang/Thread.run", "java/util/concurrent/ThreadPoolExecutor.runWorker"]) == "executor queue"
    # the same frames as ancestors of real work do not decide the category
    assert flame.classify_stack(["one/nio/server/SelectorThread.run", "one/nio/http/HttpSession.parseRequest"]) == "HTTP parsing"
    assert flame.classify_stack(["x/Unknown.frame"]) == "other"


def test_lock_profile_classified_by_call_site():
    text = f"{WORK};perflab/server/ApiHandler.send;perflab/server/KvSession.send;perflab.server.KvSession_[i] 7\n"
    cats = flame.categorize(flame.read_collapsed(text), event="lock").set_index("category")["samples"]
    assert cats["network write"] == 7 and cats["locks"] == 0
    with pytest.raises(ValueError, match="event must be a profiling event"):
        flame.classify_stack(["a"], event="cycles")


def test_diff_is_normalized():
    base = flame.read_collapsed("a;b 50\na;c 50\n")
    new = flame.read_collapsed("a;b 300\na;c 100\n")  # 4x the samples, b grew from 50% to 75%
    d = flame.diff_profiles(base, new).set_index("key")
    assert d.loc["b", "delta"] == pytest.approx(0.25) and d.loc["c", "delta"] == pytest.approx(-0.25)
    assert d.loc["b", "ratio"] == pytest.approx(1.5)
    assert d.index[0] in ("b", "c")  # sorted by |delta|
    dc = flame.diff_profiles(flame.read_collapsed(TEXT), flame.read_collapsed(TEXT), by="category")
    assert (dc["delta"].abs() < 1e-12).all()
    with pytest.raises(ValueError, match="by must be"):
        flame.diff_profiles(base, new, by="line")


def test_icicle_nodes_and_threads():
    st = flame.read_collapsed(TEXT)
    nodes = flame.icicle_nodes(st, min_share=0.0)
    root = nodes[nodes["id"] == "all"].iloc[0]
    assert root["value"] == 110 and root["parent"] == ""
    # every node's value is at least the sum of its children's
    sums = nodes.groupby("parent")["value"].sum()
    vals = nodes.set_index("id")["value"]
    assert all(vals[p] >= s for p, s in sums.items() if p)
    th = flame.threads_table(st).set_index("thread_group")["samples"]
    assert th["worker"] == 46 and th["NIO Selector"] == 50
    assert flame.thread_group("one-nio selector #12") == "one-nio selector"
