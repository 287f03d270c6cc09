package perflab.storage.lsm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs {@link CompactionPolicy}'s choices on {@code compaction-threads} background threads (0 disables
 * compaction). Concurrent compactions work on disjoint windows of runs.
 */
final class Compactor {
    private final LsmStorage db;
    private final int threads;
    private final ExecutorService pool;
    /** Runs being merged; guarded by db.stateLock. */
    private final Set<SortedRun> busy = Collections.newSetFromMap(new IdentityHashMap<>());
    private int running; // guarded by db.stateLock
    private volatile boolean stopping;
    private volatile boolean disabled;

    Compactor(LsmStorage db, int threads) {
        this.db = db;
        this.threads = threads;
        AtomicInteger ids = new AtomicInteger();
        int nice = db.options.backgroundNice;
        this.pool = threads == 0 ? null
                : Executors.newFixedThreadPool(threads, r -> LsmStorage.daemon(() -> {
                    BackgroundPriority.lowerCurrentThread(nice);
                    r.run();
                }, "lsm-compact-" + ids.incrementAndGet()));
    }

    void maybeSchedule() {
        if (pool == null || stopping || disabled) {
            return;
        }
        synchronized (db.stateLock) {
            while (running < threads && !stopping) {
                LsmState s = db.state();
                if (s.active == null) {
                    return; // still opening
                }
                List<SortedRun> window = CompactionPolicy.pick(s.version.runs, busy, s.oldestUnflushed());
                if (window == null) {
                    return;
                }
                List<SortedRun> runs = s.version.runs;
                boolean includesOldest = runs.get(runs.size() - 1) == window.get(window.size() - 1);
                busy.addAll(window);
                running++;
                pool.execute(() -> compact(window, includesOldest));
            }
        }
    }

    private void compact(List<SortedRun> window, boolean purgeTombstones) {
        LsmMetrics metrics = db.metrics;
        metrics.compactionActive.incrementAndGet();
        long start = System.nanoTime();
        boolean installed = false;
        try {
            long entries = 0;
            long bytes = 0;
            long tombstonesIn = 0;
            List<Cursor> sources = new ArrayList<>();
            for (SortedRun run : window) {
                for (SsTable t : run.tables) {
                    entries += t.entries;
                    bytes += t.keyValueBytes;
                    tombstonesIn += t.tombstones;
                }
                sources.add(new RunCursor(run, null));
            }
            RunWriter writer = new RunWriter(db.dir, db::newFileNumber, db.options.tableSize, db.options.blockSize,
                    db.options.bloomBitsPerKey);
            List<SsTable> tables;
            try (MergingCursor merged = new MergingCursor(sources, null, purgeTombstones)) {
                tables = writer.write(merged, entries, bytes, () -> stopping);
            }
            SortedRun output = tables.isEmpty() ? null
                    : new SortedRun(window.get(window.size() - 1).minSeq, window.get(0).maxSeq, tables);
            db.installCompaction(window, output);
            installed = true;
            long tombstonesOut = 0;
            for (SsTable t : tables) {
                tombstonesOut += t.tombstones;
            }
            if (purgeTombstones) {
                metrics.tombstonesPurged.add(tombstonesIn - tombstonesOut);
            }
            long duration = System.nanoTime() - start;
            metrics.compactions.increment();
            metrics.compactionBytes.add(output == null ? 0 : output.bytes);
            metrics.compactionNanos.add(duration);
            db.events.compacted(start, duration, window, output);
            // the inputs may still be in use by reads that started before the swap
            db.quiescence.await();
            for (SortedRun run : window) {
                for (SsTable t : run.tables) {
                    t.markObsolete();
                    t.release();
                }
            }
        } catch (CancellationException e) {
            // closing: the inputs stay as they are
        } catch (Throwable e) {
            disabled = true;
            System.err.println("lsm: compaction of " + window.size() + " runs failed in " + db.dir + ": " + e
                    + (installed ? "" : "; its inputs are untouched")
                    + "; compaction is disabled until restart");
        } finally {
            metrics.compactionActive.decrementAndGet();
            synchronized (db.stateLock) {
                busy.removeAll(window);
                running--;
                db.stateLock.notifyAll();
            }
        }
        maybeSchedule();
    }

    /** Blocks until no compaction runs and the policy has nothing more to do. */
    void awaitIdle() throws InterruptedException {
        while (true) {
            maybeSchedule();
            synchronized (db.stateLock) {
                if (running == 0) {
                    return;
                }
                while (running > 0) {
                    db.stateLock.wait(100);
                }
            }
        }
    }

    void shutdown() {
        stopping = true;
        if (pool == null) {
            return;
        }
        pool.shutdown();
        try {
            if (!pool.awaitTermination(60, TimeUnit.SECONDS)) {
                System.err.println("lsm: compaction threads still busy after 60 s in " + db.dir);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
