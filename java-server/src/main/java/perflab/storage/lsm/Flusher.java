package perflab.storage.lsm;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** Turns immutable memtables into sorted runs on {@code flush-threads} background threads. */
final class Flusher {
    private final LsmStorage db;
    private final ExecutorService pool;

    Flusher(LsmStorage db, int threads) {
        this.db = db;
        AtomicInteger ids = new AtomicInteger();
        int nice = db.options.backgroundNice;
        this.pool = Executors.newFixedThreadPool(threads, r -> LsmStorage.daemon(() -> {
            BackgroundPriority.lowerCurrentThread(nice);
            r.run();
        }, "lsm-flush-" + ids.incrementAndGet()));
    }

    void submit(Memtable memtable) {
        pool.execute(() -> {
            try {
                flush(memtable, true);
            } catch (Throwable e) {
                db.backgroundFailure("flush of memtable " + memtable.id, e);
            }
        });
    }

    /**
     * Writes the memtable as a run, publishes it, then deletes its log.
     *
     * @param awaitWriters wait until no writer can still be appending to it (false for replayed logs)
     */
    void flush(Memtable memtable, boolean awaitWriters) throws IOException {
        if (awaitWriters) {
            db.quiescence.await();
        }
        LsmMetrics metrics = db.metrics;
        metrics.flushActive.incrementAndGet();
        long start = System.nanoTime();
        try {
            SortedRun run = null;
            long bytes = 0;
            if (!memtable.isEmpty()) {
                RunWriter writer = new RunWriter(db.dir, db::newFileNumber, db.options.tableSize,
                        db.options.blockSize, db.options.bloomBitsPerKey);
                List<SsTable> tables;
                try (MemtableCursor cursor = new MemtableCursor(memtable, null)) {
                    tables = writer.write(cursor, memtable.entries(), memtable.bytes(), () -> false);
                }
                run = new SortedRun(memtable.id, memtable.id, tables);
                bytes = run.bytes;
            }
            db.installFlush(memtable, run);
            // readers that started before the swap may still be in the memtable (and its log)
            db.quiescence.await();
            memtable.markFlushed();
            memtable.release();
            long duration = System.nanoTime() - start;
            metrics.flushes.increment();
            metrics.flushBytes.add(bytes);
            metrics.flushNanos.add(duration);
            db.events.flushed(start, duration, run);
        } finally {
            metrics.flushActive.decrementAndGet();
        }
        db.scheduleCompaction();
    }

    void shutdown() {
        pool.shutdown();
        try {
            if (!pool.awaitTermination(60, TimeUnit.SECONDS)) {
                System.err.println("lsm: flush threads still busy after 60 s in " + db.dir);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
