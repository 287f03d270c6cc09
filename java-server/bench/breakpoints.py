#!/usr/bin/env python3
"""Side-by-side breakpoints of the java-server on this machine (standard library only).

Measures, in one run and with the same load generator settings:
  ceiling      GET /v0/status                      (lsm server; no storage work)
  memory GET   the same GETs on the memory backend  memory PUT  the same PUTs on it (HTTP + generator floor)
  lsm GET      random existing keys, prefilled DB   rocksdb GET  the same on RocksDB
  lsm PUT      random keys over the same key space  rocksdb PUT  the same on RocksDB
  heap check   lsm with a DB >= 10x the -Xmx, GET and PUT at a moderate rate

A breakpoint is the highest fixed rate R with achieved >= 99% of R and p99 <= 10 ms (no errors, no
unexpected status). Search: double from --start until a probe fails, then bisect to --precision.
Each target gets one server, warmed up (JIT) with unrecorded load before its search; PUT searches start
from a fresh copy of the prefilled database (random keys then overwrite the same key space).
Server CPU time per request (from /proc) is printed too: it is robust to noise from other processes.

Every probe also prints the load generator's CPU per request: the generator shares the two cores, and
at mid rates it spends as much per request as the server (a wake-up per send). --send-slack 100us lets it
send what falls due within 100 us in one pass (the lateness counts in the latency). --budget R1,R2,...
skips the search and probes every target at the same rates, for a table of where the CPU goes.

Usage: python3 java-server/bench/breakpoints.py [--quick] [--skip-heap] [--send-slack T] [--budget R,..] ...
Needs: java-server built (gradle installDist), loadgen/target/release/perflab-load.
"""
import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
INSTALL = os.path.join(ROOT, "java-server", "build", "install", "perflab-server")
SCRIPTS = os.path.join(ROOT, "wrk-scripts")
CLK_TCK = os.sysconf("SC_CLK_TCK")


NICE = []


def java_cmd(args, java_home, jvm):
    java = os.path.join(java_home, "bin", "java") if java_home else "java"
    return NICE + [java] + jvm + ["-cp", os.path.join(INSTALL, "lib", "*")] + args


def prefill(a, backend, path, keys, extra=()):
    if os.path.exists(os.path.join(path, "PREFILL.json")):
        return json.load(open(os.path.join(path, "PREFILL.json")))
    shutil.rmtree(path, ignore_errors=True)
    cmd = java_cmd(["perflab.tools.Prefill", "--data-dir", path, "--backend", backend, "--keys", str(keys),
                    "--value-size", str(a.value_size)] + list(extra), a.java_home, ["-Xmx1g"])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()
    summary = json.loads(out)
    json.dump(summary, open(os.path.join(path, "PREFILL.json"), "w"))
    return summary


class Server:
    def __init__(self, a, backend, data_dir, xmx="256m", extra=()):
        self.data_dir = data_dir
        args = ["perflab.server.Main", "--port", "0", "--backend", backend] + list(extra)
        if data_dir:
            args += ["--data-dir", data_dir]
        self.proc = subprocess.Popen(java_cmd(args, a.java_home, ["-Xmx" + xmx, "-Xms" + xmx]),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.port = None
        deadline = time.time() + 120
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("server exited: " + self.proc.stderr.read())
            ev = json.loads(line)
            if ev.get("event") == "ready":
                self.port = ev["port"]
                break
        if self.port is None:
            raise RuntimeError("server not ready")
        self.url = "http://127.0.0.1:%d" % self.port
        # keep reading: timed event lines follow (flush, gc, ...), and a full pipe would stall the
        # server's event writer (events dropped) and its final "stopped" line
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def cpu_seconds(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def stats(self):
        with urllib.request.urlopen(self.url + "/v0/stats", timeout=10) as r:
            return json.loads(r.read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def children_cpu_seconds():
    """CPU time of finished child processes: the load generator's, measured around its run."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_load(a, server, script, rate, script_args, expected_status):
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    cmd = NICE + [a.loadgen, "-t", str(a.threads), "-c", str(a.connections), "-d", "%ds" % a.duration,
           "--warmup", "%ds" % a.warmup, "-R", str(rate), "-s", os.path.join(SCRIPTS, script),
           "--json", out] + (["--send-slack", a.send_slack] if a.send_slack else []) + [server.url] + script_args
    cpu0 = server.cpu_seconds()
    gen0 = children_cpu_seconds()
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t0
    cpu1 = server.cpu_seconds()
    gen1 = children_cpu_seconds()
    if p.returncode != 0:
        raise RuntimeError("load generator failed: " + p.stderr[-2000:])
    d = json.load(open(out))
    os.unlink(out)
    errors = sum(d["errors"].values())
    codes = d.get("status_codes", {})
    unexpected = sum(n for c, n in codes.items() if c not in expected_status)
    achieved = d["achieved_rate"]
    p99_ms = d["latency_us"]["p99"] / 1000.0
    ok = achieved >= 0.99 * rate and p99_ms <= 10.0 and errors == 0 and unexpected == 0
    total_requests = achieved * (a.duration + a.warmup)
    cpu_us = (cpu1 - cpu0) * 1e6 / total_requests if total_requests else float("nan")
    gen_us = (gen1 - gen0) * 1e6 / total_requests if total_requests else float("nan")
    why = "" if ok else ("achieved %.0f" % achieved if achieved < 0.99 * rate else
                         "p99 %.1f ms" % p99_ms if p99_ms > 10 else
                         "%d errors" % errors if errors else "%d unexpected statuses %s" % (unexpected, codes))
    return {"rate": rate, "ok": ok, "achieved": achieved, "p50_ms": d["latency_us"]["p50"] / 1000.0,
            "p99_ms": p99_ms, "max_ms": d["latency_us"]["max"] / 1000.0, "errors": errors,
            "cpu_us_per_req": cpu_us, "gen_us_per_req": gen_us, "wall_s": wall, "why": why}


MEMORY_XMX = "2g"  # the memory backend keeps every key on the heap: 1M x 100 B needs ~300 MB


def fill_memory(a, srv):
    """The memory backend starts empty: PUT key0..key<N-1> over HTTP (sequential, both threads)."""
    t0 = time.time()
    cmd = NICE + [a.loadgen, "-t2", "-c16", "-d", "%ds" % (a.keys // 25000 + 5), "-R", "40000",
                  "-s", os.path.join(SCRIPTS, "put.lua"), srv.url,
                  "count=%d" % a.keys, "threads=2", "value=%d" % a.value_size]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("filling the memory backend failed: " + p.stderr[-2000:])
    print("filled memory backend: %d keys over HTTP in %.1f s" % (a.keys, time.time() - t0), flush=True)


def search(a, name, probe_once):
    """probe(rate) -> result dict. Doubling, then bisection. Returns (breakpoint, probes)."""
    probes = []

    def probe(rate):
        # a failed probe is repeated (--retries): on a shared machine a burst from another process can
        # fail a probe the server would pass; every attempt is printed and kept
        for attempt in range(a.retries + 1):
            r = probe_once(rate)
            r["attempt"] = attempt + 1
            if attempt < a.retries and not r["ok"]:
                probes.append(r)
                report_probe(name, r)
                continue
            return r

    lo, hi = 0, None
    rate = a.start
    while hi is None:
        r = probe(rate)
        probes.append(r)
        report_probe(name, r)
        if r["ok"]:
            lo = rate
            rate *= 2
            if rate > a.max_rate:
                hi = a.max_rate
        else:
            hi = rate
    while hi - lo > max(a.precision * lo, 250) and len(set(p["rate"] for p in probes)) < a.max_probes:
        rate = int((lo + hi) / 2 / 100) * 100
        if rate <= lo or rate >= hi:
            break
        r = probe(rate)
        probes.append(r)
        report_probe(name, r)
        if r["ok"]:
            lo = rate
        else:
            hi = rate
    return lo, probes


def report_probe(name, r):
    print("  %-12s R=%-7d %s achieved=%.0f p50=%.2fms p99=%.2fms max=%.1fms cpu=%.1fus/req gen=%.1fus/req %s%s" % (
        name, r["rate"], "pass" if r["ok"] else "FAIL", r["achieved"], r["p50_ms"], r["p99_ms"], r["max_ms"],
        r["cpu_us_per_req"], r["gen_us_per_req"], r["why"], " (attempt %d)" % r["attempt"] if r.get("attempt", 1) > 1 else ""),
        flush=True)


def cpu_at_pass(probes, key="cpu_us_per_req"):
    passed = [p for p in probes if p["ok"]]
    return passed[-1][key] if passed else float("nan")


def budget(a, name, probe_once):
    """--budget: one probe per listed rate (no search); returns (None, probes) for the CPU table."""
    probes = []
    for rate in a.budget:
        r = probe_once(rate)
        probes.append(r)
        report_probe(name, r)
    return None, probes


def print_budget(results):
    """CPU per request of server and generator at the same rates, target by target."""
    print("| rate | target | server CPU us/req | generator CPU us/req | total us/req | cores busy | p99 ms |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    rows = [(r["rate"], name, r) for name, (_, probes) in results.items() for r in probes]
    for rate, name, r in sorted(rows, key=lambda x: x[0]):
        total = r["cpu_us_per_req"] + r["gen_us_per_req"]
        print("| %d | %s | %.1f | %.1f | %.1f | %.2f | %.2f |" % (
            rate, name, r["cpu_us_per_req"], r["gen_us_per_req"], total, total * r["achieved"] / 1e6, r["p99_ms"]))


def rate_list(text):
    try:
        rates = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated integer rates, e.g. 20000,40000, got %r" % text)
    if not rates or min(rates) <= 0:
        raise argparse.ArgumentTypeError("rates must be positive, got %r" % text)
    return rates


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "perflab-bench"))
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--heap-keys", type=int, default=25_000_000, help="keys for the >= 10x heap check")
    ap.add_argument("--heap-xmx", default="256m")
    ap.add_argument("--skip-heap", action="store_true")
    ap.add_argument("--only", default="ceiling,memory-get,lsm-get,rocksdb-get,memory-put,lsm-put,rocksdb-put",
                    help="targets to measure; memory-* (a heap map, -Xmx2g) is the floor without storage cost")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=5, help="unrecorded seconds at the probe's rate")
    ap.add_argument("--start", type=int, default=5000)
    ap.add_argument("--max-rate", type=int, default=400_000)
    ap.add_argument("--precision", type=float, default=0.05)
    ap.add_argument("--max-probes", type=int, default=12, help="distinct rates per search")
    ap.add_argument("--retries", type=int, default=1, help="repeat a failed probe this many times")
    ap.add_argument("--server-warmup", type=int, default=15,
                    help="seconds of unrecorded load on a fresh read-only server before its search (JIT)")
    ap.add_argument("--mode", default="sync")
    ap.add_argument("--server-arg", action="append", default=[], metavar="FLAG=VALUE",
                    help="extra server flag for every server, e.g. --server-arg=--memtable-size=32m (repeatable)")
    ap.add_argument("--send-slack", default="",
                    help="perflab-load --send-slack for every probe (e.g. 100us): fewer generator wake-ups")
    ap.add_argument("--budget", type=rate_list, metavar="R1,R2,...",
                    help="no search: one probe per rate and target, then a table of server and generator CPU "
                         "per request (where the two cores go at equal rates)")
    ap.add_argument("--quick", action="store_true", help="6 s probes, 10%% precision")
    ap.add_argument("--nice", type=int, default=0,
                    help="run server and load generator under nice -n N (negative needs root): on a shared "
                         "machine this keeps other processes from dominating the measurement")
    ap.add_argument("--java-home", default=os.environ.get("JAVA_HOME", ""))
    ap.add_argument("--loadgen", default=os.path.join(ROOT, "loadgen", "target", "release", "perflab-load"))
    a = ap.parse_args()
    if a.quick:
        a.duration, a.warmup, a.precision, a.server_warmup = 6, 3, 0.10, 10
    if a.nice:
        NICE[:] = ["nice", "-n", str(a.nice)]
    os.makedirs(a.work, exist_ok=True)
    only = set(a.only.split(","))
    print("machine: %d cpus, load average %s; loadgen -t%d -c%d%s, %ds probes after %ds warm-up, server -Xmx256m "
          "--mode %s %s, nice %d" % (os.cpu_count(), " ".join("%.2f" % x for x in os.getloadavg()), a.threads,
                                     a.connections, " --send-slack " + a.send_slack if a.send_slack else "",
                                     a.duration, a.warmup, a.mode, " ".join(a.server_arg), a.nice),
          flush=True)

    base = {b: os.path.join(a.work, "%s-%d" % (b, a.keys)) for b in ("lsm", "rocksdb")}
    for b, path in base.items():
        s = prefill(a, b, path, a.keys)
        print("prefilled %s: %d keys, %.0f MB on disk, %d tables, %.1f s" % (
            b, s["keys"], s["disk_bytes"] / 2**20, s["sstables"], s["seconds"]), flush=True)
    get_args = ["keys=%d" % a.keys]
    put_args = ["keys=%d" % a.keys, "value=%d" % a.value_size]
    mode = ["--mode", a.mode] + [part for arg in a.server_arg for part in arg.split("=", 1)]
    results = {}
    explore = budget if a.budget else search

    def read_only(name, backend, script, args, expected):
        srv = Server(a, backend, base.get(backend), xmx=MEMORY_XMX if backend == "memory" else "256m", extra=mode)
        try:
            if backend == "memory":
                fill_memory(a, srv)
            warm = argparse.Namespace(**vars(a))
            warm.duration, warm.warmup = a.server_warmup, 0
            run_load(warm, srv, script, a.start, args, expected)
            results[name] = explore(a, name, lambda r: run_load(a, srv, script, r, args, expected))
        finally:
            srv.stop()

    def writes(name, backend):
        # one server for the whole search, started on a fresh copy of the prefilled database: the JIT is
        # warm for every probe, and the database keeps its size (random keys overwrite the same key space)
        scratch = os.path.join(a.work, "scratch-" + backend)
        shutil.rmtree(scratch, ignore_errors=True)
        if backend == "memory":
            srv = Server(a, backend, None, xmx=MEMORY_XMX, extra=mode)
            fill_memory(a, srv)
        else:
            shutil.copytree(base[backend], scratch)
            srv = Server(a, backend, scratch, extra=mode)
        try:
            warm = argparse.Namespace(**vars(a))
            warm.duration, warm.warmup = a.server_warmup, 0
            run_load(warm, srv, "put-random.lua", a.start, put_args, {"201"})

            def probe(rate):
                r = run_load(a, srv, "put-random.lua", rate, put_args, {"201"})
                st = srv.stats()["storage"]
                if "flushes" not in st:
                    return r
                r["why"] += " [flushes %d, compactions %d, stalls %d/%d ms, runs %s]" % (
                    st["flushes"], st["compactions"], st["write_stalls"], st["write_stall_ms"],
                    st.get("sorted_runs", st["sstables"]))
                return r
            results[name] = explore(a, name, probe)
        finally:
            srv.stop()
            shutil.rmtree(scratch, ignore_errors=True)

    if "ceiling" in only:
        read_only("ceiling", "lsm", "status.lua", [], {"200"})
    if "memory-get" in only:
        read_only("memory-get", "memory", "get-random.lua", get_args, {"200"})
    if "lsm-get" in only:
        read_only("lsm-get", "lsm", "get-random.lua", get_args, {"200"})
    if "rocksdb-get" in only:
        read_only("rocksdb-get", "rocksdb", "get-random.lua", get_args, {"200"})
    if "memory-put" in only:
        writes("memory-put", "memory")
    if "lsm-put" in only:
        writes("lsm-put", "lsm")
    if "rocksdb-put" in only:
        writes("rocksdb-put", "rocksdb")

    if a.budget:
        print()
        print_budget(results)
        return 0
    heap = None
    if not a.skip_heap:
        heap = heap_check(a, mode, results)

    print()
    print("| target | breakpoint (req/s) | x ceiling | server CPU us/req at breakpoint | generator CPU us/req "
          "| probes |")
    print("|---|---:|---:|---:|---:|---:|")
    ceiling = results.get("ceiling", (0, []))[0]
    for name in ("ceiling", "memory-get", "lsm-get", "rocksdb-get", "memory-put", "lsm-put", "rocksdb-put"):
        if name in results:
            bp, probes = results[name]
            print("| %s | %d | %s | %.1f | %.1f | %d |" % (
                name, bp, "%.2f" % (bp / ceiling) if ceiling else "-", cpu_at_pass(probes),
                cpu_at_pass(probes, "gen_us_per_req"), len(probes)))
    if heap:
        print()
        print("heap check: DB %.2f GB on disk, -Xmx%s (heap_max %.0f MB) -> DB/heap = %.1fx; "
              "GET R=%d: achieved %.0f, p99 %.2f ms; PUT R=%d: achieved %.0f, p99 %.2f ms; "
              "heap_used peak %.0f MB, gc %d (%d ms)" % heap)
    print("load average at the end: %s" % " ".join("%.2f" % x for x in os.getloadavg()))


def heap_check(a, mode, results):
    path = os.path.join(a.work, "lsm-heap-%d" % a.heap_keys)
    s = prefill(a, "lsm", path, a.heap_keys)
    print("prefilled heap-check DB: %d keys, %.2f GB, %d tables, %.1f s" % (
        s["keys"], s["disk_bytes"] / 2**30, s["sstables"], s["seconds"]), flush=True)
    get_bp = results.get("lsm-get", (20000, []))[0] or 20000
    put_bp = results.get("lsm-put", (20000, []))[0] or 20000
    srv = Server(a, "lsm", path, xmx=a.heap_xmx, extra=mode)
    peak = [0]
    try:
        g = run_load(a, srv, "get-random.lua", int(get_bp * 0.5), ["keys=%d" % a.heap_keys], {"200"})
        peak[0] = max(peak[0], srv.stats()["jvm"]["heap_used"])
        p = run_load(a, srv, "put-random.lua", int(put_bp * 0.5), ["keys=%d" % a.heap_keys,
                                                                   "value=%d" % a.value_size], {"201"})
        st = srv.stats()
        peak[0] = max(peak[0], st["jvm"]["heap_used"])
        heap_max = st["jvm"]["heap_max"]
        return (s["disk_bytes"] / 1e9, a.heap_xmx, heap_max / 2**20, s["disk_bytes"] / heap_max,
                g["rate"], g["achieved"], g["p99_ms"], p["rate"], p["achieved"], p["p99_ms"],
                peak[0] / 2**20, st["jvm"]["gc_count"], st["jvm"]["gc_ms"])
    finally:
        srv.stop()


def _interrupt(signum, frame):
    raise KeyboardInterrupt("signal %d" % signum)  # unwinds through the finally blocks that stop servers


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _interrupt)
    sys.exit(main())
