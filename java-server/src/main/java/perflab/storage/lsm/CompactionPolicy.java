package perflab.storage.lsm;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Which runs to merge ("adjacent size-tiered", akin to RocksDB's universal compaction):
 * <ol>
 * <li>Nothing happens while there are fewer than {@link #TRIGGER} runs.</li>
 * <li>Scanning from the newest run, a window grows over the next older run while that run is no larger
 *     than {@link #RATIO} × the window so far. The first window of two or more runs is merged.
 *     Equal-sized flushes merge together, and a big old run is only rewritten once the newer data piled
 *     on top of it is about as large: each byte is rewritten O(log(data / memtable)) times.</li>
 * <li>If that finds nothing but there are {@link #MAX_RUNS} runs or more, the cheapest {@link #TRIGGER}
 *     adjacent runs are merged anyway, bounding the number of runs a read may probe.</li>
 * </ol>
 * Only adjacent runs are merged, so the output keeps its place in the newest-to-oldest order. Runs
 * busy in another compaction, or newer than a memtable still being flushed, are not eligible.
 * Tombstones are dropped when the window includes the oldest run (nothing older can hide beneath them).
 */
final class CompactionPolicy {
    static final int TRIGGER = 4;
    static final int MAX_RUNS = 8;
    static final double RATIO = 1.0;

    private CompactionPolicy() {
    }

    /** The runs to merge (newest first, contiguous), or null. */
    static List<SortedRun> pick(List<SortedRun> runs, Set<SortedRun> busy, long oldestUnflushed) {
        int n = runs.size();
        if (n < TRIGGER) {
            return null;
        }
        for (int s = 0; s < n; s++) {
            if (!eligible(runs.get(s), busy, oldestUnflushed)) {
                continue;
            }
            List<SortedRun> window = new ArrayList<>();
            window.add(runs.get(s));
            double sum = runs.get(s).bytes;
            for (int j = s + 1; j < n; j++) {
                SortedRun next = runs.get(j);
                if (!eligible(next, busy, oldestUnflushed) || next.bytes > RATIO * sum) {
                    break;
                }
                window.add(next);
                sum += next.bytes;
            }
            if (window.size() >= 2) {
                return window;
            }
        }
        if (n >= MAX_RUNS) {
            List<SortedRun> best = null;
            long bestBytes = Long.MAX_VALUE;
            for (int s = 0; s + TRIGGER <= n; s++) {
                long bytes = 0;
                boolean ok = true;
                for (int j = s; j < s + TRIGGER; j++) {
                    ok &= eligible(runs.get(j), busy, oldestUnflushed);
                    bytes += runs.get(j).bytes;
                }
                if (ok && bytes < bestBytes) {
                    bestBytes = bytes;
                    best = runs.subList(s, s + TRIGGER);
                }
            }
            return best == null ? null : new ArrayList<>(best);
        }
        return null;
    }

    private static boolean eligible(SortedRun run, Set<SortedRun> busy, long oldestUnflushed) {
        return !busy.contains(run) && run.maxSeq < oldestUnflushed;
    }
}
