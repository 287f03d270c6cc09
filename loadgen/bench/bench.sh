#!/usr/bin/env bash
# Throughput, CPU per request, RSS and schedule precision of perflab-load, measured
# side by side with the ceiling that wrk (closed loop, if installed) reaches in the
# same rounds, against the Java server's GET /v0/status (or nginx as a stand-in).
#
# Usage: loadgen/bench/bench.sh [-r ROUNDS] [-d DURATION] [-t java|nginx] [-o OUTDIR]
#   ROUNDS    rounds of the throughput series, interleaved so noise hits all alike (3)
#   DURATION  length of each measured run (10s)
#   target    java (default when java-server/build/install exists) or nginx
#
# Prints one table; raw outputs stay in OUTDIR (default: a temp dir).
# Needs: cargo, python3, /usr/bin/time; optional: wrk (apt-get install wrk), nginx.
set -euo pipefail

ROUNDS=3
DUR=10s
TARGET=""
OUT=""
while getopts "r:d:t:o:h" opt; do
    case $opt in
        r) ROUNDS=$OPTARG ;;
        d) DUR=$OPTARG ;;
        t) TARGET=$OPTARG ;;
        o) OUT=$OPTARG ;;
        *) sed -n '2,13p' "$0"; exit 1 ;;
    esac
done

HERE=$(cd "$(dirname "$0")/.." && pwd)       # loadgen/
ROOT=$(cd "$HERE/.." && pwd)
INSTALL="$ROOT/java-server/build/install/perflab-server"
OUT=${OUT:-$(mktemp -d /tmp/perflab-load-bench.XXXXXX)}
mkdir -p "$OUT"
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is needed (apt-get install time)"; exit 1; }

(cd "$HERE" && cargo build --release --locked -q)
BIN="$HERE/target/release/perflab-load"

SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true; }
trap cleanup EXIT

if [ -z "$TARGET" ]; then
    if [ -d "$INSTALL/lib" ]; then TARGET=java; else TARGET=nginx; fi
fi
case $TARGET in
    java)
        java -cp "$INSTALL/lib/*" perflab.server.Main --port 0 --backend memory >"$OUT/server.out" 2>"$OUT/server.err" &
        SERVER_PID=$!
        for _ in $(seq 100); do grep -q '"event":"ready"' "$OUT/server.out" 2>/dev/null && break; sleep 0.1; done
        PORT=$(python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "ready" in l][0]["port"])' "$OUT/server.out")
        URL="http://127.0.0.1:$PORT/v0/status"
        ;;
    nginx)
        mkdir -p "$OUT/nginx/logs"
        PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
        cat >"$OUT/nginx/nginx.conf" <<EOF
worker_processes 1; daemon off; pid $OUT/nginx/nginx.pid; error_log $OUT/nginx/logs/error.log;
events { worker_connections 1024; }
http { access_log off; keepalive_requests 100000000;
  server { listen 127.0.0.1:$PORT; location / { return 200 "OK"; } } }
EOF
        nginx -c "$OUT/nginx/nginx.conf" -p "$OUT/nginx" &
        SERVER_PID=$!
        sleep 0.5
        URL="http://127.0.0.1:$PORT/v0/status"
        ;;
    *) echo "bench: unknown target $TARGET"; exit 1 ;;
esac
echo "bench: target $TARGET at $URL; outputs in $OUT; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# JIT warm-up of the server (not measured).
"$BIN" -t2 -c16 -d10s -R1M "$URL" >"$OUT/warmup.txt"

timed() { # name, command...
    local name=$1; shift
    /usr/bin/time -f "%U %S %M %e" -o "$OUT/$name.time" "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err" || true
}

for r in $(seq "$ROUNDS"); do
    if command -v wrk >/dev/null; then
        timed "r$r-wrk-c16" wrk -t2 -c16 -d"$DUR" "$URL"
    fi
    timed "r$r-ours-c16-max" "$BIN" -t2 -c16 -d"$DUR" -R1M --json "$OUT/r$r-ours-c16-max.json" "$URL"
    timed "r$r-ours-c16-110k" "$BIN" -t2 -c16 -d"$DUR" -R110k --json "$OUT/r$r-ours-c16-110k.json" "$URL"
    timed "r$r-ours-c64-max" "$BIN" -t2 -c64 -d"$DUR" -R1M --json "$OUT/r$r-ours-c64-max.json" "$URL"
    if command -v wrk >/dev/null; then
        timed "r$r-wrk-c64" wrk -t2 -c64 -d"$DUR" "$URL"
    fi
done
timed "precision" "$BIN" -t1 -c1 -d"$DUR" -R2000 -U --json "$OUT/precision.json" "$URL"

python3 - "$OUT" "$ROUNDS" <<'EOF'
import json, re, statistics, sys, os
out, rounds = sys.argv[1], int(sys.argv[2])

def timing(name):
    u, s, rss, wall = open(f"{out}/{name}.time").read().split()[-4:]
    return float(u) + float(s), int(rss), float(wall)

def wrk_result(name):
    text = open(f"{out}/{name}.txt").read()
    n = int(re.search(r"(\d+) requests in", text).group(1))
    rps = float(re.search(r"Requests/sec:\s*([\d.]+)", text).group(1))
    return n, rps

rows = []
for kind in ["wrk-c16", "ours-c16-max", "ours-c16-110k", "ours-c64-max", "wrk-c64"]:
    res = []
    for r in range(1, rounds + 1):
        name = f"r{r}-{kind}"
        if not os.path.exists(f"{out}/{name}.time"):
            continue
        cpu, rss, wall = timing(name)
        if kind.startswith("ours"):
            j = json.load(open(f"{out}/{name}.json"))
            n, rps = j["requests"], j["achieved_rate"]
        else:
            n, rps = wrk_result(name)
        res.append((rps, cpu / max(n, 1) * 1e6, rss, cpu / wall))
    if res:
        rows.append((kind, res))

print(f"\n{'run':<16} {'req/s (median)':>15} {'req/s (all rounds)':>32} {'CPU us/req':>11} {'cores used':>11} {'max RSS':>9}")
for kind, res in rows:
    rps = [r[0] for r in res]
    print(f"{kind:<16} {statistics.median(rps):>15.0f} {' '.join(f'{x:.0f}' for x in rps):>32} "
          f"{statistics.median([r[1] for r in res]):>11.2f} {statistics.median([r[3] for r in res]):>11.2f} "
          f"{max(r[2] for r in res):>7}KB")
p = json.load(open(f"{out}/precision.json"))
c, u = p["latency_us"], p["latency_uncorrected_us"]
print(f"\nprecision (-t1 -c1 -R2000, {p['requests']} requests): corrected p50 {c['p50']} us, "
      f"uncorrected p50 {u['p50']} us, difference {c['p50'] - u['p50']} us; "
      f"p90 {c['p90']} / {u['p90']} us; p99 {c['p99']} / {u['p99']} us")
EOF
