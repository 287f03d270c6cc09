"""Clusters in the lab, end to end on real processes: three built-in nodes loaded through every node, a
kill and a pause in the measured window, the consistency checker on configurations that must and must not
read stale values, and a cluster you bring, started through the placeholders (tests/servers/tiny_kv.py).

Every assertion is a count, a status or an event that is certain by construction; no latency value is
asserted (the machine is shared and small). Rates are low so a slow machine still keeps up.
"""

from __future__ import annotations

import json
import sys

import pandas as pd
import pytest
from support import REPO, processes_mentioning

import perflab as pl
from perflab.analysis.cluster import describe_consistency
from perflab.config.cluster import ConsistencyParams
from perflab.nodes.checker import Checker
from perflab.nodes.distribution import replica_sets

TINY = REPO / "tests" / "servers" / "tiny_kv.py"
M64 = (1 << 64) - 1


def _score(url: str, key: bytes) -> int:
    """docs/contracts/cluster.md section 7's reference hash: only a cross-check of the server's Owners tool."""
    h = 0xCBF29CE484222325
    for b in url.encode() + b"\x00" + key:
        h = ((h ^ b) * 0x100000001B3) & M64
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & M64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & M64
    return h ^ (h >> 33)


def test_three_nodes_loaded_through_every_node(data_root):
    """3 nodes, 300 keys filled through the cluster (2/3), then GETs of them split over all three entry
    nodes: every answer a 200, every node sampled and on the timeline, each node stores every key (from =
    3) and the routing's owners add up, as the reference hash says."""
    cfg = pl.ClusterConfig(nodes=3, ack=2, entry="all", server=pl.ServerConfig(backend="memory"))
    load = pl.workload("get.lua", connections=3, threads=3, keys=300, rate=60, duration=3, warmup=1)
    res = pl.run_experiment(cfg, load, fill=300)
    run = res.run
    assert run.status == "ok"
    meta = json.loads((run.dir / "meta.json").read_text())
    c = meta["cluster"]
    assert c["nodes"] == 3 and (c["ack"], c["from"]) == (2, 3) and c["entries"] == [0, 1, 2]
    assert len(set(c["topology"]["ports"])) == 3
    assert all(len(n["incarnations"]) == 1 and n["incarnations"][0]["pid"] for n in c["node"])
    # the load, split over the entry nodes (one part each, on the generator host), and merged
    parts = [json.loads((run.dir / "entries" / f"node{i}" / "load-summary.json").read_text()) for i in range(3)]
    assert all(p["requests"] > 0 and set(p["status_codes"]) == {"200"} for p in parts)
    assert res.load.requests == sum(p["requests"] for p in parts)
    assert res.load.status_counts == {"200": res.load.requests}
    assert [e["node"] for e in res.entries] == [0, 1, 2]
    assert sum(e["offered_rate"] for e in res.entries) == pytest.approx(60)
    # each part judged on its own share, as a generator host is
    assert set(res.load.hosts["generators"]) == {"node0", "node1", "node2"}
    assert "generator_hosts" in res.validity.checks and res.validity.checks["served"].status == "ok"
    assert res.answers["2xx/3xx"] == res.load.requests and res.answers["504"] == 0
    # every URL in the script arguments carries the cluster's ack/from
    assert "ack=2" in res.load.summary["script_args"] and "from=3" in res.load.summary["script_args"]
    # every node sampled, on one axis
    stats = pd.read_csv(run.dir / "stats.csv")
    assert set(stats["node"]) == {0, 1, 2}
    assert set(res.cpu["node"]) == {0, 1, 2}
    assert res.statuses["answered"].sum() > 0 and res.statuses["504"].sum() == 0
    # the fill: 300 keys on every node (from = 3, settled), owners by the server's routing
    d = res.distribution
    assert d.keys == 300 and sum(d.owners) == 300 and d.replicas == [300, 300, 300]
    assert d.stored == [300, 300, 300]
    assert d.warning() is not None, "from = cluster size: the evenness of stored counts shows nothing"
    urls = c["topology"]["urls"]
    ref = [0, 0, 0]
    for i in range(300):
        ref[max(range(3), key=lambda n: (_score(urls[n], f"key{i}".encode()), -n))] += 1
    assert d.owners == ref
    assert not processes_mentioning(str(data_root)), "no node may outlive the run"


def test_kill_and_pause_mid_run_on_the_timeline_with_the_504s_counted(data_root):
    """3/3 writes through node 0: once node 2 is killed every PUT is a 504, which the statuses count and
    the validity record names; node 1 paused and left paused is resumed before the run ends."""
    node = pl.ServerConfig(backend="memory", cluster_timeout=0.3)
    cfg = pl.ClusterConfig(nodes=3, ack=3, entry="0", server=node)
    load = pl.workload("put.lua", connections=2, threads=1, rate=40, duration=4, warmup=1)
    res = pl.run_experiment(cfg, load, faults=["at=1s node=2 kill", "at=2.5s node=1 pause"])
    assert res.run.status == "ok"
    ev = res.events
    kinds = {(e, n) for e, n in zip(ev["event"], ev["node"])}
    assert {("kill", 2), ("node_down", 2), ("pause", 1), ("node_paused", 1), ("resume", 1)} <= kinds
    assert any(e == "peer_down" and n == 0 for e, n in kinds), "node 0 saw its peer go"
    kill = ev[ev["event"] == "kill"].iloc[0]
    assert 0.9 < kill["start_s"] < 2.0
    assert [f["action"] for f in res.faults] == ["kill", "pause"] and not any(f["error"] for f in res.faults)
    assert res.run.results["resumed_at_end"][0]["node"] == 1
    codes = res.load.status_counts
    assert codes.get("504", 0) > 0 and set(codes) <= {"201", "504"}
    assert res.answers["504"] == codes["504"]
    assert res.statuses["504"].sum() > 0
    # some writes before the kill served (a warning), or none: on a busy machine the three cold nodes' 3/3 writes
    # can all miss the 0.3 s timeout, and a window with not one request served fails
    served = res.validity.checks["served"]
    assert served.status == ("warn" if codes.get("201") else "fail") and "504" in served.note, served
    assert str(res.validity.level) != "valid"
    meta = json.loads((res.run.dir / "meta.json").read_text())
    states = {n["index"]: n["incarnations"][-1].get("how") for n in meta["cluster"]["node"]}
    assert states[2] == "kill"
    assert not processes_mentioning(str(data_root)), "no node may outlive the run (nor stay stopped)"


def test_checker_stale_where_the_configuration_allows_and_none_where_it_cannot(data_root):
    """One cluster, two checkers. v1 everywhere; node 2 killed; writes, deletes and new keys go to nodes 0
    and 1; node 2 restarted (it kept v1). Then node 0 is killed and the 2/3 checker reads through nodes 1 and
    2: every read meets node 1, never stale. Then node 1 is killed and the 1/3 checker reads through node 2
    alone: every overwritten key is stale, every deleted one resurrected, every new one missed. A killed node refuses
    at once, so the replicas' timeout only bounds a slow one: 3 s, since v1 must reach node 2 on a machine busy
    enough to stall a JVM for half a second (with 0.5 s one key's v1 once failed there, and read as missed)."""
    cfg = pl.ClusterConfig(nodes=3, server=pl.ServerConfig(wal="always", cluster_timeout=3.0))
    with pl.start_cluster(cfg) as cl:
        urls = cl.urls
        weak = Checker(urls, ConsistencyParams(keys=30, key_prefix="weak"), write=(1, 3), read=(1, 3))
        strong = Checker(urls, ConsistencyParams(keys=30, key_prefix="strong"), write=(2, 3), read=(2, 3))
        for chk in (weak, strong):
            chk.write(range(20), via=[0, 1, 2])
        assert cl.settle(), "every replica has v1"
        cl.node(2).kill()
        for chk in (weak, strong):
            chk.write(range(10), via=[0, 1])
            chk.delete(range(10, 20), via=[0, 1])
            chk.write(range(20, 30), via=[0, 1])
        assert cl.settle(nodes=[0, 1])
        cl.node(2).restart()
        cl.node(0).kill()
        strong.read(via=[1, 2])
        cl.node(1).kill()
        weak.read(via=[2])
        ws, ss = weak.verdict(), strong.verdict()
    assert ws.counts["acknowledged"] == 50 and ss.counts["acknowledged"] == 50
    assert (ws.counts["stale"], ws.counts["resurrected"], ws.counts["missed"], ws.counts["ok"]) == (10, 10, 10, 0)
    assert not ws.prediction.never and ws.level == "anomalies allowed" and not ws.violated
    assert "10 stale reads" in describe_consistency(ws)
    assert ss.anomalies == 0 and ss.counts["ok"] == 30 and ss.counts["unavailable"] == 0
    assert ss.prediction.never and ss.level == "consistent"
    # the keys the weak checker found stale have node 2 among their replicas, as from = 3 says
    assert all(2 in r for r in replica_sets(urls, [k.name for k in weak.keys[:10]], 3).values())
    assert not processes_mentioning(str(data_root))


@pytest.mark.parametrize("mode", ["per-node", "one-command"])
def test_your_own_cluster_through_the_placeholders(data_root, mode, own_processes):
    """tiny_kv.py's cluster mode, started by perflab: a command per node ({port}, {cluster}, {index}), or one
    command for every node ({ports}), listening on {host}; loaded in its own API (path=/kv param=key) with 2/3,
    node 2 killed: writes still acknowledged by two, and the checker (in the same API) finds nothing stale."""
    py = sys.executable
    cmd = (
        f"{py} {TINY} {{port}} --cluster {{cluster}} --index {{index}} --host {{host}}"
        if mode == "per-node"
        else f"{py} {TINY} --ports {{ports}} --host {{host}}"
    )
    cfg = pl.ClusterConfig(nodes=3, ack=2, entry="0,1", command=cmd, ready_path="/health")
    load = pl.workload(
        "put.lua", connections=2, threads=2, rate=40, duration=3, warmup=0.5, extra_args=("path=/kv", "param=key")
    )
    res = pl.run_experiment(
        cfg, load, faults=["at=1s node=2 kill"], consistency=ConsistencyParams(keys=20, rate=60, threads=1)
    )
    assert res.run.status == "ok"
    assert res.load.requests > 0 and set(res.load.status_counts) == {"201"}
    assert res.cluster["target"] == "command" and res.cluster["one_command"] == (mode == "one-command")
    assert [f["action"] for f in res.faults] == ["kill"] and res.faults[0]["error"] is None
    assert res.stats is None or res.stats.empty, "tiny_kv has no /v0/stats"
    v = res.consistency
    assert v.counts["acknowledged"] > 0 and v.counts["reads"] > 0
    assert v.anomalies == 0 and v.prediction.never
    ops = res.checker_ops
    assert ops["key"].str.startswith("chk1-").all()
    assert not own_processes(), "every node, and the one command's children, are gone"


INTERRUPTED = """
import sys, perflab as pl
cfg = pl.ClusterConfig(nodes=3, entry="all", server=pl.ServerConfig(backend="memory", cluster_timeout=0.3))
load = pl.workload("put.lua", connections=3, threads=3, rate=30, duration=30)
pl.run_experiment(cfg, load, faults=["at=1s node=1 pause"], name="long", session=pl.SessionOptions(data_root=sys.argv[1]))
"""


def test_sigterm_mid_run_with_a_node_paused_leaves_nothing_behind(tmp_path):
    """SIGTERM while node 1 is stopped (SIGSTOP): the run is marked interrupted, and no node, generator
    process or stopped process outlives it (the paused node is resumed, then stopped with the others)."""
    import signal
    import subprocess
    import time

    import psutil

    from perflab import open_run

    root = tmp_path / "interrupted"
    child = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED, str(root)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            stopped = []
            for p in processes_mentioning(str(root)):
                try:
                    stopped += [p] if p.status() == psutil.STATUS_STOPPED else []
                except psutil.NoSuchProcess:
                    continue
            if stopped:
                break
            assert child.poll() is None, child.stdout.read().decode()[-3000:]
            time.sleep(0.2)
        else:
            pytest.fail("node 1 was not paused within 120 s")
        child.send_signal(signal.SIGTERM)
        out, _ = child.communicate(timeout=90)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        left = processes_mentioning(str(root))
        for p in left:
            p.kill()
    assert child.returncode != 0
    run = open_run(next((root / "runs").iterdir()))
    assert run.status == "interrupted", out.decode()[-2000:]
    assert not left, f"left behind: {[(p.pid, p.status()) for p in left]}"
