package perflab.storage.lsm;

import java.io.IOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Prepares the next memtable (log file created, mapped, header and directory entry synced) in the
 * background, so the writer that switches memtables does not pay file creation and two fsyncs on the
 * request path. Callers hold the engine's state lock.
 */
final class SpareLog {
    /** Creates a memtable whose log can hold a record of at least the given size. */
    interface Factory {
        Memtable create(int recordSize) throws IOException;
    }

    private final Factory factory;
    private final ExecutorService maker;
    private Future<Memtable> spare;

    SpareLog(Factory factory) {
        this.factory = factory;
        this.maker = Executors.newSingleThreadExecutor(r -> LsmStorage.daemon(r, "lsm-log-maker"));
    }

    /** The prepared memtable if it fits, else a new one made now; then starts preparing the next. */
    Memtable take(int recordSize) throws IOException {
        Memtable m = null;
        if (spare != null) {
            try {
                m = spare.get();
            } catch (ExecutionException e) {
                System.err.println("lsm: preparing a log failed (" + e.getCause() + "); making it inline");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for a log file");
            }
            spare = null;
            if (m != null && !m.wal.fitsEmpty(recordSize)) {
                discard(m);
                m = null;
            }
        }
        if (m == null) {
            m = factory.create(recordSize);
        }
        spare = maker.submit(() -> factory.create(0));
        return m;
    }

    /** Drops the prepared memtable (its id would now sort too early, e.g. after a bulk load). */
    void discard() {
        if (spare != null) {
            try {
                discard(spare.get());
            } catch (ExecutionException | InterruptedException ignored) {
                // nothing was created, or we were interrupted: the file, if any, is removed at next open
            }
            spare = null;
        }
    }

    private static void discard(Memtable m) {
        m.markFlushed(); // empty: nothing to keep
        m.release();
    }

    void shutdown() {
        discard();
        maker.shutdown();
        try {
            maker.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
