"""The hosts on one machine (the in-process cluster every run uses by default) and the pure parts: host
choice, options, the per-host validity. Runs everywhere."""

from __future__ import annotations

import json

import pytest

import perflab as pl
from perflab.config.hosts import HostOptions
from perflab.core.session import Session, SessionOptions
from perflab.hosts.hostset import choose
from perflab.hosts.inventory import HostInfo, check_versions
from perflab.hosts.pool import HostsError, connect
from perflab.measure.generator import LoadTool
from perflab.measure.validity import Check, Level, Validity, with_hosts
from perflab.records import list_runs

LOAD = pl.LoadParams(rate=500, duration=1, threads=1, connections=2, path="/v0/status")


def _host(name, *roles, boot="b1"):
    return HostInfo(
        name=name,
        address=f"tcp://10.0.0.{len(name)}:1",
        roles=roles,
        boot_id=boot,
        versions={"perflab": "1", "perflab-load": "perflab-load 0.1.0", "distributed": "x"},
    )


HOSTS = [
    _host("srv1", "server"),
    _host("gen1", "generator"),
    _host("gen2", "generator"),
    _host("both", "server", "generator"),
]


def test_host_choice_by_name_by_count_and_while_busy():
    names, (srv, gens) = choose(HOSTS, HostOptions(generators=("gen1", "gen2"), server_host="srv1"), set(), "c")
    assert names == ["gen1", "gen2", "srv1"] and srv.name == "srv1" and [g.name for g in gens] == ["gen1", "gen2"]
    # by count: a server-only host first, generators other than the server
    names, (srv, gens) = choose(HOSTS, HostOptions(generators=2), set(), "c")
    assert srv.name == "srv1" and {g.name for g in gens} <= {"gen1", "gen2", "both"} and len(gens) == 2
    # busy hosts: wait (None), or another free set
    assert choose(HOSTS, HostOptions(generators=("gen1",), server_host="srv1"), {"gen1"}, "c") is None
    names, (srv, gens) = choose(HOSTS, HostOptions(generators=1), {"srv1", "gen1"}, "c")
    assert srv.name == "both" and gens[0].name == "gen2"
    # what can never be met is an error at once, naming the problem
    with pytest.raises(HostsError, match="no host named 'gen9'.*hosts: both, gen1, gen2, srv1"):
        choose(HOSTS, HostOptions(generators=("gen9",)), set(), "c")
    with pytest.raises(HostsError, match="host gen1 has no server role.*--roles server"):
        choose(HOSTS, HostOptions(server_host="gen1"), set(), "c")
    with pytest.raises(HostsError, match="5 generator hosts asked for"):
        choose(HOSTS, HostOptions(generators=5), set(), "c")
    with pytest.raises(HostsError, match="no host .* has the generator role"):
        choose([_host("srv1", "server")], HostOptions(), set(), "c")


def test_version_mismatch_is_named():
    odd = _host("gen3", "generator")
    odd.versions = {"perflab": "0.1", "perflab-load": None, "distributed": "x"}
    odd.perflab_load_error = "not built"
    with pytest.raises(HostsError, match="gen3 runs perflab 0.1, this coordinator 1; gen3 has no perflab-load"):
        check_versions(HOSTS[:2] + [odd], {"perflab": "1", "perflab-load": "perflab-load 0.1.0", "distributed": "x"})


def test_session_options_take_hosts_by_name_count_or_environment(monkeypatch):
    assert SessionOptions(generators="gen1, gen2").hosts.generators == ("gen1", "gen2")
    assert SessionOptions(generators="3").hosts.generators == 3
    assert SessionOptions(generators=["a"]).hosts.generators == ("a",)
    monkeypatch.setenv("PERFLAB_GENERATORS", "2")
    monkeypatch.setenv("PERFLAB_SERVER_HOST", "srv9")
    o = SessionOptions().hosts
    assert o.generators == 2 and o.server_host == "srv9"
    monkeypatch.setenv("PERFLAB_SCHEDULER", "tcp://10.1.2.3")
    assert SessionOptions().hosts.scheduler == "tcp://10.1.2.3:8786"
    for bad, msg in (
        ({"generators": 0}, "at least 1"),
        ({"generators": "a,,b"}, "host names"),
        ({"generators": "a,a"}, "named twice"),
        ({"server_host": "a,b"}, "one host name"),
        ({"scheduler": "http://x:1"}, "tcp://HOST:8786"),
        ({"lease_timeout": 0}, "lease_timeout"),
    ):
        with pytest.raises(ValueError, match=msg):
            SessionOptions(**bad)


def test_an_unreachable_scheduler_is_a_clear_error():
    with pytest.raises(HostsError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:1 within 2 s"):
        connect("tcp://127.0.0.1:1", timeout=2)


def test_one_machine_runs_on_the_in_process_hosts_and_records_it(server_build, loadgen_binary, data_root, capsys):
    from perflab.cli import main

    res = pl.run_experiment(pl.ServerConfig(backend="memory"), LOAD)
    hosts = res.run.meta["hosts"]
    assert hosts["scheduler"] == "in-process" and hosts["server"]["name"] == "local"
    assert hosts["server"]["roles"] == ["server", "generator"] and [g["name"] for g in hosts["generators"]] == ["local"]
    assert hosts["load"]["generators"]["local"]["segment"] == "0/1" and hosts["load"]["start_skew_us"] == 0.0
    # one generator on the server's machine: the load's files and record are exactly what they always were
    assert not (res.run.dir / "hosts").exists() and (res.run.dir / "load-summary.json").is_file()
    assert "generator_hosts" not in res.validity.checks
    assert json.loads((res.run.dir / "hosts.json").read_text())["server"] == "local"
    assert main(["hosts"]) == 0
    out = capsys.readouterr().out
    assert "in-process hosts" in out and "local  server,generator" in out
    # the one host reads this machine's clock: no offset is claimed for it
    assert "this machine's (not measured)" in out and "+0.000 ms" not in out


def test_bad_hosts_fail_before_a_run_exists(server_build, loadgen_binary, data_root):
    with pytest.raises(HostsError, match="no host named 'gen1'"):
        pl.run_experiment(pl.ServerConfig(backend="memory"), LOAD, session=pl.SessionOptions(generators="gen1"))
    with pytest.raises(HostsError, match="2 generator hosts asked for"):
        pl.run_experiment(
            pl.ServerConfig(backend="memory"), LOAD.replace(threads=2), session=pl.SessionOptions(generators=2)
        )
    # a load that cannot be split over the hosts asked for fails before any host is looked up
    for run in (
        pl.run_experiment,
        lambda srv, load, session: pl.find_breakpoint(srv, load, progress=False, session=session),
    ):
        with pytest.raises(ValueError, match=r"split over 2 generator hosts, .* at least 2 threads \(-t\), got 1"):
            run(pl.ServerConfig(backend="memory"), LOAD, session=pl.SessionOptions(generators=2))
    assert list_runs().empty


def test_two_sessions_side_by_side_share_the_one_machine(server_build, loadgen_binary, data_root):
    # an A/B comparison opens two sessions at once: on one machine nothing is leased, so neither waits
    tool = LoadTool.of(LOAD)
    with (
        Session("experiment", "a", pl.ServerConfig(backend="memory"), tool, SessionOptions(lease_timeout=5)) as a,
        Session("experiment", "b", pl.ServerConfig(backend="memory"), tool, SessionOptions(lease_timeout=5)) as b,
    ):
        # start_load: a start the busy machine's host missed (its lead learnt on a quiet moment) is tried again
        ra = a.start_load(LOAD, a.run.dir).wait()
        rb = b.start_load(LOAD, b.run.dir).wait()
        assert a.handle.url != b.handle.url
    assert ra.requests == rb.requests == 500


def test_validity_of_a_run_from_several_hosts_is_its_worst_hosts():
    def v(level, **checks):
        return Validity(level, [c.note for c in checks.values() if c.status != "ok"], checks)

    merged = v(
        Level.VALID,
        schedule_lag=Check("ok", 0.05, 0.1, "lag 5%"),
        generator_cpu=Check("ok", 0.3, 0.7, "cpu"),
        achieved_rate=Check("ok", 1.0, 0.99, "all"),
    )
    gen1 = v(Level.VALID, schedule_lag=Check("ok", 0.02, 0.1, "lag 2%"), generator_cpu=Check("ok", 0.2, 0.7, "cpu 20%"))
    gen2 = v(
        Level.INVALID, schedule_lag=Check("fail", 0.6, 0.5, "lag 60%"), generator_cpu=Check("ok", 0.4, 0.7, "cpu 40%")
    )
    out, bottleneck = with_hosts(merged, {"gen1": gen1, "gen2": gen2}, "server on srv1")
    assert out.level is Level.INVALID and out.generator_bound
    assert out.checks["schedule_lag"].note == "gen2: lag 60%" and "gen2: lag 60%" in out.reasons
    assert out.checks["cpu_sharing"].note == "server on srv1" and out.checks["generator_hosts"].value == 2
    assert bottleneck == {"host": "gen2", "generator_bound": True, "load": 0.6, "why": "lag 60%; cpu 40%"}
    # a host suspect on a check of its own (its first interval) makes the run suspect too
    odd = v(Level.SUSPECT, first_interval=Check("warn", 4.0, 3.0, "warm-up outlier"))
    out, _ = with_hosts(merged, {"gen1": gen1, "gen3": odd})
    assert out.level is Level.SUSPECT and "gen3: warm-up outlier" in out.reasons
