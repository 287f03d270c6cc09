package perflab.util;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A fixed set of counters incremented from many threads. Each thread hashes to its own stripe (a
 * cache-line-aligned block holding every counter), so increments from different threads do not share
 * cache lines: LongAdders allocated next to each other did, and cost ~7% of CPU on the request path.
 */
public final class StripedCounters {
    private static final int LINE_LONGS = 16; // 128 bytes: two cache lines, also defeats adjacent-line prefetch
    private final AtomicLongArray cells;
    private final int counters;
    private final int stride;
    private final int mask;

    public StripedCounters(int counters) {
        this.counters = counters;
        this.stride = ((counters + LINE_LONGS - 1) / LINE_LONGS) * LINE_LONGS;
        int stripes = Integer.highestOneBit(Math.max(8, Runtime.getRuntime().availableProcessors() * 4) - 1) << 1;
        this.mask = stripes - 1;
        this.cells = new AtomicLongArray(LINE_LONGS + stripes * stride + LINE_LONGS);
    }

    /** The stripe base offset of the calling thread (cheap enough to call per increment). */
    @SuppressWarnings("deprecation") // Thread.getId: threadId() is JDK 19+, the jar targets 17
    private int base() {
        long id = Thread.currentThread().getId();
        return LINE_LONGS + ((int) ((id * 0x9E3779B97F4A7C15L) >>> 40) & mask) * stride;
    }

    public void increment(int counter) {
        cells.getAndIncrement(base() + counter);
    }

    public void add(int counter, long delta) {
        cells.getAndAdd(base() + counter, delta);
    }

    public long sum(int counter) {
        long s = 0;
        for (int i = 0; i <= mask; i++) {
            s += cells.get(LINE_LONGS + i * stride + counter);
        }
        return s;
    }

    public int size() {
        return counters;
    }
}
