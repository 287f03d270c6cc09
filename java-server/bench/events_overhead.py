#!/usr/bin/env python3
"""What timed server events cost: --events on vs off, interleaved A/B pairs (standard library only).

For each workload (lsm PUT of random keys on a fresh copy of a prefilled database, lsm GET of random
existing keys on the prefilled database), runs PAIRS pairs of servers, "on" then "off", each:
  start the server (-Xmx/-Xms fixed, --mode sync, every other flag default; events on or off),
  unrecorded warm-up load at the rate (JIT, memtables, first flushes),
  the measured fixed-rate run, with the server's utime+stime read from /proc/<pid>/stat around it,
  SIGTERM, and a count of the event lines the server wrote.
Reports per run and per workload: server CPU per request (us), achieved rate and p99, as medians with
min-max spreads, and the on/off ratio of the medians. The machine's load average is printed per run.
Also per run: the share of the server's CPU (schedstat run time) spent in threads that exist only for
events (event-writer and JFR's threads): an exact part of the cost that the A/B noise cannot hide.

Usage (from the repository root; needs `cd java-server && gradle installDist` and perflab-load):
  python3 java-server/bench/events_overhead.py [--pairs 4] [--put-rate 40000] [--get-rate 60000]
      [--duration 10] [--warmup 8] [--only put,get] [--order abab|abba] [--on-args '--gc-events off']
      [--loadgen PATH] [--nice -10]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
INSTALL = os.path.join(ROOT, "java-server", "build", "install", "perflab-server")
CLK_TCK = os.sysconf("SC_CLK_TCK")
# threads that exist only for events (plus JFR's own, "JFR ..."); their run time is attributed exactly
EVENT_THREADS = {"event-writer", "gc-events-start"}


def find_loadgen(explicit):
    for p in [
        explicit,
        os.path.join(ROOT, "loadgen", "target", "release", "perflab-load"),
        "/work/main/loadgen/target/release/perflab-load",
    ]:
        if p and os.access(p, os.X_OK):
            return p
    sys.exit("error: perflab-load not found (build loadgen or pass --loadgen)")


def find_scripts(loadgen):
    for d in [
        os.path.join(ROOT, "wrk-scripts"),
        os.path.join(os.path.dirname(loadgen), "..", "..", "..", "wrk-scripts"),
    ]:
        if os.path.exists(os.path.join(d, "put-random.lua")):
            return os.path.abspath(d)
    sys.exit("error: wrk-scripts/ not found")


class Server:
    def __init__(self, a, data_dir, events, log):
        cmd = a.nice + [
            "java",
            "-Xmx" + a.heap,
            "-Xms" + a.heap,
            "-cp",
            os.path.join(INSTALL, "lib", "*"),
            "perflab.server.Main",
            "--port",
            "0",
            "--data-dir",
            data_dir,
            "--events",
            events,
        ]
        if events == "on":
            cmd += a.on_args.split()
        self.log = log
        self.out = open(log, "w")
        # stdout goes to a file: the server's event writer never waits for this script
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        self.port = None
        while self.port is None:
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("server did not start; stdout: " + open(log).read()[-2000:])
            for line in open(log):
                if '"event":"ready"' in line:
                    self.port = json.loads(line)["port"]
            time.sleep(0.05)
        self.url = "http://127.0.0.1:%d" % self.port

    def cpu_seconds(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def thread_cpu(self):
        """Run time (ns, from schedstat) per thread name: the event machinery's own threads are exact."""
        out = {}
        base = "/proc/%d/task" % self.proc.pid
        for tid in os.listdir(base):
            try:
                name = open(os.path.join(base, tid, "comm")).read().strip()
                ns = int(open(os.path.join(base, tid, "schedstat")).read().split()[0])
            except OSError:
                continue
            out[(tid, name)] = ns
        return out

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        kinds = {}
        for line in open(self.log):
            kind = json.loads(line)["event"]
            kinds[kind] = kinds.get(kind, 0) + 1
        return kinds


def load(a, url, rate, seconds, script, args, json_out=None):
    cmd = (
        a.nice
        + [a.loadgen, "-t2", "-c32", "-d", "%ds" % seconds, "-R", str(rate), "-s", os.path.join(a.scripts, script)]
        + (["--json", json_out] if json_out else [])
        + [url]
        + args
    )
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("perflab-load failed: " + p.stderr[-2000:])


def one_run(a, workload, events, db):
    """One server, warm-up, measured window. Returns the measurements."""
    script, rate = ("put-random.lua", a.put_rate) if workload == "put" else ("get-random.lua", a.get_rate)
    args = ["keys=%d" % a.keys, "seed=%d" % int(time.time())] + (
        ["value=%d" % a.value_size] if workload == "put" else []
    )
    if workload == "put":
        run_dir = os.path.join(a.work, "put-db")
        shutil.rmtree(run_dir, ignore_errors=True)
        shutil.copytree(db, run_dir)
    else:
        run_dir = db
    srv = Server(a, run_dir, events, os.path.join(a.work, "events-%s-%s.jsonl" % (workload, events)))
    try:
        load(a, srv.url, rate, a.warmup, script, args)
        summary = os.path.join(a.work, "summary.json")
        load_before = os.getloadavg()[0]
        cpu0 = srv.cpu_seconds()
        threads0 = srv.thread_cpu()
        load(a, srv.url, rate, a.duration, script, args, summary)
        cpu1 = srv.cpu_seconds()
        threads1 = srv.thread_cpu()
    finally:
        kinds = srv.stop()
    d = json.load(open(summary))
    errors = sum(d["errors"].values())
    delta = {k: ns - threads0.get(k, 0) for k, ns in threads1.items()}
    total_ns = sum(delta.values())
    event_ns = sum(ns for k, ns in delta.items() if k[1] in EVENT_THREADS or k[1].startswith("JFR "))
    jit_ns = sum(ns for k, ns in delta.items() if k[1].startswith(("C1 Compiler", "C2 Compiler")))
    return {
        "workload": workload,
        "events": events,
        "rate": rate,
        "achieved": d["achieved_rate"],
        "requests": d["requests"],
        "p99_ms": d["latency_us"]["p99"] / 1000.0,
        "errors": errors,
        "cpu_us": (cpu1 - cpu0) * 1e6 / d["requests"],
        "load1": load_before,
        "event_threads_pct": 100.0 * event_ns / total_ns if total_ns else 0.0,
        "jit_us": jit_ns / 1e3 / d["requests"],
        "nojit_us": (total_ns - jit_ns) / 1e3 / d["requests"],
        "event_lines": sum(n for k, n in kinds.items() if k not in ("config", "ready", "stopped")),
        "kinds": {k: n for k, n in kinds.items() if k not in ("config", "ready", "stopped")},
    }


def prefill(a):
    db = os.path.join(a.work, "prefilled")
    if not os.path.exists(os.path.join(db, "MANIFEST")):
        shutil.rmtree(db, ignore_errors=True)
        subprocess.run(
            [
                "java",
                "-Xmx1g",
                "-cp",
                os.path.join(INSTALL, "lib", "*"),
                "perflab.tools.Prefill",
                "--data-dir",
                db,
                "--keys",
                str(a.keys),
                "--value-size",
                str(a.value_size),
            ],
            check=True,
            capture_output=True,
        )
    return db


def spread(xs):
    return "%s [%s-%s]" % (fmt(statistics.median(xs)), fmt(min(xs)), fmt(max(xs)))


def fmt(x):
    return "%.2f" % x if abs(x) < 100 else "%.0f" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--put-rate", type=int, default=40000)
    ap.add_argument("--get-rate", type=int, default=60000)
    ap.add_argument("--duration", type=int, default=10, help="measured seconds per run")
    ap.add_argument("--warmup", type=int, default=8, help="unrecorded seconds of load before each window")
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--heap", default="1g")
    ap.add_argument("--only", default="put,get")
    ap.add_argument("--loadgen")
    ap.add_argument("--nice", type=int, default=0, help="run server and generator at this nice value")
    ap.add_argument("--work", help="directory for the databases and logs (default: a temporary one)")
    ap.add_argument("--order", choices=("abab", "abba"), default="abab")
    ap.add_argument("--on-args", default="", help="extra server flags for the 'on' runs, e.g. '--gc-events off'")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(INSTALL, "lib")):
        sys.exit("error: %s missing (cd java-server && gradle installDist)" % INSTALL)
    a.loadgen = find_loadgen(a.loadgen)
    a.scripts = find_scripts(a.loadgen)
    a.nice = ["nice", "-n", str(a.nice)] if a.nice else []
    keep = a.work is not None
    a.work = a.work or tempfile.mkdtemp(prefix="events-overhead-")
    os.makedirs(a.work, exist_ok=True)
    print(
        "# %s  cpus=%d  loadavg=%s  pairs=%d (%s)  window=%ds after %ds warm-up  -t2 -c32  on-args=%r  %s"
        % (
            time.strftime("%Y-%m-%d %H:%M:%S"),
            os.cpu_count(),
            " ".join("%.2f" % x for x in os.getloadavg()),
            a.pairs,
            a.order,
            a.duration,
            a.warmup,
            a.on_args,
            " ".join(sys.argv[1:]),
        ),
        flush=True,
    )
    try:
        db = prefill(a)
        results = []
        for workload in a.only.split(","):
            for pair in range(a.pairs):
                # abab: on first in every pair; abba: every other pair starts with off (cancels a drift)
                for events in ("off", "on") if a.order == "abba" and pair % 2 else ("on", "off"):
                    r = one_run(a, workload, events, db)
                    results.append(r)
                    print(
                        "%-3s pair %d events=%-3s rate=%d achieved=%.0f p99=%.2fms errors=%d cpu=%.2fus/req "
                        "(without JIT threads %.2f, JIT %.2f) event_threads=%.3f%% load1=%.2f event_lines=%d %s"
                        % (
                            workload,
                            pair + 1,
                            events,
                            r["rate"],
                            r["achieved"],
                            r["p99_ms"],
                            r["errors"],
                            r["cpu_us"],
                            r["nojit_us"],
                            r["jit_us"],
                            r["event_threads_pct"],
                            r["load1"],
                            r["event_lines"],
                            json.dumps(r["kinds"]),
                        ),
                        flush=True,
                    )
        print()
        print(
            "| workload | rate | events | server CPU us/req | without JIT threads | JIT threads | achieved req/s "
            "| p99 ms | event lines/run | event threads, % of server CPU |"
        )
        print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        for workload in a.only.split(","):
            med = {}
            for events in ("on", "off"):
                rs = [r for r in results if r["workload"] == workload and r["events"] == events]
                med[events] = (
                    statistics.median(r["cpu_us"] for r in rs),
                    statistics.median(r["nojit_us"] for r in rs),
                    statistics.median(r["achieved"] for r in rs),
                )
                print(
                    "| lsm %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |"
                    % (
                        workload.upper(),
                        rs[0]["rate"],
                        events,
                        spread([r["cpu_us"] for r in rs]),
                        spread([r["nojit_us"] for r in rs]),
                        spread([r["jit_us"] for r in rs]),
                        spread([r["achieved"] for r in rs]),
                        spread([r["p99_ms"] for r in rs]),
                        spread([r["event_lines"] for r in rs]),
                        spread([r["event_threads_pct"] for r in rs]),
                    )
                )
            ons = [r for r in results if r["workload"] == workload and r["events"] == "on"]
            offs = [r for r in results if r["workload"] == workload and r["events"] == "off"]
            print(
                "| lsm %s | | on/off | %.3f (pairs %s us) | %.3f (pairs %s us) | | %.3f | | | |"
                % (
                    workload.upper(),
                    med["on"][0] / med["off"][0],
                    ", ".join("%+.2f" % (a["cpu_us"] - b["cpu_us"]) for a, b in zip(ons, offs)),
                    med["on"][1] / med["off"][1],
                    ", ".join("%+.2f" % (a["nojit_us"] - b["nojit_us"]) for a, b in zip(ons, offs)),
                    med["on"][2] / med["off"][2],
                )
            )
        print("# done %s loadavg=%s" % (time.strftime("%H:%M:%S"), " ".join("%.2f" % x for x in os.getloadavg())))
    finally:
        if not keep:
            shutil.rmtree(a.work, ignore_errors=True)


if __name__ == "__main__":
    main()
