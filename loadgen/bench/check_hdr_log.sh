#!/usr/bin/env bash
# Reads an hdr log written by perflab-load with the two reference readers, Python's
# hdrh (pip install hdrhistogram) and Java's HdrHistogram HistogramLogReader (jar from
# Maven Central via `mvn dependency:get`), and compares their totals with the --json
# summary of the same run.
#
# Usage: loadgen/bench/check_hdr_log.sh URL        (runs a short load against URL)
#        loadgen/bench/check_hdr_log.sh LOG JSON   (checks existing files)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/perflab-load-hdrcheck.XXXXXX)
if [ $# -eq 1 ]; then
    (cd "$HERE" && cargo build --release --locked -q)
    LOG=$WORK/run.hlog JSON=$WORK/run.json
    "$HERE/target/release/perflab-load" -t2 -c4 --rate-steps 500:1500:500 --step-duration 1s -U \
        --hdr-log "$LOG" --json "$JSON" "$1" >"$WORK/run.txt"
else
    LOG=$1 JSON=$2
fi
EXPECT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$JSON")
echo "json requests: $EXPECT"

python3 - "$LOG" "$EXPECT" <<'EOF'
import sys
from hdrh.log import HistogramLogReader
from hdrh.histogram import HdrHistogram
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 24 * 3600 * 10**6, 3))
totals, n = {}, 0
while (h := reader.get_next_interval_histogram()) is not None:
    n += 1
    totals[h.get_tag() or "corrected"] = totals.get(h.get_tag() or "corrected", 0) + h.get_total_count()
print(f"python hdrh: {n} intervals, totals {totals}, StartTime {reader.get_start_time_sec()}")
assert totals["corrected"] == int(sys.argv[2]), "python totals differ from the JSON"
EOF

JAR=$(find ~/.m2/repository/org/hdrhistogram/HdrHistogram -name 'HdrHistogram-*.jar' 2>/dev/null | sort | tail -1)
if [ -z "$JAR" ]; then
    mvn -q dependency:get -Dartifact=org.hdrhistogram:HdrHistogram:2.2.2
    JAR=$(find ~/.m2/repository/org/hdrhistogram/HdrHistogram -name 'HdrHistogram-*.jar' | sort | tail -1)
fi
cat >"$WORK/ReadLog.java" <<'EOF'
import org.HdrHistogram.*;
import java.io.File;
public class ReadLog {
    public static void main(String[] a) throws Exception {
        HistogramLogReader r = new HistogramLogReader(new File(a[0]));
        long corrected = 0, uncorrected = 0; int n = 0;
        EncodableHistogram e;
        while ((e = r.nextIntervalHistogram()) != null) {
            Histogram h = (Histogram) e;
            n++;
            if ("uncorrected".equals(h.getTag())) uncorrected += h.getTotalCount(); else corrected += h.getTotalCount();
        }
        System.out.printf("java HistogramLogReader: %d intervals, corrected %d, uncorrected %d, StartTime %.3f%n",
                n, corrected, uncorrected, r.getStartTimeSec());
        if (corrected != Long.parseLong(a[1])) { System.err.println("java totals differ from the JSON"); System.exit(1); }
    }
}
EOF
javac -d "$WORK" -cp "$JAR" "$WORK/ReadLog.java"
java -cp "$JAR:$WORK" ReadLog "$LOG" "$EXPECT"
echo "ok: both readers accept $LOG"
