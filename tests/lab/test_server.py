"""Server control against the real java-server: start, ready, stats, stop, and failures with causes."""

import socket
import time

import pytest
from support import live_descendants, processes_mentioning

from perflab import ServerConfig
from perflab.errors import ServerStartError
from perflab.server import Server, start_server
from perflab.server.counters import StatsSampler, fetch_stats
from perflab.server.http import http_get


def test_start_stop_memory_server(server_build):
    before = live_descendants()
    with start_server(ServerConfig(backend="memory", mode="async", workers=2, queue=64)) as srv:
        assert srv.running and srv.port > 0 and srv.pid > 0
        assert http_get(srv.url + "/v0/status")[0] == 200
        assert srv.effective_config["mode"] == "async" and srv.effective_config["queue"] == 64
        assert srv.java_version
        st = srv.stats()
        assert st["executor"]["mode"] == "async" and st["storage"]["backend"] == "memory"
        pid = srv.pid
    assert not srv.running
    assert srv.stopped_event is not None  # graceful: the server said "stopped"
    assert pid not in live_descendants() and live_descendants() <= before


def test_stats_sampler_frame(server_build):
    with start_server(ServerConfig(backend="memory")) as srv:
        with StatsSampler(srv.url, interval_s=0.2) as s:
            for i in range(20):
                http_get(f"{srv.url}/v0/entity?id=k{i}")
            time.sleep(1.0)
        df = s.frame()
    assert len(df) >= 3 and s.errors == 0
    assert {
        "time",
        "t_s",
        "executor.queue_depth",
        "storage.flushes",
        "jvm.gc_count",
        "requests_total",
        "requests_total_delta",
        "storage.flushes_delta",
    } <= set(df.columns)
    assert df["t_s"].iloc[0] == 0 and df["t_s"].is_monotonic_increasing
    # the 20 GETs (404: memory is empty) show up as counted requests
    assert df["requests.GET.404"].iloc[-1] >= 20


def test_busy_port_names_the_cause(server_build):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        with pytest.raises(ServerStartError) as e:
            start_server(ServerConfig(backend="memory", port=port))
    msg = str(e.value)
    assert "exited with status 1" in msg and "in use" in msg and str(port) in msg
    assert "--- log tail ---" in msg


def test_bad_flag_exit_2_with_message(server_build):
    with pytest.raises(ServerStartError, match=r"status 2 \(bad configuration\): error: --selectors"):
        start_server(ServerConfig(backend="memory", extra_args=("--selectors", "0")))


def test_data_dir_is_given_and_used(server_build, tmp_path):
    with start_server(ServerConfig(backend="rocksdb"), data_dir=tmp_path / "db", log_dir=tmp_path / "logs") as srv:
        assert srv.effective_config["data-dir"] == str(tmp_path / "db")
    assert (tmp_path / "logs" / "server.log").is_file()
    assert '"event":"ready"' in (tmp_path / "logs" / "server-events.jsonl").read_text()
    assert (tmp_path / "db").is_dir()  # a given data dir is kept


def test_no_orphans_after_a_failed_start(server_build, tmp_path):
    marker = str(tmp_path / "orphan-check")
    with pytest.raises(ServerStartError):
        # timeout too short for a JVM to be ready: the process must be killed, not left behind
        Server(ServerConfig(backend="rocksdb"), data_dir=marker).start(timeout=0.05)
    assert processes_mentioning(marker) == []


def test_bad_arguments():
    with pytest.raises(ValueError, match="config must be a ServerConfig"):
        Server({"mode": "async"})
    with pytest.raises(ValueError, match="timeout must be > 0"):
        Server(ServerConfig()).start(timeout=0)
    with pytest.raises(ValueError, match="url must be an http URL"):
        StatsSampler("localhost:8080")
    with pytest.raises(ValueError, match="interval_s must be > 0"):
        StatsSampler("http://127.0.0.1:1", 0)
    with pytest.raises(ValueError, match="url must be an http URL"):
        fetch_stats("ftp://x")
    with pytest.raises(RuntimeError, match="not running"):
        Server(ServerConfig()).url  # noqa: B018 - the error is the point
