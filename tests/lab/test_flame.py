"""Frames, categories and differences on collapsed stacks with known content."""

import pytest

from perflab.config import ProfileParams
from perflab.profiling import codemap, flame
from perflab.profiling.codemap import BUILTIN, CodeMap
from perflab.profiling.profile import Profile

SEL = "[NIO Selector #0 tid=10];one/nio/server/SelectorThread.run;one/nio/net/Session.process;one/nio/http/HttpSession.processRead"
WORK = "[worker-1 tid=11];java/lang/Thread.run;java/util/concurrent/ThreadPoolExecutor.runWorker;perflab/server/ApiHandler.handle"
TEXT = (
    "\n".join(
        [
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
        ]
    )
    + "\n"
)


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
    assert list(flame.categorize(flame.read_collapsed(TEXT))["category"]) == flame.category_order(BUILTIN)
    assert cats["network read"] == 30
    assert cats["HTTP parsing"] == 20
    assert cats["storage: memtable"] == 10
    assert cats["network write"] == 25
    assert cats["request handling"] == 5
    assert cats["idle"] == 6 and cats["executor queue"] == 0  # a worker parked in getTask waits for work
    assert cats["GC"] == 4 and cats["JIT"] == 2
    assert cats["storage: flush"] == 8  # a file write under the flusher is flush, not network
    assert cats.sum() == 110


def test_leaf_only_rules():
    assert flame.classify_stack(["one/nio/server/SelectorThread.run"]) == "network read"
    assert (
        flame.classify_stack(["java/lang/Thread.run", "java/util/concurrent/ThreadPoolExecutor.runWorker"])
        == "executor queue"
    )
    # the same frames as ancestors of real work do not decide the category
    assert (
        flame.classify_stack(["one/nio/server/SelectorThread.run", "one/nio/http/HttpSession.parseRequest"])
        == "HTTP parsing"
    )
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


# --- any server: a course server's stacks (one-nio selector -> the student's handler -> its DAO) ---------------

ALICE = "ru/vk/itmo/test/alice"
PARSE = (
    "[NIO Selector #1 tid=20];one/nio/server/SelectorThread.run;one/nio/net/Session.process;"
    "one/nio/http/HttpSession.processRead;one/nio/http/HttpSession.processHttpBuffer"
)
GET = (
    f"{PARSE};one/nio/http/HttpSession.handleParsedRequest;one/nio/http/HttpServer.handleRequest;"
    f"{ALICE}/ServerImpl.handleGet"
)
PARK = "java/util/concurrent/locks/LockSupport.park;jdk/internal/misc/Unsafe.park;Unsafe_Park;Parker::park"
WORKER = (
    "[worker-1 tid=21];java/lang/Thread.run;java/util/concurrent/ThreadPoolExecutor$Worker.run;"
    "java/util/concurrent/ThreadPoolExecutor.runWorker;java/util/concurrent/ThreadPoolExecutor.getTask;"
    "java/util/concurrent/LinkedBlockingQueue.take"
)
COURSE = (
    "\n".join(
        [
            f"{GET};{ALICE}/dao/PersistentDao.get;{ALICE}/dao/SSTable.find;java/nio/DirectByteBuffer.get 40",
            f"{GET};{ALICE}/dao/PersistentDao.get;java/util/concurrent/ConcurrentSkipListMap.get 10",
            f"{GET};{ALICE}/ServerImpl.toKey;java/lang/String.getBytes 7",
            f"{GET};{ALICE}/util/Keys.parse 3",
            f"{GET};one/nio/http/HttpSession.sendResponse;one/nio/net/Session.write;one/nio/net/NativeSocket.write;__send 20",
            f"{GET};{ALICE}/Stats.record;java/util/concurrent/locks/ReentrantLock.lock;"
            f"java/util/concurrent/locks/AbstractQueuedSynchronizer.acquire;{PARK} 5",
            f"{PARSE};one/nio/http/HttpSession.parseRequest 15",
            "[NIO Selector #1 tid=20];one/nio/server/SelectorThread.run;one/nio/net/Session.process;"
            "one/nio/net/NativeSocket.read;__recv 25",
            f"[dao-flusher tid=30];java/lang/Thread.run;{ALICE}/dao/PersistentDao$$Lambda.0x0000000801234a00.run;"
            f"{ALICE}/dao/PersistentDao.lambda$flush$0;sun/nio/ch/FileChannelImpl.write;__write 12",
            f"{WORKER};java/util/concurrent/locks/AbstractQueuedSynchronizer$ConditionObject.await;{PARK};"
            "___pthread_cond_wait;__futex_abstimed_wait_common 30",
            f"{WORKER};java/util/concurrent/locks/ReentrantLock.lockInterruptibly;"
            f"java/util/concurrent/locks/AbstractQueuedSynchronizer.acquire;{PARK} 4",
            "[GC Thread#0 tid=3];thread_native_entry;Thread::call_run;WorkerThread::run;G1EvacuateRegionsTask::work;"
            "G1ParEvacuateFollowersClosure::do_void 6",
            "[GC Thread#1 tid=4];thread_native_entry;Thread::call_run;WorkerThread::run;"
            "WorkerTaskDispatcher::worker_wait_for_task;PosixSemaphore::wait;__futex_abstimed_wait_common 3",
            "[main tid=1];perflab/course/CourseLauncher.main;java/util/concurrent/CountDownLatch.await;"
            f"java/util/concurrent/locks/AbstractQueuedSynchronizer.acquireSharedInterruptibly;{PARK} 2",
        ]
    )
    + "\n"
)
#: what the course launcher reports of alice's server
ALICE_MAP = CodeMap.course(
    ["ru.vk.itmo.test.alice.dao.PersistentDao"],
    ["ru.vk.itmo.test.alice", "ru.vk.itmo.test.alice.dao", "ru.vk.itmo.test.alice.util"],
    "ru.vk.itmo.test.alice.AliceFactory",
)


def _dao_share_by_hand(text: str) -> float:
    """The samples of stacks with a frame of the DAO, counted from the text alone."""
    rows = [line.rsplit(" ", 1) for line in text.splitlines()]
    return sum(int(n) for stack, n in rows if "/dao/" in stack) / sum(int(n) for _, n in rows)


@pytest.mark.parametrize("code_map", [ALICE_MAP, CodeMap()], ids=["launcher's map", "found automatically"])
def test_a_course_servers_storage_share_is_its_dao_frames_share(code_map):
    st = flame.read_collapsed(COURSE)
    cats = flame.categorize(st, code_map=code_map).set_index("category")
    assert list(cats.index) == flame.category_order(code_map)
    assert cats.loc["storage", "share"] == pytest.approx(_dao_share_by_hand(COURSE))
    assert cats.loc["storage", "samples"] == 62
    n = cats["samples"]
    assert n["your code"] == 10 and n["network write"] == 20 and n["network read"] == 25 and n["HTTP parsing"] == 15
    # parked workers, an idle GC worker and the launcher's waiting main thread are idle; the queue's own lock
    # and a lock the handler waits for are contention
    assert n["idle"] == 35 and n["executor queue"] == 4 and n["locks"] == 5 and n["GC"] == 6
    assert n["other"] == 0 and n.sum() == st["samples"].sum()
    # the built-in server's map knows none of it: every storage category reads 0 (the wrong answer)
    builtin = flame.categorize(st).set_index("category")["samples"]
    assert builtin[[c for c in builtin.index if c.startswith("storage")]].sum() == 0


def test_your_code_by_package():
    st = flame.read_collapsed(COURSE)
    for code_map in (ALICE_MAP, CodeMap()):
        by_pkg = flame.code_packages(st, code_map=code_map)
        assert by_pkg.to_dict("records") == [
            {"package": ALICE, "samples": 7, "share": pytest.approx(7 / 182)},
            {"package": f"{ALICE}/util", "samples": 3, "share": pytest.approx(3 / 182)},
        ]
    # found automatically: any Java frame outside the JDK, one-nio and the known libraries
    auto = CodeMap()
    assert (
        flame.classify_stack(["org/slf4j/helpers/Util.report", "ch/qos/logback/Logger.info"], code_map=auto) == "other"
    )
    assert flame.classify_stack(["com/example/kv/Handler.get", "java/util/HashMap.get"], code_map=auto) == "your code"
    assert flame.classify_stack(["start_thread", "libc.so.6"], code_map=auto) == "other"
    assert flame.classify_stack(["java/lang/Thread.run", "TinyKv.kv"], code_map=auto) == "your code"  # default package


def test_storage_without_the_launchers_list_and_with_it():
    heuristic = CodeMap()
    for frame in (
        "ru/vk/itmo/dao/Dao.upsert",
        "ru/vk/itmo/test/bob/dao2/MemTable.put",
        "ru/vk/itmo/test/bob/InMemoryDao$1.next",
        "ru/vk/itmo/test/bob/MyDAO.get",
        "ru/vk/itmo/test/bob/InMemoryDao$$Lambda.0x00000008010c4a00.run",
    ):
        assert flame.classify_stack([frame], code_map=heuristic) == "storage", frame
    for frame in (
        "ru/vk/itmo/test/bob/DaoServer.handle",
        "ru/vk/itmo/test/bob/DaoWorkerPool.run",
        "ru/vk/itmo/test/bob/daemon/Tick.run",
    ):
        assert flame.classify_stack([frame], code_map=heuristic) == "your code", frame
    # the launcher's list names a Dao the heuristic cannot (beside it, never instead of it); a Dao class beside
    # the server (the factory's package) makes only itself storage, not its neighbours
    listed = CodeMap.from_ready(
        {
            "event": "ready",
            "factory": "ru.vk.itmo.test.carol.Factory",
            "dao_classes": ["ru.vk.itmo.test.carol.LsmStorage"],
            "packages": ["ru.vk.itmo.test.carol"],
        }
    )
    assert flame.classify_stack(["ru/vk/itmo/test/carol/LsmStorage$Table.get"], code_map=listed) == "storage"
    assert flame.classify_stack(["ru/vk/itmo/test/carol/Server.handle"], code_map=listed) == "your code"
    assert flame.classify_stack(["ru/vk/itmo/test/carol/dao/SSTable.get"], code_map=listed) == "storage"
    # a DAO in another package the launcher lists is storage with its whole package
    lsm = CodeMap.course(["ru.vk.itmo.test.carol.lsm.FileStore"], factory="ru.vk.itmo.test.carol.Factory")
    assert flame.classify_stack(["ru/vk/itmo/test/carol/lsm/Compactor.run"], code_map=lsm) == "storage"
    assert flame.classify_stack(["ru/vk/itmo/test/carol/Server.handle"], code_map=lsm) == "your code"
    # an empty list (the launcher found no Dao class) leaves the heuristic whole
    empty = CodeMap.from_ready({"event": "ready", "factory": "ru.vk.itmo.test.carol.Factory", "dao_classes": []})
    for frame in (
        "ru/vk/itmo/dao/Dao.upsert",
        "ru/vk/itmo/test/carol/dao/MemTable.put",
        "ru/vk/itmo/test/carol/dao/sstable/SSTable.get",
        "ru/vk/itmo/test/carol/PersistentDao.get",
    ):
        assert flame.classify_stack([frame], code_map=empty) == "storage", frame
    assert flame.classify_stack(["ru/vk/itmo/test/carol/Server.handle"], code_map=empty) == "your code"
    assert CodeMap.from_ready({"event": "ready", "port": 8080}) == CodeMap()


# --- a course student's layout: ru/vk/itmo/test/NAME/ (factory, server), ru/vk/itmo/test/NAME/dao/ (its DAO) --------

DAN = "ru/vk/itmo/test/dan"
DAN_SEL = (
    "[NIO Selector #2 tid=40];one/nio/server/SelectorThread.run;one/nio/net/Session.process;"
    "one/nio/http/HttpSession.processRead;one/nio/http/HttpSession.processHttpBuffer"
)
DAN_HANDLE = (
    f"{DAN_SEL};one/nio/http/HttpSession.handleParsedRequest;one/nio/http/HttpServer.handleRequest;"
    f"{DAN}/DatabaseHttpServer.handleRequest"
)
DAN_EXEC = (
    "[executor-1 tid=41];java/lang/Thread.run;java/util/concurrent/ThreadPoolExecutor$Worker.run;"
    f"java/util/concurrent/ThreadPoolExecutor.runWorker;{DAN}/DatabaseHttpServer.lambda$handleRequest$0;"
    f"{DAN}/DatabaseHttpServer.entity"
)
#: a CPU profile of dan's server as async-profiler collapses it: its DAO (ReferenceDao, SSTable, MemTable,
#: iterators, its flusher) is 65 of the 200 samples by hand (the first six rows), 2 of them waiting for the
#: DAO's own lock (locks, tested before storage)
DAN_STACKS = (
    "\n".join(
        [
            # dao: 33 + 9 + 11 + 4 + 6 + 2
            f"{DAN_EXEC};{DAN}/dao/ReferenceDao.get;{DAN}/dao/SSTable.get;{DAN}/dao/SSTable.binarySearch;"
            "java/lang/foreign/MemorySegment.mismatch 33",
            f"{DAN_EXEC};{DAN}/dao/ReferenceDao.get;{DAN}/dao/MemTable.get;java/util/concurrent/ConcurrentSkipListMap.get 9",
            f"{DAN_EXEC};{DAN}/dao/ReferenceDao.upsert;{DAN}/dao/MemTable.upsert;"
            "java/util/concurrent/ConcurrentSkipListMap.put 11",
            f"{DAN_EXEC};{DAN}/dao/ReferenceDao.get;{DAN}/dao/iterators/MergeIterator.<init>;java/util/PriorityQueue.offer 4",
            f"[dan-flusher tid=50];java/lang/Thread.run;{DAN}/dao/ReferenceDao$$Lambda.0x00007f3c01234a00.run;"
            f"{DAN}/dao/ReferenceDao.lambda$flushing$1;{DAN}/dao/SSTableWriter.write;sun/nio/ch/FileChannelImpl.write;"
            "__write 6",
            f"{DAN_EXEC};{DAN}/dao/ReferenceDao.upsert;java/util/concurrent/locks/ReentrantReadWriteLock$ReadLock.lock;"
            f"java/util/concurrent/locks/AbstractQueuedSynchronizer.acquireShared;{PARK} 2",
            # the rest: your code 8 + 3, network write 25, network read 43, HTTP parsing 14, executor queue 5, idle 20,
            # GC 10, JIT 7
            f"{DAN_EXEC};{DAN}/DatabaseHttpServer.toKey;java/lang/String.getBytes 8",
            f"{DAN_HANDLE};{DAN}/DatabaseHttpServer.validate 3",
            f"{DAN_EXEC};one/nio/http/HttpSession.sendResponse;one/nio/net/Session.write;one/nio/net/NativeSocket.write;"
            "__send 25",
            "[NIO Selector #2 tid=40];one/nio/server/SelectorThread.run;one/nio/net/Session.process;"
            "one/nio/net/NativeSocket.read;__recv 43",
            f"{DAN_SEL};one/nio/http/HttpSession.parseRequest 14",
            f"{DAN_HANDLE};java/util/concurrent/ThreadPoolExecutor.execute;java/util/concurrent/LinkedBlockingQueue.offer 5",
            f"{WORKER};java/util/concurrent/locks/AbstractQueuedSynchronizer$ConditionObject.await;{PARK};"
            "___pthread_cond_wait;__futex_abstimed_wait_common 20",
            "[GC Thread#0 tid=3];thread_native_entry;Thread::call_run;WorkerThread::run;G1EvacuateRegionsTask::work;"
            "G1ParEvacuateFollowersClosure::do_void 10",
            "[C2 CompilerThread0 tid=8];thread_native_entry;Thread::call_run;JavaThread::thread_main_inner;"
            "CompileBroker::compiler_thread_loop;C2Compiler::compile_method 7",
        ]
    )
    + "\n"
)
#: by hand, from the rows above
DAN_BY_HAND = {"dao": 65 / 200, "storage": 63 / 200, "your code": 11 / 200, "locks": 2 / 200}
#: what the launcher reported of such a server before it knew a student's own Dao interface (the issue's run)
DAN_READY = {
    "event": "ready",
    "launcher": "course",
    "factory": "ru.vk.itmo.test.dan.DatabaseServiceFactory",
    "stage": 6,
    "dao_classes": [],
    "packages": ["ru.vk.itmo.test.dan", "ru.vk.itmo.test.dan.dao", "ru.vk.itmo.test.dan.dao.iterators"],
}


@pytest.mark.parametrize(
    "code_map",
    [
        CodeMap.from_ready(DAN_READY),
        CodeMap.from_ready({**DAN_READY, "dao_classes": ["ru.vk.itmo.test.dan.dao.ReferenceDao"]}),
        CodeMap(),
    ],
    ids=["launcher found no Dao", "launcher's Dao list", "found automatically"],
)
def test_a_students_dao_package_is_storage_never_your_code(code_map):
    """Issue 44: storage read 0.0 % where the student's .../test/NAME/dao package held 7 %: the launcher had
    listed no Dao class, and an empty list had replaced the package heuristic with the course's interfaces."""
    st = flame.read_collapsed(DAN_STACKS)
    assert st["samples"].sum() == 200
    dao_by_text = st[st["stack"].str.contains(f"{DAN}/dao/", regex=False)]["samples"].sum() / 200
    assert dao_by_text == DAN_BY_HAND["dao"]  # the hand count is the text's
    shares = flame.categorize(st, code_map=code_map).set_index("category")["share"]
    assert abs(shares["storage"] - DAN_BY_HAND["dao"]) <= 0.02, shares
    assert shares["storage"] == pytest.approx(DAN_BY_HAND["storage"])
    assert shares["your code"] == pytest.approx(DAN_BY_HAND["your code"])
    assert shares["locks"] == pytest.approx(DAN_BY_HAND["locks"])
    # no stack with a frame of the dao package is "your code", nor is the package among your code's
    for stack in st["stack"]:
        if f"{DAN}/dao/" in stack:
            assert flame.classify_stack(stack.split(";")[1:], code_map=code_map) != "your code", stack  # no thread
    assert not [p for p in flame.code_packages(st, code_map=code_map)["package"] if "/dao" in p]
    # the map the run recorded (the course's interfaces only) gave the student's DAO to "your code" (and
    # its flusher's file write to "network write")
    before = CodeMap(DAN_READY["packages"], ((codemap.STORAGE, "^ru[./]vk[./]itmo[./]dao[./]"),))
    old = flame.categorize(st, code_map=before).set_index("category")["share"]
    assert old["storage"] == 0 and old["your code"] == pytest.approx((11 + 63 - 6) / 200)


def test_idle_is_waiting_without_work_and_wall_counts_the_selectors_wait():
    epoll = [
        "one/nio/server/SelectorThread.run",
        "one/nio/net/NativeSelector.select",
        "one/nio/net/NativeSelector.epollWait",
        "epoll_wait",
    ]
    assert flame.classify_stack(epoll, "wall") == "idle"
    assert flame.classify_stack(epoll, "cpu") == "network read"  # on a CPU, the system call's own work
    parked = [
        "java/lang/Thread.run",
        "java/util/concurrent/ForkJoinPool.awaitWork",
        *PARK.split(";"),
        "futex_wait_[k]",
        "schedule_[k]",
    ]
    assert flame.classify_stack(parked, "cpu") == flame.classify_stack(parked, "wall") == "idle"
    # waiting inside the server's own work is not idle: where it waits is what it costs; a thread's own loop
    # waiting for its next item is
    waiting = [f"{ALICE}/ServerImpl.handleGet", "java/util/concurrent/CompletableFuture.get", *PARK.split(";")]
    assert flame.classify_stack(waiting, "wall", CodeMap()) == "locks"
    loops = [
        ["perflab/server/Main.main", "java/util/concurrent/CountDownLatch.await", *PARK.split(";")],
        ["ru/vk/itmo/test/alice/Poller.run", "java/util/concurrent/ArrayBlockingQueue.take", *PARK.split(";")],
    ]
    assert [flame.classify_stack(s, "wall", m) for s, m in zip(loops, (BUILTIN, CodeMap()))] == ["idle", "idle"]
    # a monitor's contention (a wait inside a lock's acquire) stays locks
    monitor = ["java/lang/Thread.run", "one/nio/net/Session.write", "ObjectMonitor::enter", "PlatformEvent::park"]
    assert flame.classify_stack(monitor, "wall") == "locks"
    # alloc and lock profiles have no idle threads
    assert flame.classify_stack(parked + ["java.lang.Object"], "lock") != "idle"


def test_user_categories_are_tested_first_and_named_first():
    params = ProfileParams(category=("checksums=alice/dao/SSTable", "slow keys=ServerImpl\\.toKey"))
    assert params.categories == (("checksums", "alice/dao/SSTable"), ("slow keys", "ServerImpl\\.toKey"))
    code_map = ALICE_MAP.with_categories(params.categories)
    cats = flame.categorize(flame.read_collapsed(COURSE), code_map=code_map)
    assert list(cats["category"][:3]) == ["checksums", "slow keys", "idle"]
    n = cats.set_index("category")["samples"]
    assert n["checksums"] == 40 and n["slow keys"] == 7 and n["storage"] == 22 and n["your code"] == 3
    with pytest.raises(ValueError, match=r"category: 'bad=\(': '\(' is not a valid regular expression"):
        ProfileParams(category=("bad=(",))
    with pytest.raises(ValueError, match="category: expected NAME=REGEX, got 'storage'"):
        ProfileParams(category=("storage",))


def test_a_profile_keeps_its_map_and_a_run_records_it(tmp_path):
    path = tmp_path / "profile-cpu.collapsed"
    path.write_text(COURSE)
    prof = Profile("cpu", "cpu", path, None, 0.0, 1.0, code_map=ALICE_MAP)
    assert prof.categories().set_index("category").loc["storage", "samples"] == 62
    assert list(prof.code_packages()["package"]) == [ALICE, f"{ALICE}/util"]
    assert codemap.read(tmp_path) == BUILTIN  # a run from before maps were recorded was categorized so
    codemap.write(ALICE_MAP.with_categories([("x", "y")]), tmp_path)
    assert codemap.read(tmp_path) == ALICE_MAP.with_categories([("x", "y")])
    assert CodeMap.from_dict(BUILTIN.to_dict()) == BUILTIN


def test_every_maps_categories_are_in_the_one_list():
    for code_map in (BUILTIN, CodeMap(), ALICE_MAP):
        order = flame.category_order(code_map)
        assert [c for c in flame.CATEGORY_ORDER if c in order] == order
    assert flame.category_order(BUILTIN)[:5] == ["idle", "GC", "JIT", "executor queue", "locks"]
