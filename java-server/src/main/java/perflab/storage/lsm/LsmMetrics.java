package perflab.storage.lsm;

import perflab.util.StripedCounters;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/** The engine's counters, updated from request and background threads without locks. */
final class LsmMetrics {
    final LongAdder flushes = new LongAdder();
    final LongAdder flushBytes = new LongAdder();
    final LongAdder flushNanos = new LongAdder();
    final AtomicInteger flushActive = new AtomicInteger();
    final LongAdder compactions = new LongAdder();
    final LongAdder compactionBytes = new LongAdder();
    final LongAdder compactionNanos = new LongAdder();
    final AtomicInteger compactionActive = new AtomicInteger();
    /** Counters bumped on every request: striped per thread (see StripedCounters). */
    final StripedCounters perRequest = new StripedCounters(2);
    static final int BLOOM_NEGATIVES = 0;
    static final int WAL_BYTES = 1;
    final LongAdder walSyncs = new LongAdder();
    final LongAdder writeStalls = new LongAdder();
    final LongAdder writeStallNanos = new LongAdder();
    final LongAdder tombstonesPurged = new LongAdder();
}
