"""The workload scripts in wrk-scripts/, run by perflab-load against the real server.

Each test checks what a script's header promises, through what the server saw: the keys it holds
afterwards (range scan), its per-method request counters (/v0/stats), and the status codes the
generator counted. Runs are short (about a second at a few thousand requests/s).
"""

from __future__ import annotations

import json
import math
import re
import socket
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from perflab import paths
from perflab.config import ServerConfig
from perflab.server import start_server

SCRIPTS = paths.repo_root() / "wrk-scripts"
ALL = sorted(p.name for p in SCRIPTS.glob("*.lua"))


@pytest.fixture(scope="module")
def loadgen():
    return str(paths.loadgen_binary())


def counting_from_now(srv):
    """``srv`` with its request counts (:func:`method_counts`) starting from here."""
    srv.stats_calls = 0
    srv.baseline = {}
    srv.baseline = method_counts(srv)  # the start-up readiness checks, or the tests before
    return srv


@pytest.fixture
def server(tmp_path):
    """A server of the test's own: an empty store."""
    with start_server(ServerConfig(backend="memory"), log_dir=tmp_path) as srv:
        yield counting_from_now(srv)


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory):
    with start_server(ServerConfig(backend="memory"), log_dir=tmp_path_factory.mktemp("idle")) as srv:
        yield srv


@pytest.fixture
def counting_server(shared_server):
    """One server for the tests that read its request counts, not its store (a JVM start each would cost
    1.5 CPU-s): its counts start at each test's beginning."""
    return counting_from_now(shared_server)


def run(loadgen, url, script, *args, rate=2000, duration="1s", threads=1, connections=None, ok=True, tmp=None):
    """Run perflab-load; returns (summary JSON, completed process)."""
    out = Path(tmp or "/tmp") / f"load-{script}-{abs(hash(args)) % 10**8}.json"
    cmd = [
        loadgen,
        f"-t{threads}",
        f"-c{connections or max(2, threads)}",
        f"-d{duration}",
        f"-R{rate}",
        "-s",
        str(SCRIPTS / script),
        "--json",
        str(out),
        url,
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if ok:
        assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
        return json.loads(out.read_text()), proc
    return None, proc


def method_counts(srv):
    """Requests the server counted by method since the fixture started, without the /v0/stats calls
    themselves (each is counted as a GET once it is answered, so call k sees k-1 of them)."""
    with urllib.request.urlopen(srv.url + "/v0/stats", timeout=5) as r:
        req = json.loads(r.read())["requests"]
    own = srv.stats_calls
    srv.stats_calls += 1
    counts = {m: sum(codes.values()) - srv.baseline.get(m, 0) for m, codes in req.items()}
    counts["GET"] = counts.get("GET", 0) - own
    return {m: n for m, n in counts.items() if n}


def put_keys(url, indexes, value=b"v"):
    for i in indexes:
        r = urllib.request.Request(f"{url}/v0/entity?id=key{i}", data=value, method="PUT")
        with urllib.request.urlopen(r, timeout=5) as resp:
            assert resp.status == 201


def range_entries(url, start="key", end="kez"):
    """Entries of GET /v0/entities, split by the chunked framing (one chunk = '<key>\\n<value>')."""
    u = urllib.parse.urlparse(url)
    q = urllib.parse.urlencode({"start": start, "end": end})
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(f"GET /v0/entities?{q} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(1 << 16):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    assert b"chunked" in head.lower()
    entries = []
    while True:
        line, _, body = body.partition(b"\r\n")
        size = int(line.split(b";")[0], 16)
        if size == 0:
            break
        chunk, body = body[:size], body[size + 2 :]
        key, _, value = chunk.partition(b"\n")
        entries.append((key.decode(), value))
    return entries


def keys_in(url):
    return {k for k, _ in range_entries(url)}


def idx(keys):
    return sorted(int(k[3:]) for k in keys)


# --- documentation and bad arguments ------------------------------------------------------------


def test_every_script_is_there():
    expected = {
        "put.lua",
        "get.lua",
        "delete.lua",
        "get-random.lua",
        "put-random.lua",
        "mixed.lua",
        "ycsb-a.lua",
        "ycsb-b.lua",
        "ycsb-c.lua",
        "ycsb-f.lua",
        "range.lua",
        "status.lua",
    }
    assert expected <= set(ALL)


@pytest.mark.parametrize("script", ALL)
def test_unknown_argument_stops_the_run_and_every_argument_is_documented(loadgen, script):
    """A bad argument fails before any load with the usage text; each argument the usage lists is
    documented in the header comment at the top of the script."""
    _, proc = run(loadgen, "http://127.0.0.1:9", script, "no_such_arg=1", ok=False)
    assert proc.returncode != 0
    assert 'unknown script argument "no_such_arg"' in proc.stderr
    names = re.findall(r"^\s+(\w+)=<", proc.stderr, re.MULTILINE)
    header = "\n".join(ln for ln in (SCRIPTS / script).read_text().splitlines() if ln.startswith("--"))
    assert header.startswith(f"-- {script}:"), "the header names the script and says what it does"
    for name in names:
        assert re.search(rf"--\s+{name}=", header), f"{script}: argument {name} is not documented in the header"
    if script == "status.lua":
        assert names == ["path"]


@pytest.mark.parametrize(
    "script,arg,message",
    [
        ("get-random.lua", "keys=0", "keys=0: must be >= 1"),
        ("get-random.lua", "dist=pareto", "dist=pareto: expected one of uniform, zipf"),
        ("get-random.lua", "theta=1", "theta=1: must be < 1"),
        ("put-random.lua", "value=-5", "value=-5: must be >= 0"),
        ("mixed.lua", "read=1.5", "read=1.5: must be <= 1"),
        ("mixed.lua", "read=half", "read=half: not a number"),
        ("ycsb-a.lua", "keys=12.5", "keys=12.5: must be an integer"),
        ("range.lua", "digits=-1", "digits=-1: must be >= 0"),
        ("put.lua", "oops", 'bad script argument "oops": expected name=value'),
    ],
)
def test_bad_values_stop_the_run_with_a_message(loadgen, counting_server, script, arg, message):
    _, proc = run(loadgen, counting_server.url, script, arg, ok=False)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert sum(method_counts(counting_server).values()) == 0, "no request may be sent after a bad argument"


def test_sequential_scripts_refuse_more_threads_than_declared(loadgen, counting_server):
    _, proc = run(loadgen, counting_server.url, "put.lua", threads=2, ok=False)
    assert proc.returncode != 0
    assert "wrk thread 1 exists but threads=1" in proc.stderr
    assert sum(method_counts(counting_server).values()) == 0


# --- sequential keys -----------------------------------------------------------------------------


def test_put_get_delete_walk_the_key_range_once_across_threads(loadgen, server, tmp_path):
    summary, _ = run(loadgen, server.url, "put.lua", "threads=2", "value=64", threads=2, connections=4, tmp=tmp_path)
    n = summary["status_codes"]["201"]
    assert n == summary["requests"] > 1000
    entries = range_entries(server.url)
    got = idx(k for k, _ in entries)
    # two threads, interleaved: every key written exactly once, no gaps but the last few in flight
    assert len(got) == len(set(got)) == n
    assert got[0] == 0 and got[-1] < n + 4
    assert all(len(v) == 64 for _, v in entries)
    assert len({v for _, v in entries}) > 0.97 * n, "values differ from request to request"

    summary, _ = run(loadgen, server.url, "get.lua", "threads=2", f"count={n}", threads=2, connections=4, tmp=tmp_path)
    assert set(summary["status_codes"]) == {"200"}, summary["status_codes"]

    summary, _ = run(
        loadgen, server.url, "delete.lua", "threads=2", "start=0", threads=2, connections=4, rate=1000, tmp=tmp_path
    )
    deleted = summary["status_codes"]["202"]
    assert idx(keys_in(server.url)) == list(range(deleted, n)) or len(keys_in(server.url)) == max(0, n - deleted)


def test_start_and_count_wrap_the_keys(loadgen, server, tmp_path):
    run(loadgen, server.url, "put.lua", "start=500", "count=10", "value=3", rate=500, tmp=tmp_path)
    assert idx(keys_in(server.url)) == list(range(500, 510))


# --- random keys ---------------------------------------------------------------------------------


def test_threads_draw_different_keys_and_seeds_are_repeatable(loadgen, server, tmp_path):
    """Seed 004's bug (math.randomseed(os.time()) in every thread) would make the two threads send the
    same keys: about K(1-e^(-R/2K)) distinct keys instead of K(1-e^(-R/K))."""
    k = 2000
    s, _ = run(
        loadgen,
        server.url,
        "put-random.lua",
        f"keys={k}",
        "seed=7",
        "value=8",
        threads=2,
        connections=4,
        rate=2000,
        tmp=tmp_path,
    )
    r = s["requests"]
    first = keys_in(server.url)
    independent = k * (1 - math.exp(-r / k))
    identical = k * (1 - math.exp(-r / 2 / k))
    assert abs(len(first) - independent) < 0.05 * independent, (len(first), independent, identical)

    def keys_after(seed):
        for key in keys_in(server.url):
            urllib.request.urlopen(urllib.request.Request(f"{server.url}/v0/entity?id={key}", method="DELETE"))
        run(
            loadgen,
            server.url,
            "put-random.lua",
            f"keys={k}",
            f"seed={seed}",
            "value=8",
            threads=2,
            connections=4,
            rate=2000,
            tmp=tmp_path,
        )
        return keys_in(server.url)

    same, other = keys_after(7), keys_after(8)
    # overlap relative to the smaller set: runs of the same length send a few more or fewer requests
    overlap = lambda a, b: len(a & b) / min(len(a), len(b))
    assert overlap(first, same) > 0.95, "the same seed draws the same keys"
    # another seed: only the chance overlap of two independent draws (about |set| / k, ~0.6 here)
    assert overlap(first, other) < 0.8, "another seed draws other keys"


def zeta(n, theta=0.99):
    return sum(i**-theta for i in range(1, n + 1))


def scrambled(rank, n):
    """The permutation range/zipf scripts document for scramble=1: (rank * P + Q) mod n."""
    p = next(p for p in (7919, 7927, 7933, 7937, 7949, 7951, 7963) if n % p)
    return (rank * p + n // 3) % n


@pytest.mark.parametrize("scramble", [0, 1])
def test_zipf_puts_the_documented_mass_on_the_hottest_keys(loadgen, server, tmp_path, scramble):
    n, hot = 1000, 10
    put_keys(server.url, [scrambled(r, n) if scramble else r for r in range(hot)])
    s, _ = run(
        loadgen,
        server.url,
        "get-random.lua",
        f"keys={n}",
        "dist=zipf",
        f"scramble={scramble}",
        threads=2,
        connections=4,
        rate=3000,
        tmp=tmp_path,
    )
    share = s["status_codes"].get("200", 0) / s["requests"]
    expected = zeta(hot) / zeta(n)  # ~0.38 for theta 0.99
    assert abs(share - expected) < 0.05, (share, expected)


def test_uniform_spreads_evenly(loadgen, server, tmp_path):
    n = 1000
    put_keys(server.url, range(100))
    s, _ = run(loadgen, server.url, "get-random.lua", f"keys={n}", threads=2, connections=4, rate=3000, tmp=tmp_path)
    share = s["status_codes"].get("200", 0) / s["requests"]
    assert abs(share - 0.1) < 0.025, share


def test_offset_shifts_the_key_space(loadgen, server, tmp_path):
    run(loadgen, server.url, "put-random.lua", "keys=50", "offset=1000", "value=1", rate=1000, tmp=tmp_path)
    got = idx(keys_in(server.url))
    assert got and min(got) >= 1000 and max(got) < 1050


# --- mixes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "script,args,get_share",
    [
        ("mixed.lua", ("read=0.8",), 0.8),
        ("mixed.lua", ("read=0",), 0.0),
        ("ycsb-a.lua", (), 0.5),
        ("ycsb-b.lua", (), 0.95),
        ("ycsb-c.lua", (), 1.0),
        ("ycsb-f.lua", (), 2 / 3),  # 50% reads + 50% read-modify-writes (a GET and a PUT each)
    ],
)
def test_read_write_ratio_is_respected(loadgen, counting_server, tmp_path, script, args, get_share):
    s, _ = run(
        loadgen, counting_server.url, script, "keys=100000", *args, threads=2, connections=4, rate=3000, tmp=tmp_path
    )
    counts = method_counts(counting_server)
    total = sum(counts.values())
    assert total >= s["requests"] > 2000
    share = counts.get("GET", 0) / total
    assert abs(share - get_share) < 0.025, (counts, get_share)
    assert set(counts) <= {"GET", "PUT"}


def test_ycsb_f_writes_the_key_it_just_read(loadgen, server, tmp_path):
    """Every PUT of workload F follows a GET of the same key: with keys never written before, the
    number of distinct keys in the DB equals the number of read-modify-writes (PUTs), up to repeats."""
    s, _ = run(
        loadgen,
        server.url,
        "ycsb-f.lua",
        "keys=100000000",
        "dist=uniform",
        "value=5",
        threads=1,
        connections=1,
        rate=1000,
        tmp=tmp_path,
    )
    puts = method_counts(server)["PUT"]
    assert len(keys_in(server.url)) == puts > 100


# --- range and status ----------------------------------------------------------------------------


def test_range_requests_share_a_prefix(loadgen, server, tmp_path):
    put_keys(server.url, range(1000))
    # the server side of the URL scheme range.lua documents: start=key<p>, end=key<p>~
    keys = [k for k, _ in range_entries(server.url, "key12", "key12~")]
    assert keys == sorted(keys) and set(keys) == {"key12"} | {f"key12{i}" for i in range(10)}
    # (few requests: the server answers a range on a keep-alive connection in ~40 ms for now)
    s, _ = run(
        loadgen, server.url, "range.lua", "keys=1000", "digits=1", rate=40, duration="2s", connections=4, tmp=tmp_path
    )
    assert set(s["status_codes"]) == {"200"} and s["requests"] >= 40
    assert method_counts(server)["GET"] >= s["requests"]


def test_status_script_hits_only_status(loadgen, server, tmp_path):
    s, _ = run(loadgen, server.url, "status.lua", rate=2000, tmp=tmp_path)
    assert set(s["status_codes"]) == {"200"}
    assert keys_in(server.url) == set()


# --- a cluster's replication arguments ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,message",
    [
        (("ack=4", "from=3"), "ack=4 from=3: ack must not exceed from"),
        (("replicas=2/3", "ack=1"), "replicas= and ack=/from= are two styles of the same thing"),
        (("replicas=2-3",), "replicas=2-3: expected ACK/FROM"),
        (("replicas=3/2",), "replicas=3/2: needs 1 <= ack <= from"),
        (("ack=0",), "ack=0: must be >= 1"),
    ],
)
def test_bad_replication_arguments_stop_the_run(loadgen, args, message):
    """Checked in init(), before any connection (nothing listens on port 9)."""
    _, proc = run(loadgen, "http://127.0.0.1:9", "put.lua", *args, ok=False)
    assert proc.returncode != 0
    assert message in proc.stderr


@pytest.mark.parametrize(
    "script,args,suffix",
    [
        ("get.lua", ("ack=2", "from=3"), "&ack=2&from=3"),
        ("put-random.lua", ("replicas=1/3",), "&replicas=1/3"),
        ("delete.lua", ("from=2",), "&from=2"),
        ("mixed.lua", (), None),
    ],
)
def test_replication_arguments_follow_the_key_in_either_style(loadgen, tmp_path, script, args, suffix):
    """Every request carries them after the key, in another server's API too (path=, param=)."""
    import sys
    import time

    log = tmp_path / "requests.log"
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    p = port.getsockname()[1]
    port.close()
    srv = subprocess.Popen([sys.executable, str(paths.repo_root() / "tests/servers/tiny_kv.py"), str(p), str(log)])
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{p}/health", timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)
        run(
            loadgen,
            f"http://127.0.0.1:{p}",
            script,
            "path=/kv",
            "param=key",
            *args,
            rate=200,
            duration="500ms",
            tmp=tmp_path,
        )
    finally:
        srv.terminate()
        srv.wait(10)
    lines = [ln for ln in log.read_text().splitlines() if "/kv?" in ln]
    assert lines
    for ln in lines:
        m = re.fullmatch(r"(GET|PUT|DELETE) /kv\?key=key\d+(.*)", ln)
        assert m, ln
        assert m.group(2) == (suffix or ""), ln
