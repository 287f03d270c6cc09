package perflab.storage.lsm;

import perflab.util.Bytes;

import java.util.Collections;
import java.util.List;

/**
 * Tables with disjoint key ranges, sorted by key, that together hold one flush or one compaction output.
 * {@code minSeq..maxSeq} are the memtable ids (or bulk-load sequence) whose data it holds; runs never
 * overlap in sequence, and a higher sequence means newer data.
 */
final class SortedRun {
    final long minSeq;
    final long maxSeq;
    final List<SsTable> tables;
    final long bytes;
    final long entries;

    SortedRun(long minSeq, long maxSeq, List<SsTable> tables) {
        this.minSeq = minSeq;
        this.maxSeq = maxSeq;
        this.tables = Collections.unmodifiableList(tables);
        long b = 0;
        long e = 0;
        for (SsTable t : tables) {
            b += t.fileSize;
            e += t.entries;
        }
        this.bytes = b;
        this.entries = e;
    }

    /** The only table that can hold the key, or null. */
    SsTable find(byte[] key) {
        List<SsTable> t = tables;
        int n = t.size();
        if (n == 1) {
            return t.get(0);
        }
        int lo = 0;
        int hi = n - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (Bytes.compare(t.get(mid).firstKey, key) <= 0) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found < 0 ? null : t.get(found);
    }

    /** Index of the first table whose last key is >= key (tables.size() if none). */
    int firstTableFrom(byte[] key) {
        if (key == null) {
            return 0;
        }
        int i = 0;
        while (i < tables.size() && Bytes.compare(tables.get(i).lastKey, key) < 0) {
            i++;
        }
        return i;
    }

    boolean covers(long seq) {
        return seq >= minSeq && seq <= maxSeq;
    }
}
