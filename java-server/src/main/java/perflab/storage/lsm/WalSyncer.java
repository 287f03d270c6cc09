package perflab.storage.lsm;

import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The {@code batch} policy's background fsync: at most every {@code delay}, it syncs whatever the logs
 * received since the last sync. When nothing is written it parks until a writer wakes it, instead of
 * ticking every few milliseconds on an idle server (which cost ~1.5% of a core).
 */
final class WalSyncer implements Runnable {
    private final Supplier<LsmState> state;
    private final long delayNanos;
    private final Thread thread;
    private volatile boolean idle;
    private volatile boolean stopped;

    WalSyncer(Supplier<LsmState> state, long delayMillis, String name) {
        this.state = state;
        this.delayNanos = delayMillis * 1_000_000L;
        this.thread = new Thread(this, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Called by writers after an append: wakes the syncer if it went idle (one volatile read otherwise). */
    void written() {
        if (idle) {
            idle = false;
            LockSupport.unpark(thread);
        }
    }

    @Override
    public void run() {
        while (!stopped) {
            if (!syncAll()) {
                idle = true;
                if (!anyDirty()) { // re-check after publishing idle: a writer either sees it or we see its data
                    LockSupport.parkNanos(1_000_000_000L);
                }
                idle = false;
                continue;
            }
            LockSupport.parkNanos(delayNanos);
        }
    }

    private boolean syncAll() {
        LsmState s = state.get();
        boolean synced = false;
        if (s.active != null) {
            synced |= s.active.wal.syncIfDirty();
        }
        for (Memtable m : s.immutables) {
            if (m.wal != null) {
                synced |= m.wal.syncIfDirty();
            }
        }
        return synced;
    }

    private boolean anyDirty() {
        LsmState s = state.get();
        if (s.active != null && s.active.wal.dirty()) {
            return true;
        }
        for (Memtable m : s.immutables) {
            if (m.wal != null && m.wal.dirty()) {
                return true;
            }
        }
        return false;
    }

    void stop() {
        stopped = true;
        LockSupport.unpark(thread);
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
