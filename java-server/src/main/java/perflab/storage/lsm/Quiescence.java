package perflab.storage.lsm;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Lets background threads wait until every request that might still see an old memtable or table has
 * finished, without a lock on the request path. Requests increment a counter in a cache-line-padded cell
 * picked by thread, and decrement it when done. After publishing a new state, {@link #await} waits until
 * each cell has been seen at zero once: every request that started before the publication is then over.
 */
final class Quiescence {
    private static final int STRIDE = 16; // 16 longs = 128 bytes between cells: no false sharing
    private final AtomicLongArray cells;
    private final int mask;

    Quiescence(int cpus) {
        int n = Integer.highestOneBit(Math.max(8, cpus * 4) - 1) << 1;
        this.cells = new AtomicLongArray(n * STRIDE);
        this.mask = n - 1;
    }

    @SuppressWarnings("deprecation") // Thread.getId: threadId() is JDK 19+, the jar targets 17
    int enter() {
        long id = Thread.currentThread().getId();
        int slot = ((int) ((id * 0x9E3779B97F4A7C15L) >>> 40) & mask) * STRIDE;
        cells.getAndIncrement(slot);
        return slot;
    }

    void exit(int slot) {
        cells.getAndDecrement(slot);
    }

    void await() {
        for (int i = 0; i <= mask; i++) {
            int slot = i * STRIDE;
            int spins = 0;
            while (cells.get(slot) != 0) {
                if (++spins < 100) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(50_000);
                }
            }
        }
    }
}
