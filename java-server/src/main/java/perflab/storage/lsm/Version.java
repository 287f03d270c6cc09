package perflab.storage.lsm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** The set of sorted runs, newest first. Immutable; replaced as a whole by flushes and compactions. */
final class Version {
    static final Version EMPTY = new Version(Collections.emptyList());

    final List<SortedRun> runs;

    Version(List<SortedRun> runs) {
        this.runs = Collections.unmodifiableList(new ArrayList<>(runs));
    }

    /** Adds a run at the position its sequence dictates. */
    Version with(SortedRun run) {
        List<SortedRun> next = new ArrayList<>(runs);
        int i = 0;
        while (i < next.size() && next.get(i).maxSeq > run.maxSeq) {
            i++;
        }
        next.add(i, run);
        return new Version(next);
    }

    /** Replaces the contiguous runs {@code window} by {@code output} (null: they merged into nothing). */
    Version replace(List<SortedRun> window, SortedRun output) {
        List<SortedRun> next = new ArrayList<>(runs);
        int at = next.indexOf(window.get(0));
        for (SortedRun r : window) {
            if (!next.remove(r)) {
                throw new IllegalStateException("compaction input run vanished");
            }
        }
        if (output != null) {
            next.add(at, output);
        }
        return new Version(next);
    }

    boolean covers(long seq) {
        for (SortedRun r : runs) {
            if (r.covers(seq)) {
                return true;
            }
        }
        return false;
    }

    int tableCount() {
        int n = 0;
        for (SortedRun r : runs) {
            n += r.tables.size();
        }
        return n;
    }

    long bytes() {
        long b = 0;
        for (SortedRun r : runs) {
            b += r.bytes;
        }
        return b;
    }
}
