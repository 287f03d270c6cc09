"""perflab on real hosts: network namespaces on this machine, a Dask scheduler and a real Dask worker in each,
started with ``perflab scheduler`` and ``perflab worker`` over TLS with certificates ``perflab certs`` made
(tests/netns.py), the coordinator being this test process. Skipped, with the reason printed, only where
namespaces cannot be made.

Hosts: ``srv1`` (server), ``gen1``, ``gen2`` (generators) and ``gen3`` (both roles: the server of a sweep's
second host set, and the generator killed in the fault test, which therefore runs last). Namespace hosts
share this machine's CPUs: these tests check counts, structure, exact merges and records, never speed.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import netns
import pytest

import perflab as pl
from perflab.core.sweep import sweep
from perflab.hosts.pool import HostLost
from perflab.records import list_runs, open_run

WORKERS = {"srv1": "server", "gen1": "generator", "gen2": "generator", "gen3": "generator,server"}
SERVER = pl.ServerConfig(backend="memory")
#: 4 threads so a run splits over 2 hosts with 2 threads each; 100 ms intervals on the common grid
LOAD = pl.LoadParams(rate=2000, duration=2, warmup=0.5, threads=4, connections=8, path="/v0/status", hdr_interval=0.1)


@pytest.fixture(scope="module")
def hosts():
    reason = netns.why_not()
    if reason:
        print(f"\nskipping the namespace host tests: {reason}")
        pytest.skip(reason)
    c = netns.make(WORKERS, tls=True)
    try:
        yield c
    finally:
        c.close()


def _on(hosts, **kw):
    return hosts.options(**kw)


def test_hosts_are_listed_with_roles_versions_and_clocks(hosts, capsys):
    from perflab.cli import main

    assert main(["hosts", "--scheduler", hosts.address, "--tls", hosts.tls]) == 0
    out = capsys.readouterr().out
    for name, roles in (("srv1", "server"), ("gen1", "generator"), ("gen3", "server,generator")):
        line = next(ln for ln in out.splitlines() if ln.startswith(name + " "))
        # namespace hosts run on this machine: they read its one clock, and no offset is claimed for them
        assert roles in line and "0.3.0" in line and "perflab-load 0.1.0" in line
        assert "this machine's (not measured)" in line and " ms ±" not in line


def test_the_hosts_take_only_the_labs_certificates_and_sample_no_frames(hosts, tmp_path):
    from distributed import Client

    from perflab.hosts.daskconfig import profiler_state
    from perflab.hosts.pool import connect
    from perflab.hosts.tls import make, security

    pool = connect(hosts.address, hosts.tls)
    workers = pool.workers()
    assert sorted(w["name"] for w in workers.values()) == sorted(WORKERS)
    assert all(a.startswith("tls://") for a in workers)
    # `perflab worker` started them with Dask's profiler off: no sys._current_frames beside thread starts
    states = pool.run(profiler_state, list(workers))
    assert all(s == {"configured": False, "sampling": []} for s in states.values()), states
    # plain TCP, and certificates of another authority (anyone can make some), are turned away
    other = tmp_path / "other-ca"
    make(other)
    for address, sec in ((hosts.address.replace("tls://", "tcp://"), None), (hosts.address, security(other))):
        with pytest.raises(Exception):
            c = Client(address, timeout=5, set_as_default=False, security=sec)
            c.close()


def test_a_two_host_run_is_one_run_merged_exactly(hosts, data_root):
    # the same load from one host, then split over two: the split run's hosts offer, between them, exactly
    # the one-host schedule interval by interval, and their merge adds up exactly
    one = pl.run_experiment(
        SERVER,
        LOAD,
        session=_on(hosts, generators="gen1", server_host="srv1"),
        name="one",
        profile=pl.ProfileParams("cpu"),
    )
    two = pl.run_experiment(SERVER, LOAD, session=_on(hosts, generators="gen1,gen2", server_host="srv1"), name="two")
    d = two.run.dir
    parts = {n: json.loads((d / "hosts" / n / "load-summary.json").read_text()) for n in ("gen1", "gen2")}
    merged = json.loads((d / "load-summary.json").read_text())
    # the profile was recorded in the server's JVM on srv1 and came back: JFR in the run, cut to the window here
    assert one.profile is not None and one.profile.samples > 0 and (one.run.dir / "profile-cpu.jfr").is_file()
    assert (one.run.dir / "server-events.jsonl").read_text().count('"event":"ready"') == 1
    # the schedule union: per-interval offered of the parts add up to the unsplit run's
    unsplit = [iv["offered"] for iv in one.load.summary["intervals"]]
    added = [a["offered"] + b["offered"] for a, b in zip(parts["gen1"]["intervals"], parts["gen2"]["intervals"])]
    assert added == unsplit and sum(unsplit) == LOAD.rate * LOAD.duration
    assert {p["segment"]["index"] for p in parts.values()} == {0, 1}
    assert sum(p["threads"] for p in parts.values()) == 4 and sum(p["connections"] for p in parts.values()) == 8
    # the offered rate of the merged run is the plan's, its counts the sum of the hosts'
    assert merged["target_rate"] == LOAD.rate and merged["offered"] == LOAD.rate * LOAD.duration
    for k in ("requests", "offered", "bytes_read"):
        assert merged[k] == parts["gen1"][k] + parts["gen2"][k]
    assert two.load.requests == merged["requests"] and two.load.intervals["count"].sum() == merged["requests"]
    assert merged["latency_us"]["max"] == max(p["latency_us"]["max"] for p in parts.values())
    # what meta.json records: every host, its clock, the start skew, per-host validity, the bottleneck
    meta = two.run.meta
    assert meta["hosts"]["scheduler"] == hosts.address and meta["hosts"]["server"]["name"] == "srv1"
    assert [g["name"] for g in meta["hosts"]["generators"]] == ["gen1", "gen2"]
    load = meta["hosts"]["load"]
    assert load["start_skew_us"] is not None and load["start_at"] > 0
    assert set(load["generators"]) == {"gen1", "gen2"} and load["bottleneck"]["host"] in ("gen1", "gen2")
    for g in load["generators"].values():
        assert g["validity"]["verdict"] in ("valid", "suspect", "invalid") and g["start_skew_us"] is not None
        assert g["clock_offset_us"] == 0.0  # one machine: one clock
    assert "generator_hosts" in two.validity.checks
    # the server listened on its host's own address, which the generator hosts reached
    assert meta["server"]["effective_config"]["host"] == hosts.hosts["srv1"].ip
    assert not hosts.processes(), "a process started for a run is still running"


@pytest.mark.slow
def test_a_breakpoint_search_from_two_generator_hosts(hosts, data_root):
    # a server of known capacity: async, one worker, each request parked 2 ms: at most 500 req/s
    srv = pl.ServerConfig(backend="memory", mode="async", workers=1, debug_delay="2ms")
    load = pl.LoadParams(threads=2, connections=8, path="/v0/status")
    res = pl.find_breakpoint(
        srv,
        load,
        criteria=pl.BreakpointCriteria(sla_p99=1.0),
        params=pl.BreakpointParams(
            start_rate=150,
            probe_duration=1,
            warmup=0.2,
            max_probes=5,
            repeats=1,
            precision=0.25,
            cooldown=0,
            sustain=0,
            quiet_wait=1,
        ),
        progress=False,
        session=_on(hosts, generators="gen1,gen2", server_host="srv1"),
    )
    t = res.table
    assert res.run.status == "ok" and 2 <= len(t) <= 5, t.to_string()
    assert res.run.meta["bracket"].startswith("growth")  # no ramp: it cannot stop early over two hosts
    assert (t.loc[t["passed"] == True, "rate"] <= 500 / 0.99).all(), t.to_string()  # noqa: E712
    assert res.rate is None or res.rate <= 500 / 0.99
    for p in res.probes:
        assert (p.run_dir / "hosts" / "gen1" / "load-summary.json").is_file() and (p.run_dir / "hosts.json").is_file()
        offered = p.result.summary["offered"]  # the whole probe's plan, from both hosts
        assert offered == sum(part.summary["offered"] for part in p.result.parts.values())
        assert abs(offered - p.rate * 1) <= 1, (offered, p.rate)
    rows = [json.loads(ln) for ln in (res.run.dir / "tables" / "loads.jsonl").read_text().splitlines()]
    assert all(r["generator_hosts"] == 2 and r["bottleneck"] in ("gen1", "gen2") for r in rows), rows


def test_a_cluster_on_the_server_host_loaded_from_two_generator_hosts(hosts, data_root):
    """Three nodes started by srv1's agent on its own address, the load split over gen1 and gen2 and the three
    entry nodes (six parts of one schedule, merged exactly), a node killed and restarted with the checker
    running next to the nodes: everything comes back to the coordinator, and nothing outlives the run."""
    from perflab.config.cluster import ConsistencyParams

    cfg = pl.ClusterConfig(nodes=3, ack=2, entry="all", server=pl.ServerConfig(backend="memory", cluster_timeout=0.3))
    load = pl.workload("put.lua", connections=6, threads=6, rate=120, duration=3, warmup=0.5)
    res = pl.run_experiment(
        cfg,
        load,
        faults=["at=1s node=2 kill for=1s"],
        fill=60,
        consistency=ConsistencyParams(keys=20, rate=40, threads=1),
        session=_on(hosts, generators="gen1,gen2", server_host="srv1"),
    )
    run, meta = res.run, res.run.meta
    assert run.status == "ok" and meta["hosts"]["server"]["name"] == "srv1"
    assert {u.split("//")[1].rsplit(":", 1)[0] for u in meta["cluster"]["topology"]["urls"]} == {hosts.hosts["srv1"].ip}
    parts = meta["hosts"]["load"]["generators"]
    assert set(parts) == {f"{g} node{i}" for g in ("gen1", "gen2") for i in range(3)}
    summaries = [json.loads((run.dir / p["dir"] / "load-summary.json").read_text()) for p in parts.values()]
    assert sorted(s["segment"]["index"] for s in summaries) == list(range(6))
    assert res.load.requests == sum(s["requests"] for s in summaries) > 0
    assert [e["node"] for e in res.entries] == [0, 1, 2]
    # the faults, the checker, the fill and the key count ran on srv1 and came back
    assert [f["action"] for f in res.faults] == ["kill", "restart"] and not any(f["error"] for f in res.faults)
    assert res.consistency.counts["acknowledged"] > 0 and not res.consistency.violated
    assert meta["results"]["fill"]["keys"] == 60 and res.distribution.keys == 60
    assert set(res.stats["node"]) == {0, 1, 2} and set(res.cpu["node"]) == {0, 1, 2}
    # the nodes' logs and events were copied into the run (srv1 writes only its own temporary directory)
    for i in range(3):
        assert '"event":"ready"' in (run.dir / "nodes" / str(i) / "server-events.jsonl").read_text()
    assert not hosts.processes(), "a node or generator started for the run is still running"


@pytest.mark.slow
def test_a_sweep_runs_points_on_disjoint_host_sets_and_queues_the_rest(hosts, data_root):
    # two disjoint sets (srv1 + a generator, gen3 + a generator): three points, the third waits for a set
    rates = [1000, 1500, 800]
    out = sweep(
        lambda rate, session: pl.run_experiment(
            SERVER, LOAD.replace(rate=rate, threads=1, connections=2), name=f"sweep-{rate}", session=session
        ),
        rates,
        scheduler=hosts.address,
        tls=hosts.tls,
        generators=1,
    )
    assert [p.ok for p in out] == [True, True, True], [p.error for p in out]
    runs = [p.result.run for p in out]
    sets = [_host_set(r) for r in runs]
    assert len(set(sets)) >= 2  # both host sets were used
    # never two measurements on one host at once: runs that share a host never overlap in time
    span = [(r.meta["created_at"], r.meta["finished_at"]) for r in runs]
    for i in range(3):
        for j in range(i + 1, 3):
            if sets[i] & sets[j]:
                assert span[i][1] <= span[j][0] or span[j][1] <= span[i][0], (sets, span)
    # a point that fails is listed with its error; the sweep goes on with the others
    failing = sweep(
        lambda rate, session: pl.run_experiment(
            SERVER,
            LOAD.replace(rate=rate, threads=1, connections=1),
            session=session.replace(generators="nohost") if rate == 1 else session,
        ),
        [1, 500],
        scheduler=hosts.address,
        tls=hosts.tls,
    )
    assert failing[1].ok and failing[1].result.load.requests > 0
    assert not failing[0].ok and "no host named 'nohost'" in failing[0].error


def _host_set(run) -> frozenset:
    return frozenset([run.meta["hosts"]["server"]["name"], *(g["name"] for g in run.meta["hosts"]["generators"])])


def _notebook(path, code: str) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    n = new_notebook()
    n.cells = [
        new_markdown_cell(f"# {path.stem}\n\n**Question:** does it run on the hosts?"),
        new_code_cell("rate = 500", metadata={"tags": ["parameters"]}),
        new_code_cell(code),
    ]
    n.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(n, str(path))


@pytest.mark.slow
def test_a_report_runs_its_notebooks_side_by_side_on_disjoint_host_sets(hosts, data_root, tmp_path, monkeypatch):
    from perflab.report.batch import _width, run_plan
    from perflab.report.plans import NotebookSpec, Plan

    # a checkout whose notebooks/ holds two small ones (the lab's own take minutes); the rest is this one's
    root = tmp_path / "root"
    (root / "notebooks").mkdir(parents=True)
    for d in ("java-server", "loadgen", "wrk-scripts"):
        (root / d).symlink_to(netns.REPO / d)
    _notebook(
        root / "notebooks" / "measure.ipynb",
        "import perflab as pl\nfrom perflab.lab import notebook as nb\nnb.setup()\nfor i in range(2):\n"
        "    pl.run_experiment(pl.ServerConfig(backend='memory'), pl.LoadParams(rate=rate, duration=1, "
        "path='/v0/status'))",
    )
    _notebook(
        root / "notebooks" / "summary.ipynb",
        "import perflab as pl\nprint('loads', len(pl.recorded('loads', include_invalid=True)))",
    )
    monkeypatch.setenv("PERFLAB_ROOT", str(root))
    plan = Plan(
        "side-by-side",
        (
            NotebookSpec("measure", {"rate": 500}, output="ma"),
            NotebookSpec("measure", {"rate": 400}, output="mb"),
            NotebookSpec("summary", {}, after=True),
        ),
    )
    report, folder = run_plan(
        plan,
        root=tmp_path / "report",
        progress=False,
        browser=False,
        hosts={"scheduler": hosts.address, "tls": hosts.tls},
    )
    assert [n.status for n in report.notebooks] == ["ok", "ok", "ok"], [n.error for n in report.notebooks]
    # srv1 and gen3 serve, gen1 and gen2 load: two at once
    assert _width({"scheduler": hosts.address, "tls": hosts.tls}) == 2
    runs = []
    for n in report.notebooks[:2]:
        mine = [open_run(r["id"]) for r in n.runs]
        # each notebook's runs, and only they, are attributed to it (both ran at once)
        assert len(mine) == 2 and {r.meta["tag"] for r in mine} == {f"{folder.name}/{n.notebook}"}
        runs += mine
    # never two measurements on one host at once
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            if _host_set(a) & _host_set(b):
                assert a.meta["finished_at"] <= b.meta["created_at"] or b.meta["finished_at"] <= a.meta["created_at"]
    out = json.loads((folder / "notebooks" / "summary.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) for c in out["cells"] for o in c.get("outputs", []))
    assert "loads 4" in printed  # the summary ran after both: it saw all four loads
    shown = json.loads((folder / "notebooks" / "ma.ipynb").read_text())
    assert hosts.address in json.dumps(shown)  # setup() showed the scheduler (and its dashboard link)


def test_hosts_not_ready_before_the_start_are_all_stopped_before_it(hosts, data_root, tmp_path):
    # a script whose init takes longer than any lead (each missed start is tried again with a longer one, up to
    # MAX_LEAD_S): no host prints its ready line in time; its requests are PUTs, which the server counts apart
    # from the samplers' GETs
    from perflab.core.load import MAX_LEAD_S

    slow = tmp_path / "slow-init.lua"
    slow.write_text(
        "init = function(args)\n  local t = os.clock()\n"
        f"  while os.clock() - t < {3 * MAX_LEAD_S:g} do end\nend\n"
        "request = function() return wrk.format('PUT', '/v0/entity?id=k', nil, 'v') end\n"
    )
    with pytest.raises(pl.PerflabError, match="not ready .* every host was stopped before the start"):
        pl.run_experiment(
            SERVER,
            LOAD.replace(script=str(slow)),
            session=_on(hosts, generators="gen1,gen2", server_host="srv1"),
            name="late",
        )
    (run_id,) = [r for r in list_runs()["run_id"] if "late" in r]
    run = open_run(run_id)
    import pandas as pd

    for g in ("gen1", "gen2"):  # the ready line comes before the schedule starts: neither got there
        assert "perflab-load: ready" not in (run.dir / "hosts" / g / "load-stderr.txt").read_text()
    stats = pd.read_csv(run.dir / "stats.csv")
    assert len(stats) and not [c for c in stats.columns if c.startswith("requests.PUT")], stats.columns  # none sent
    assert not (run.dir / "load-summary.json").exists() and run.status == "failed"
    assert not hosts.processes()


CHILD = """
import sys, perflab as pl
pl.run_experiment(pl.ServerConfig(backend='memory'), pl.LoadParams(rate=500, duration=60, threads=2, connections=4,
                  path='/v0/status'), name='long', session=pl.SessionOptions(scheduler=sys.argv[1],
                  tls=sys.argv[3], generators='gen1,gen2', server_host='srv1', data_root=sys.argv[2]))
"""


def test_sigterm_on_the_coordinator_stops_every_remote_process(hosts, tmp_path):
    data = tmp_path / "data"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, hosts.address, str(data), hosts.tls],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=str(netns.REPO),
    )
    try:
        deadline = time.monotonic() + 90
        # the server JVM on srv1 and a perflab-load on each generator host are running
        while not all(hosts.processes(h) for h in ("srv1", "gen1", "gen2")):
            assert child.poll() is None, child.stdout.read().decode()[-3000:]
            assert time.monotonic() < deadline, "the run did not start on every host within 90 s"
            time.sleep(0.1)
        time.sleep(1.0)
        child.send_signal(signal.SIGTERM)
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    (run,) = [open_run(d) for d in (data / "runs").iterdir()]
    assert run.status == "interrupted", (run.meta.get("error"), out.decode()[-3000:])
    time.sleep(1.0)
    assert not hosts.processes(), ([p.cmdline() for p in hosts.processes()], out.decode()[-3000:])


def test_a_generator_worker_killed_mid_run_makes_the_run_invalid_and_leaves_no_orphans(hosts, data_root):
    # gen3's worker is killed while its half of the run is being sent (this test runs last: gen3 stays dead)
    load = LOAD.replace(duration=6, warmup=0)
    before = {p: p.stat().st_mtime_ns for p in data_root.rglob("*") if p.is_file() and p.name != "index.duckdb"}

    def kill_once_sending():
        deadline = time.monotonic() + 60
        while not hosts.processes("gen3") and time.monotonic() < deadline:  # gen3's perflab-load is running
            time.sleep(0.05)
        time.sleep(1.5)
        hosts.kill("gen3")

    killer = threading.Thread(target=kill_once_sending)
    killer.start()
    with pytest.raises(HostLost, match="gen3"):
        pl.run_experiment(SERVER, load, session=_on(hosts, generators="gen1,gen3", server_host="srv1"), name="killed")
    killer.join()
    (run_id,) = [r for r in list_runs()["run_id"] if "killed" in r]
    run = open_run(run_id)
    assert run.status == "failed" and run.validity == "invalid"
    assert any("gen3" in r for r in run.validity_reasons)
    kept = json.loads((run.dir / "hosts" / "gen1" / "load-summary.json").read_text())
    assert kept["requests"] > 0 and kept["interrupted"] is True  # gen1 was stopped and wrote what it had
    assert not (run.dir / "load-summary.json").exists()  # no merged result from half a run
    time.sleep(1.0)
    assert not hosts.processes(), [p.cmdline() for p in hosts.processes()]
    # nothing else in data/ changed: every file that was there is untouched
    assert {p: p.stat().st_mtime_ns for p in before} == before
