"""The cluster parts that need no cluster: configuration and its errors, the fault grammar and schedule, the
checker's judgement of one read and the invariant's prediction, the answers by status per interval, the
entry nodes' rates, per-incarnation stats, the key distribution's numbers. (The merge of a load split over
entry nodes is the one merge's: tests/measure/test_merge.py.)"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import perflab as pl
from perflab.core.load import check_split
from perflab.nodes.checker import ABSENT, judge, predict
from perflab.nodes.distribution import KeyDistribution, cv
from perflab.nodes.faults import Fault, parse_fault, schedule
from perflab.nodes.load import cluster_load, entry_rates
from perflab.nodes.sampling import cluster_stats_frame, node_stats_frame
from perflab.nodes.statuses import status_intervals
from perflab.nodes.topology import Topology, free_ports, node_command

# --- ClusterConfig ---------------------------------------------------------------------------------------


def test_defaults_are_the_servers_every_node_and_a_majority():
    c = pl.ClusterConfig(nodes=5)
    assert (c.replicas_ack, c.replicas_from) == (3, 5) and c.entries == (0,)
    assert pl.ClusterConfig(nodes=3, from_=2).replicas_ack == 2
    assert c.replica_args() == ("ack=3", "from=5")
    assert pl.ClusterConfig(nodes=3, ack=1, api="replicas").replica_args() == ("replicas=1/3",)
    assert pl.ClusterConfig(nodes=3, entry="all").entries == (0, 1, 2)
    assert pl.ClusterConfig(nodes=3, entry=[2, 0]).entries == (2, 0)
    per_node = pl.ClusterConfig(nodes=2, server=[pl.ServerConfig(mode="async"), pl.ServerConfig()])
    assert per_node.node_config(0).mode == "async" and per_node.node_config(1).mode == "sync"


@pytest.mark.parametrize(
    "kw,message",
    [
        ({"nodes": 3, "ack": 4}, "ack: must not exceed from (3), got 4"),
        ({"nodes": 3, "from_": 4}, "from_: 4 replicas cannot be asked of 3 nodes"),
        ({"nodes": 2, "ack": 2, "from_": 1}, "ack: must not exceed from (1), got 2"),
        ({"nodes": 0}, "nodes: must be between 1 and 256, got 0"),
        ({"nodes": 3, "ack": 0}, "ack: must be between 1 and 256, got 0"),
        ({"nodes": 3, "entry": "3"}, "entry: node 3 is out of range: the cluster has nodes 0..2"),
        ({"nodes": 3, "entry": "0,0"}, "entry: names a node twice"),
        ({"nodes": 3, "entry": "first"}, "entry: expected a node index (0..2), a list like 0,2, or all"),
        ({"nodes": 3, "api": "quorum"}, "api: expected one of ack-from, replicas"),
        ({"nodes": 2, "server": [pl.ServerConfig()]}, "server: one ServerConfig for every node, or a list of 2"),
        ({"nodes": 2, "server": pl.ServerConfig(port=8080)}, "server[0].port: the lab sets each node's --port"),
        ({"nodes": 2, "server": pl.ServerConfig(cluster="http://a:1")}, "server[0].cluster: the lab sets"),
        ({"nodes": 2, "command": "kv --port {port}"}, "command: must contain {cluster}"),
        ({"nodes": 2, "command": "kv --nodes {cluster}"}, "command: must contain {port}"),
        ({"nodes": 2, "command": "kv {ports} {port}"}, "{port} is a per-node placeholder, but {ports}"),
        ({"nodes": 2, "command": "kv {ports} {host} {self}"}, "{self} is a per-node placeholder, but {ports}"),
        ({"nodes": 2, "command": "kv {port} {cluster}", "server": pl.ServerConfig()}, "server: your own nodes"),
        ({"nodes": 2, "workdir": "/tmp"}, "workdir: only with command"),
    ],
)
def test_bad_cluster_configs_are_named(kw, message):
    with pytest.raises(ValueError) as e:
        pl.ClusterConfig(**kw)
    assert message in str(e.value)


def test_the_commands_placeholders_and_the_picked_ports():
    ports = free_ports(3)
    assert len(set(ports)) == 3
    topo = Topology("10.0.0.7", (8000, 8001, 8002))
    assert topo.cluster == "http://10.0.0.7:8000,http://10.0.0.7:8001,http://10.0.0.7:8002"
    argv = node_command(
        "kv --port {port} --peers {cluster} --me {self} --i {index} --dir {dir} --bind {host}", topo, 1, "/d/1"
    )
    assert argv == [
        "kv",
        "--port",
        "8001",
        "--peers",
        topo.cluster,
        "--me",
        "http://10.0.0.7:8001",
        "--i",
        "1",
        "--dir",
        "/d/1",
        "--bind",
        "10.0.0.7",
    ]
    assert node_command("kv --ports {ports} --bind {host}", topo, 0, None) == [
        "kv",
        "--ports",
        "8000,8001,8002",
        "--bind",
        "10.0.0.7",
    ]
    pl.ClusterConfig(nodes=3, command="kv --ports {ports} --peers {cluster} --bind {host}")  # all three fit one command


def test_the_load_gets_the_clusters_ack_and_from_only_where_the_script_takes_them():
    c = pl.ClusterConfig(nodes=3, ack=1, api="replicas")
    put = cluster_load(pl.LoadParams(script="put.lua"), c)
    assert put.script_args[-1] == "replicas=1/3"
    assert cluster_load(pl.LoadParams(script="status.lua"), c).script_args == ()
    with pytest.raises(ValueError, match="script_args: from= is set by the cluster"):
        cluster_load(pl.LoadParams(script="put.lua", script_args=("from=2",)), c)
    with pytest.raises(
        ValueError, match="split over 3 entry nodes, one generator process each .3., so it needs at least 3 threads"
    ):
        check_split(pl.LoadParams(threads=2, connections=2), 1, 3)
    with pytest.raises(ValueError, match="split over 2 generator hosts and 3 entry nodes, .* at least 6 threads"):
        check_split(pl.LoadParams(threads=4, connections=8), 2, 3)
    with pytest.raises(ValueError, match="stop_on_p99: each of the 3 generator processes"):
        check_split(pl.LoadParams(threads=3, connections=3, stop_on_p99=0.01), 1, 3)
    check_split(pl.LoadParams(threads=1, connections=1, stop_on_p99=0.01), 1, 1)  # one process: no split
    with pytest.raises(ValueError, match="tool: a cluster run needs perflab-load"):
        cluster_load(pl.LoadParams(tool="wrk2", wrk_binary="/bin/true"), c)


# --- faults ----------------------------------------------------------------------------------------------


def test_fault_grammar():
    assert parse_fault("at=10s node=2 kill") == [Fault(10.0, 2, "kill", "at=10s node=2 kill")]
    assert parse_fault("pause node=1 at=500ms")[0] == Fault(0.5, 1, "pause", "pause node=1 at=500ms")
    two = parse_fault("at=1s node=0 stop for=2s")
    assert [(f.at, f.action) for f in two] == [(1.0, "stop"), (3.0, "restart")]
    assert parse_fault("at=2s node=1 pause for=1s")[1].action == "resume"


@pytest.mark.parametrize(
    "text,message",
    [
        ("at=1s node=2", "needs exactly one action"),
        ("at=1s node=2 kill stop", "needs exactly one action (kill, stop, pause, resume, restart), got kill, stop"),
        ("at=1s node=2 explode", "unknown word 'explode'"),
        ("node=2 kill", "missing at="),
        ("at=1s kill", "missing node="),
        ("at=soon node=1 kill", "at=soon is not a time"),
        ("at=1s node=one kill", "node=one is not a node index"),
        ("at=1s node=1 restart for=2s", "for= undoes kill, stop or pause"),
        ("at=1s at=2s node=1 kill", "at= given twice"),
    ],
)
def test_bad_faults_are_named(text, message):
    with pytest.raises(ValueError) as e:
        parse_fault(text)
    assert message in str(e.value) and text in str(e.value)


@pytest.mark.parametrize(
    "faults,message",
    [
        (["at=1s node=3 kill"], "node 3 is out of range: the cluster has nodes 0..2"),
        (["at=20s node=1 kill"], "at 20 s is not inside the measured window (10 s)"),
        (["at=1s node=1 resume"], "node 1 is running then; resume needs it paused"),
        (["at=1s node=1 kill", "at=2s node=1 pause"], "node 1 is down then; pause needs it running"),
        (["at=1s node=1 pause", "at=2s node=1 stop"], "node 1 is paused then; stop needs it running"),
        (["at=1s node=1 kill", "at=2s node=1 kill"], "node 1 is down then; kill needs it running or paused"),
    ],
)
def test_schedules_that_cannot_happen_are_refused(faults, message):
    with pytest.raises(ValueError) as e:
        schedule(faults, 3, 10.0)
    assert message in str(e.value)


def test_a_schedule_in_time_order_and_restarts_of_one_command_refused():
    s = schedule(["at=3s node=1 restart", "at=1s node=1 kill", "at=2s node=0 pause for=500ms"], 3, 10.0)
    assert [(f.at, f.node, f.action) for f in s] == [
        (1, 1, "kill"),
        (2, 0, "pause"),
        (2.5, 0, "resume"),
        (3, 1, "restart"),
    ]
    with pytest.raises(ValueError, match="one command .* cannot be restarted"):
        schedule(["at=1s node=1 kill for=1s"], 3, 10.0, one_command=True)


# --- the checker's judgement and prediction ------------------------------------------------------------

A, B, C = "k#1", "k#2", "k#3"


@pytest.mark.parametrize(
    "history,observed,outcome",
    [
        ([], ABSENT, "ok"),
        ([(A, True)], A, "ok"),
        ([(A, True)], ABSENT, "missed"),
        ([(A, True), (B, True)], A, "stale"),
        ([(A, True), (ABSENT, True)], A, "resurrected"),
        ([(A, True), (ABSENT, True)], ABSENT, "ok"),
        ([(A, True), (B, "maybe")], B, "ok"),  # a 504'd write may have been stored
        ([(A, True), (B, "maybe")], A, "ok"),
        ([(A, True), (B, False)], B, "unknown"),  # refused outright: its value cannot be there
        ([(A, True), (B, "maybe"), (C, True)], B, "stale"),
        ([(A, "maybe")], ABSENT, "ok"),
        ([(A, True)], "k#9", "unknown"),
    ],
)
def test_judging_one_read(history, observed, outcome):
    assert judge(history, observed) == outcome


def test_what_ack_and_from_predict():
    assert predict(2, 2, 3).never and not predict(1, 1, 3).never and not predict(1, 2, 3).never
    assert predict(3, 1, 3).never and predict(1, 1, 1).never
    lost = predict(2, 2, 3, keeps_data=False, restarts=True)
    assert not lost.never and "memory" in lost.reason
    assert "unknown for your own nodes" in predict(2, 2, 3, keeps_data=None, restarts=True).reason


# --- answers by status, per-incarnation counters ---------------------------------------------------------


def _sample(t, up, coordinated, c504, c201):
    return {
        "timestamp_ms": int(t * 1000),
        "uptime_ms": up,
        "requests": {"PUT": {"201": c201, "504": c504}},
        "cluster": {"coordinated": coordinated, "gateway_timeouts": c504},
    }


def test_a_restarted_nodes_counters_start_a_new_incarnation():
    s = [
        _sample(100, 5000, 10, 0, 10),
        _sample(101, 6000, 20, 0, 20),
        _sample(103, 500, 4, 0, 4),
        _sample(104, 1500, 9, 0, 9),
    ]
    f = node_stats_frame(s, 100.0)
    assert list(f["incarnation"]) == [0, 0, 1, 1]
    assert list(f["cluster.coordinated_delta"].fillna(-1)) == [-1, 10, 4, 5]


class _Load:
    def __init__(self, intervals):
        self.summary = {"intervals": intervals}
        self.duration_s = 2.0


def test_answers_by_status_per_interval_as_the_generator_counted_them():
    """Each bin adds the intervals that start in it: answers by status class (a 404 is an answer), and the
    requests without one (error kinds other than a status)."""
    ivs = [
        {
            "start_s": 0.0,
            "end_s": 0.5,
            "offered": 50,
            "completed": 50,
            "errors": 0,
            "status_codes": {"201": 50},
            "error_kinds": {},
        },
        {
            "start_s": 0.5,
            "end_s": 1.0,
            "offered": 50,
            "completed": 50,
            "errors": 0,
            "status_codes": {"201": 40, "404": 10},
            "error_kinds": {},
        },
        {
            "start_s": 1.0,
            "end_s": 2.0,
            "offered": 100,
            "completed": 90,
            "errors": 75,
            "status_codes": {"201": 25, "504": 60, "503": 2, "400": 3},
            "error_kinds": {"connect": 0, "read": 4, "write": 0, "timeout": 6, "status": 65},
        },
    ]
    df, note = status_intervals(_Load(ivs), 1.0)
    assert list(df["offered"]) == [100, 100] and list(df["generator_errors"]) == [0, 75]
    assert list(df["answered"]) == [100, 25] and list(df["504"]) == [0, 60]
    assert list(df["5xx"]) == [0, 2] and list(df["4xx"]) == [0, 3]
    assert list(df["no_answer"]) == [0, 10], "timeouts and reset connections: no answer at all"
    assert "as the generator counted it" in note
    with pytest.raises(ValueError, match="bin_s must be > 0"):
        status_intervals(_Load(ivs), 0)


def test_each_entry_nodes_share_summed_over_the_hosts_that_sent_to_it():
    def part(url, offered, achieved, requests, codes):
        return SimpleNamespace(
            url=url,
            target_rate=offered,
            achieved_rate=achieved,
            requests=requests,
            errors_total=codes.get("504", 0),
            status_counts=codes,
        )

    urls = ["http://n0", "http://n1", "http://n2"]
    res = SimpleNamespace(
        parts={
            "gen1 node2": part(urls[2], 10, 9, 90, {"201": 90}),
            "gen1 node0": part(urls[0], 10, 10, 100, {"201": 100}),
            "gen2 node2": part(urls[2], 10, 10, 100, {"201": 95, "504": 5}),
        }
    )
    rows = entry_rates(res, urls)
    assert [r["node"] for r in rows] == [0, 2]
    assert rows[1]["offered_rate"] == 20 and rows[1]["achieved_rate"] == 19 and rows[1]["achieved_ratio"] == 0.95
    assert rows[1]["status_codes"] == {"201": 185, "504": 5} and rows[1]["errors"] == 5


def test_every_nodes_samples_in_one_frame():
    f = cluster_stats_frame(
        {
            0: [_sample(100, 1000, 0, 0, 0), _sample(101, 2000, 10, 0, 10)],
            1: [_sample(100, 1000, 0, 0, 0), _sample(101, 2000, 20, 0, 20)],
            2: [],
        },
        100.0,
    )
    assert list(f.columns[:3]) == ["node", "time", "t_s"] and set(f["node"]) == {0, 1}
    assert list(f.loc[f["node"] == 1, "cluster.coordinated_delta"].fillna(-1)) == [-1, 20]
    assert cluster_stats_frame({}, None).empty


# --- the key distribution's numbers ------------------------------------------------------------------------


def test_coefficient_of_variation_and_the_everywhere_warning():
    assert cv([100, 100, 100]) == 0 and cv([90, 110]) == pytest.approx(0.1)
    d = KeyDistribution(["a", "b", "c"], 300, "key", 3, [90, 100, 110], [300, 300, 300], [300, 300, 300])
    assert d.everywhere and "every node holds every key" in d.warning()
    assert d.cvs()["replicas"] == 0 and d.cvs()["owners"] == pytest.approx(np.std([90, 100, 110]) / 100)
    assert KeyDistribution(["a", "b", "c"], 300, "key", 2, [90, 100, 110], [200, 200, 200]).warning() is None
    assert list(d.frame().columns) == ["node", "url", "owners", "replicas", "stored"]
    assert isinstance(d.frame(), pd.DataFrame)


# --- the command line ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--nodes", "3", "--ack", "4"], "ack: must not exceed from (3), got 4"),
        (["--ack", "2"], "--ack: cluster option; give --nodes N to start a cluster"),
        (["--fault", "at=1s node=1 kill"], "--fault: cluster option"),
        (["--nodes", "3", "--fault", "at=1s node=3 kill"], "node 3 is out of range: the cluster has nodes 0..2"),
        (["--nodes", "3", "--fault", "at=1s node=1 resume"], "node 1 is running then; resume needs it paused"),
        (["--nodes", "3", "--prefill", "100"], "prefill: it writes plain values"),
        (["--nodes", "3", "--server-cmd", "kv {port}"], "command: must contain {cluster}"),
        (
            ["--nodes", "3", "--server-cmd", "kv {port} {cluster}", "--mode", "async"],
            "--mode: option of the built-in server",
        ),
        (["--nodes", "3", "--url", "http://127.0.0.1:1"], "--url: a cluster is started by perflab"),
        (["--nodes", "3", "--entry", "all", "-t", "2", "-c", "4"], "needs at least 3 threads (-t), got 2"),
        (
            ["--nodes", "3", "--entry", "all", "-t", "3", "-c", "6", "--generators", "2"],
            "split over 2 generator hosts and 3 entry nodes, one generator process each (6)",
        ),
        (
            ["--nodes", "3", "--scheduler", "http://10.0.0.1:8786"],
            "scheduler: expected an address like tls://HOST:8786 or tcp://HOST:8786",
        ),
        (["--nodes", "3", "--check-keys", "10"], "--check-keys: give --check to run the consistency checker"),
        (["--nodes", "3", "--check", "--check-read-ack", "4"], "consistency.read_ack: must not exceed from (3), got 4"),
    ],
)
def test_bad_cluster_options_fail_before_anything_starts(argv, message, capsys, data_root):
    from perflab.cli import main

    assert main(["run", "-R", "10", "-d", "5", "-s", "put.lua", *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (data_root / "runs").exists() or not any((data_root / "runs").iterdir()), "no run may start"
