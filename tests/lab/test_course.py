"""Course servers out of the box: tests/servers/course (a course-style server written here: a @ServiceFactory
factory found by reflection, one-nio 1.7.1, a DAO of its own, no /v0/status, no main) run by perflab's own
launcher from its "build output", and measured as a student's server is (issue #28)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support import REPO, processes_mentioning

import perflab as pl
from perflab import i18n, paths
from perflab.errors import ServerStartError
from perflab.profiling import codemap, flame
from perflab.records import list_runs
from perflab.report import facts
from perflab.server.foreign import ready_line

SOURCES = REPO / "tests" / "servers" / "course"
#: a student laid out as the course's are, whose DAO implements the student's own copy of the Dao interface
LSM_SOURCES = REPO / "tests" / "servers" / "course-lsm"
#: the course API stand-ins the student's code compiles against
API_SOURCES = [
    SOURCES / "ru/vk/itmo" / f
    for f in ("Service.java", "ServiceConfig.java", "test/ServiceFactory.java", "dao/Dao.java", "dao/Entry.java")
]
KEYS = ("keys=2000",)


@pytest.fixture(scope="module")
def classes(server_build, tmp_path_factory) -> Path:
    """The course server compiled as a student's Gradle build would leave it (javac 17 against course/lib)."""
    out = tmp_path_factory.mktemp("course-classes")
    files = [str(p) for p in SOURCES.rglob("*.java")]
    done = subprocess.run(
        ["javac", "-d", str(out), "-cp", str(paths.course_dir() / "lib" / "*"), *files],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def lsm_classes(server_build, tmp_path_factory) -> Path:
    """tests/servers/course-lsm compiled with the course API stand-ins, as the student's build leaves it."""
    out = tmp_path_factory.mktemp("course-lsm-classes")
    files = [str(p) for p in API_SOURCES + sorted(LSM_SOURCES.rglob("*.java"))]
    done = subprocess.run(
        ["javac", "-d", str(out), "-cp", str(paths.course_dir() / "lib" / "*"), *files],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return out


def test_a_course_server_runs_from_its_build_output_filled_and_read(classes, loadgen_binary, data_root):
    """No code of the student's to write: the launcher finds the highest-stage factory, a fresh directory is
    its data, the fill writes through its API, GETs read what is there, and SIGTERM stops it cleanly."""
    server = pl.CourseServer(classes=str(classes))
    put = pl.workload("put-random.lua", connections=2, rate=300, duration=1, extra_args=KEYS)
    res = pl.run_experiment(server, put, name="course-put")
    assert res.load.status_counts == {"201": res.load.requests} and res.validity.checks["served"].status == "ok"
    info = res.run.meta["server"]["foreign"]
    assert info["jvm"] is not None and res.run.meta["params"]["target"] == "foreign"
    log = (res.run.dir / "server.log").read_text()
    assert '"event":"ready"' in log and "ClusterFactory" in log and '"stage":6' in log
    assert '"event":"stopped"' in log and '"error":null' in log  # stop() ran: the DAO flushed
    get = pl.workload("get-random.lua", connections=2, rate=300, duration=1, extra_args=KEYS)
    got = pl.run_experiment(server, get, fill=2000, name="course-get")
    assert got.load.hit_ratio == 1.0 and got.validity.checks["hits"].status == "ok"
    assert not processes_mentioning(str(classes))


def test_the_stage_is_chosen_and_a_missing_factory_is_named(classes, data_root):
    one = pl.CourseServer(classes=str(classes), stage=1)
    assert "--stage 1" in one.command() and one.server().name == one.name
    with pytest.raises(ServerStartError, match="no.such.Factory"):
        pl.run_experiment(
            pl.CourseServer(classes=str(classes), factory="no.such.Factory"),
            pl.LoadParams(rate=10, duration=1, path="/v0/entity?id=k"),
        )
    assert not processes_mentioning(str(classes))


def _class_file(d: Path, major: int) -> Path:
    """A class file whose header says it needs Java ``major - 44``."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "Newer.class").write_bytes(b"\xca\xfe\xba\xbe" + (0).to_bytes(2, "big") + major.to_bytes(2, "big") + b"\0" * 8)
    return d


def test_classes_newer_than_any_jdk_here_are_named_before_anything_starts(tmp_path, data_root):
    cs = pl.CourseServer(classes=str(_class_file(tmp_path / "classes", 44 + 99)))
    with pytest.raises(
        ValueError, match=r"compiled for Java 99, and no JDK 99\+ is installed here .*--course-java-home"
    ):
        pl.run_experiment(cs, pl.LoadParams(rate=10, duration=1))
    assert list_runs().empty  # nothing started, nothing recorded


def test_a_jdk_too_old_for_the_classes_is_named_with_the_fix(tmp_path):
    java17 = str(
        Path(
            os.path.realpath(
                subprocess.run(["bash", "-c", "command -v java"], capture_output=True, text=True).stdout.strip()
            )
        ).parent.parent
    )
    cs = pl.CourseServer(classes=str(_class_file(tmp_path / "classes", 44 + 21)), java_home=java17)
    with pytest.raises(ValueError, match=r"java_home: .* is Java 17; the classes in .* need Java 21 or newer"):
        cs.server()


def test_a_missing_build_output_is_named():
    with pytest.raises(ValueError, match=r"classes: /nonexistent/build/classes does not exist .*gradlew compileJava"):
        pl.CourseServer(classes="/nonexistent/build/classes")


def test_a_course_cluster_counts_its_keys_by_its_own_routing(classes, loadgen_binary, data_root):
    """Three nodes of the course server (its rendezvous hashing with a hash of its own, one copy per key):
    the keys per node come from each node's range API, never from perflab's routing, and say so."""
    cfg = pl.CourseServer(classes=str(classes)).cluster(nodes=3, entry="0")
    put = pl.workload("put-random.lua", connections=2, rate=100, duration=1, extra_args=("keys=300",))
    res = pl.run_experiment(cfg, put, fill=300, keys=300, name="course-cluster")
    d = res.distribution
    assert d.owners is None and d.replicas is None  # perflab's hash is not theirs
    assert d.stored is not None and sum(d.stored) == 300 and min(d.stored) > 0, d.stored
    assert set(d.sources) == {"stored"} and "GET /v0/entities" in d.sources["stored"]
    assert res.run.results["key_distribution"]["sources"] == d.sources
    assert not processes_mentioning(str(classes))


def test_the_students_dao_is_storage_in_the_cpu_breakdown(classes, loadgen_binary, profiler_lib, data_root):
    """The course's first question, "how much goes to the DAO?": the launcher names the Dao classes, the
    profile's storage share is their frames' share of the samples (counted here from the collapsed stacks),
    and the server's own code has a category of its own."""
    server = pl.CourseServer(classes=str(classes))
    put = pl.workload("put-random.lua", connections=4, rate=2000, duration=3, warmup=2, extra_args=KEYS)
    res = pl.run_experiment(server, put, profile=pl.ProfileParams("cpu", interval="1ms"), name="course-profile")
    prof = res.profile
    assert prof is not None and prof.samples >= 100, prof
    assert "ru/vk/itmo/test/perflabstudent/dao" in str(prof.code_map), prof.code_map
    stacks = prof.stacks
    dao = stacks[stacks["stack"].str.contains("perflabstudent/dao/")]["samples"].sum() / stacks["samples"].sum()
    shares = res.category_shares
    # a DAO stack may sit under a lock or a GC frame first (those categories are tested before storage)
    assert 0 < shares["storage"] <= dao + 1e-9 and shares["storage"] >= 0.75 * dao, (shares, dao)
    # the server's own code outside its DAO is a category of its own (a warmed-up JVM may spend no sample there
    # in 3 s: only its bound is certain)
    own = stacks[stacks["stack"].str.contains("perflabstudent/|itmo/dao/")]["samples"].sum() / stacks["samples"].sum()
    assert prof.code_map.code_category == "your code"
    assert shares.get("your code", 0.0) + shares["storage"] <= own + 1e-9, (shares, own)
    assert shares["other"] < 0.5, shares
    assert (res.run.dir / "code-map.json").is_file()


def test_a_dao_behind_the_students_own_interface_is_storage(lsm_classes, loadgen_binary, profiler_lib, data_root):
    """Issue 44: a student's DAO in ru/vk/itmo/test/NAME/dao that implements the student's own copy of the Dao
    interface (as 14 of the course's 39 do) was no Dao class to the launcher, and its frames were "your code":
    storage read ~0 %. The launcher names it now, the code map the run writes covers its whole package
    (SSTable, MemTable: names not ending in Dao), and the storage share is its frames' share of the collapsed
    stacks, counted here, within 2 points."""
    lsm = "ru/vk/itmo/test/perflablsm"
    server = pl.CourseServer(classes=str(lsm_classes))
    get = pl.workload("get-random.lua", connections=4, rate=2000, duration=3, warmup=2, extra_args=KEYS)
    res = pl.run_experiment(
        server, get, fill=2000, profile=pl.ProfileParams("cpu", interval="1ms"), name="course-lsm-profile"
    )
    assert res.load.hit_ratio == 1.0
    ready = ready_line(res.run.dir / "server.log")
    assert ready["dao_classes"] == ["ru.vk.itmo.test.perflablsm.dao.ReferenceDao"], ready
    written = codemap.read(res.run.dir)  # the run's code-map.json
    assert (res.run.dir / codemap.FILE).is_file() and written.storage is not None
    for frame in (
        "ReferenceDao.get",
        "SSTable.get",
        "SSTable.compare",
        "MemTable.get",
        "BaseEntry.value",
        "ReferenceDao$$Lambda.0x0000000801234a00.run",
        "sub/Anything.run",
    ):
        assert flame.classify_stack([f"{lsm}/dao/{frame}"], code_map=written) == "storage", frame
    assert flame.classify_stack([f"{lsm}/LsmServer.answer"], code_map=written) == "your code"
    prof = res.profile
    assert prof is not None and prof.samples >= 50, prof
    stacks = prof.stacks
    total = stacks["samples"].sum()
    dao = stacks[stacks["stack"].str.contains(f"{lsm}/dao/", regex=False)]["samples"].sum() / total
    own = stacks[stacks["stack"].str.contains(f"{lsm}/", regex=False)]["samples"].sum() / total
    shares = res.category_shares
    assert dao > 0.05, (dao, shares)  # 125 tables searched: ~25 % here
    assert abs(shares["storage"] - dao) <= 0.02, (shares, dao)
    assert shares.get("your code", 0.0) + shares["storage"] <= own + 1e-9, (shares, own)
    assert not [p for p in prof.code_packages()["package"] if "/dao" in p]
    assert not processes_mentioning(str(lsm_classes))


def test_the_factories_and_their_stages_are_read_from_the_class_files(classes):
    """What the launcher will run, and the stage before it, known before anything starts: the labels say which
    (a report compares this stage with the previous one the build output still holds)."""
    from perflab.config.course import Factory

    server = pl.CourseServer(classes=str(classes))
    root = "ru.vk.itmo.test.perflabstudent"
    assert server.factories() == [Factory(f"{root}.ClusterFactory", 6), Factory(f"{root}.SingleNodeFactory", 1)]
    assert server.chosen() == Factory(f"{root}.ClusterFactory", 6) and server.name == "perflabstudent, stage 6"
    before = server.previous()
    assert before.factory == f"{root}.SingleNodeFactory" and before.name == "perflabstudent, stage 1"
    assert before.previous() is None  # nothing below stage 1
    assert pl.CourseServer(classes=str(classes), stage=1).name == "perflabstudent, stage 1"
    assert pl.CourseServer(classes=str(classes), label="alice").name == "alice"
    assert pl.CourseServer(classes=str(classes), factory="no.such.Factory").chosen() is None


def test_a_range_scan_of_a_server_that_builds_the_range_in_memory_says_its_heap_is_not_flat(
    classes, loadgen_binary, profiler_lib, data_root
):
    """Stage 6 on the course-style server: filled through its API with 0.2 x its 64 MiB heap, the one range read
    comes back whole and as the course asks (the chunk check passes, every key and value counted), but the
    server builds the body in a byte array first, so its old generation grows by more than the range and the
    scan says the heap did not stay flat; the read is profiled (alloc alone here: each event's flame graph costs
    seconds to draw), recorded in the index, and told in the report's language from its record."""
    server = pl.CourseServer(classes=str(classes), heap="64m")
    params = pl.ScanParams(fill_factor=0.2, value_size="4k", heap_interval="20ms")
    r = pl.run_scan(server, params, profile=pl.ProfileParams("alloc"), name="course-range")
    assert r.heap_bytes == 64 << 20, r.heap_bytes  # asked of the JVM (jcmd VM.flags), not taken from the config
    g = r.read
    assert g.ok and g.status == 200 and g.chunked and g.faults == [], g
    assert g.entries == r.fill["keys"] and g.payload_bytes == r.fill["bytes"] >= 0.2 * (64 << 20)
    h = r.heap_summary
    assert h["flat"] is False and h["old_kept_bytes"] > 0.5 * g.payload_bytes, h
    assert h["samples"] >= 2 and (r.run.dir / "heap.csv").is_file()
    assert r.run.meta["results"]["profile"]["events"] == ["alloc"] and r.profiles["alloc"].samples > 0
    assert (r.run.dir / r.run.meta["artifacts"]["flamegraph"]).is_file()
    row = pl.query("SELECT entries, payload_bytes, heap_flat, faults FROM scans").iloc[0]
    assert (row["entries"], row["payload_bytes"], bool(row["heap_flat"]), row["faults"]) == (
        g.entries,
        g.payload_bytes,
        False,
        0,
    )
    ru = "\n".join(facts.scan_lines(i18n.language("ru"), [r.run.meta])).replace("\xa0", " ")
    assert "Проверка чанков пройдена" in ru and "Куча не осталась ровной" in ru, ru
    assert f"| {g.entries:,} |".replace(",", " ") in ru and "| нет | пройдена |" in ru, ru
    assert "heap: holding the range" in facts.scan_summary(i18n.language("en"), [r.run.meta])
