package perflab.storage.lsm;

import perflab.events.EventSink;
import perflab.storage.BulkLoader;
import perflab.storage.DirectoryLock;
import perflab.storage.Entry;
import perflab.storage.RangeIterator;
import perflab.storage.Storage;
import perflab.storage.StorageException;
import perflab.storage.StorageOptions;
import perflab.storage.StorageStats;
import perflab.storage.WalPolicy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Our LSM engine. Writes go to the write-ahead log and the active memtable; a full memtable becomes
 * immutable and is flushed by background threads into a sorted run of SSTables, while writes continue
 * into a new one (and stall once {@code max-immutable} memtables wait). Reads check the active memtable,
 * the immutable ones newest first, then the runs newest first. Background compaction merges runs
 * ({@link CompactionPolicy}). Reads take no lock; a write's only critical section is the log append.
 * State changes publish a new {@link LsmState} and use {@link Quiescence} to know when old objects
 * are unreachable.
 */
public final class LsmStorage implements Storage, BulkLoader {
    final Path dir;
    final StorageOptions options;
    final LsmMetrics metrics = new LsmMetrics();
    final LsmEvents events;
    final Quiescence quiescence = new Quiescence(Runtime.getRuntime().availableProcessors());
    /** Guards state transitions (never taken by reads, by writes only to switch memtables); held briefly. */
    final Object stateLock = new Object();
    /** Serialises manifest rewrites, which fsync and so stay outside stateLock. */
    private final Object manifestLock = new Object();
    private final DirectoryLock lock;
    private final AtomicLong nextFile;
    private final Flusher flusher;
    private final Compactor compactor;
    private final WalSyncer walSyncer;
    /** Guarded by stateLock. */
    private final SpareLog spareLog = new SpareLog(this::newMemtable);
    private volatile LsmState state;
    private volatile boolean closed;
    private volatile Throwable backgroundError;
    /** The current write stall episode (guarded by stateLock): writers waiting now, in total, since when. */
    private int stallWaiting;
    private int stallWriters;
    private long stallEpisodeStart;

    private LsmStorage(Path dir, StorageOptions options, EventSink events, DirectoryLock lock, long nextFile,
                       Version version) {
        this.dir = dir;
        this.options = options;
        this.events = new LsmEvents(events, options.slowSyncThresholdMs, options.wal.label());
        this.lock = lock;
        this.nextFile = new AtomicLong(nextFile);
        this.state = new LsmState(null, new ArrayList<>(), version);
        this.flusher = new Flusher(this, options.flushThreads);
        this.compactor = new Compactor(this, options.compactionThreads);
        walSyncer = options.wal == WalPolicy.BATCH
                ? new WalSyncer(() -> state, options.walBatchDelayMs, "lsm-wal-sync") : null;
    }

    /** Opens (creating if needed) and recovers the database in {@code dir}; see {@link Recovery}. */
    public static LsmStorage open(Path dir, StorageOptions options) throws StorageException {
        return open(dir, options, EventSink.NONE);
    }

    /** @param events where flush, compaction, write_stall and wal_sync events go */
    public static LsmStorage open(Path dir, StorageOptions options, EventSink events) throws StorageException {
        DirectoryLock lock = DirectoryLock.acquire(dir);
        LsmStorage db = null;
        try {
            Recovery.Loaded loaded = Recovery.load(dir);
            db = new LsmStorage(dir, options, events, lock, loaded.nextFile, loaded.version);
            Recovery.replayLogs(db, loaded.logs);
            synchronized (db.stateLock) {
                db.state = new LsmState(db.spareLog.take(0), new ArrayList<>(), db.state.version);
            }
            db.compactor.maybeSchedule();
            return db;
        } catch (IOException | RuntimeException e) {
            if (db != null) {
                db.abandon();
            } else {
                lock.close();
            }
            if (e instanceof StorageException) {
                throw (StorageException) e;
            }
            throw new StorageException("cannot open " + dir + ": " + e, e);
        }
    }

    static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    long newFileNumber() {
        return nextFile.getAndIncrement();
    }

    LsmState state() {
        return state;
    }

    Flusher flusher() {
        return flusher;
    }

    // ---------------------------------------------------------------- reads

    @Override
    public byte[] get(byte[] key) throws IOException {
        int slot = quiescence.enter();
        try {
            LsmState s = state;
            Memtable m = s.active;
            int node = m.find(key);
            if (node != 0) {
                return m.value(node);
            }
            List<Memtable> immutables = s.immutables;
            for (int i = 0; i < immutables.size(); i++) {
                m = immutables.get(i);
                node = m.find(key);
                if (node != 0) {
                    return m.value(node);
                }
            }
            List<SortedRun> runs = s.version.runs;
            if (runs.isEmpty()) {
                return null;
            }
            long hash = KeyHash.hash(key);
            for (SortedRun run : runs) {
                SsTable table = run.find(key);
                if (table == null) {
                    continue;
                }
                int maybe = table.mightContain(key, hash);
                if (maybe != SsTable.MAYBE) {
                    if (maybe == SsTable.BLOOM_NEGATIVE) {
                        metrics.perRequest.increment(LsmMetrics.BLOOM_NEGATIVES);
                    }
                    continue;
                }
                byte[] v = table.get(key);
                if (v != null) {
                    return v == SsTable.DELETED ? null : v;
                }
            }
            return null;
        } finally {
            quiescence.exit(slot);
        }
    }

    @Override
    public RangeIterator range(byte[] from, byte[] to) throws IOException {
        List<Cursor> sources = new ArrayList<>();
        MergingCursor merged;
        int slot = quiescence.enter();
        try {
            LsmState s = state;
            sources.add(new MemtableCursor(s.active, from));
            for (Memtable m : s.immutables) {
                sources.add(new MemtableCursor(m, from));
            }
            for (SortedRun run : s.version.runs) {
                sources.add(new RunCursor(run, from));
            }
            merged = new MergingCursor(sources, to, true);
        } catch (IOException | RuntimeException e) {
            for (Cursor c : sources) {
                c.close();
            }
            throw e;
        } finally {
            quiescence.exit(slot);
        }
        return new CursorRangeIterator(merged);
    }

    // ---------------------------------------------------------------- writes

    @Override
    public void put(byte[] key, byte[] value) throws IOException {
        if (value == null) {
            throw new IllegalArgumentException("null value (use delete)");
        }
        write(key, value);
    }

    @Override
    public void delete(byte[] key) throws IOException {
        write(key, null);
    }

    private void write(byte[] key, byte[] value) throws IOException {
        if (key == null) {
            throw new IllegalArgumentException("null key");
        }
        while (true) {
            Memtable m;
            int pos;
            int slot = quiescence.enter();
            try {
                if (closed) {
                    throw new StorageException("storage in " + dir + " is closed");
                }
                checkBackgroundError();
                m = state.active;
                pos = m.wal.append(key, value);
                if (pos >= 0) {
                    m.add(key, value, pos);
                }
            } finally {
                quiescence.exit(slot);
            }
            if (pos < 0) {
                switchMemtable(m, WalWriter.recordSize(key, value));
                continue;
            }
            if (m.bytes() >= options.memtableSize) {
                switchMemtable(m, 0);
            }
            if (options.wal == WalPolicy.ALWAYS) {
                m.wal.sync(WalWriter.recordEnd(pos, key, value));
            } else if (walSyncer != null) {
                walSyncer.written();
            }
            return;
        }
    }

    private void checkBackgroundError() throws StorageException {
        Throwable e = backgroundError;
        if (e != null) {
            throw new StorageException("writes are disabled after a background failure in " + dir + ": " + e, e);
        }
    }

    /**
     * Makes {@code full} immutable and hands it to the flusher, unless another writer already did.
     * Blocks (a write stall) while max-immutable memtables are waiting for their flush.
     */
    private void switchMemtable(Memtable full, int recordSize) throws IOException {
        synchronized (stateLock) {
            long stallStart = 0;
            try {
                while (state.active == full && !closed && state.immutables.size() >= options.maxImmutable) {
                    checkBackgroundError();
                    if (stallStart == 0) {
                        stallStart = System.nanoTime();
                        metrics.writeStalls.increment();
                        stallBegins(stallStart);
                    }
                    try {
                        stateLock.wait(100);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new StorageException("interrupted while waiting for a flush in " + dir);
                    }
                }
            } finally {
                if (stallStart != 0) {
                    long end = System.nanoTime();
                    metrics.writeStallNanos.add(end - stallStart);
                    stallEnds(end);
                }
            }
            if (state.active != full || closed) {
                return;
            }
            rotateLocked(recordSize);
        }
    }

    /** Caller holds stateLock. A writer starts waiting; the first one opens a stall episode. */
    private void stallBegins(long now) {
        if (stallWaiting++ == 0) {
            stallEpisodeStart = now;
            stallWriters = 0;
        }
        stallWriters++;
    }

    /** Caller holds stateLock. A writer stops waiting; the last one closes the episode (one event). */
    private void stallEnds(long now) {
        if (--stallWaiting == 0) {
            events.stalled(stallEpisodeStart, now - stallEpisodeStart, stallWriters);
        }
    }

    /** Caller holds stateLock. */
    private void rotateLocked(int recordSize) throws IOException {
        Memtable full = state.active;
        state = state.withActive(spareLog.take(recordSize));
        flusher.submit(full);
    }

    Memtable newMemtable(int recordSize) throws IOException {
        long id = newFileNumber();
        // the switch happens at memtable-size log bytes; the slack absorbs writers racing past it
        long capacity = Math.min(Integer.MAX_VALUE - 8, Math.max(1L << 20, options.memtableSize * 3 / 2 + (1 << 16)));
        capacity = Math.max(capacity, WalFormat.HEADER + (long) recordSize);
        if (capacity > Integer.MAX_VALUE - 8) {
            throw new StorageException("a record of " + recordSize + " bytes does not fit in a log file");
        }
        Path path = FileNames.wal(dir, id);
        WalWriter wal = WalWriter.create(path, id, (int) capacity, metrics, events);
        Manifest.syncDirectory(dir); // the log's directory entry must survive a power loss too
        return Memtable.active(id, wal);
    }

    // ---------------------------------------------------------------- background results

    /**
     * Publishes a flushed memtable's run, then makes it durable in the manifest (before the caller may
     * delete the memtable's log). Called by the flusher.
     */
    void installFlush(Memtable memtable, SortedRun run) throws IOException {
        synchronized (stateLock) {
            Version next = run == null ? state.version : state.version.with(run);
            state = state.flushed(memtable, next);
            stateLock.notifyAll();
        }
        writeManifest();
    }

    /**
     * Publishes a compaction's output in place of its inputs and records it in the manifest (before the
     * caller may delete the inputs). Called by the compactor.
     */
    void installCompaction(List<SortedRun> window, SortedRun output) throws IOException {
        synchronized (stateLock) {
            state = state.withVersion(state.version.replace(window, output));
        }
        writeManifest();
    }

    /**
     * Rewrites the manifest from the newest published version. The fsyncs happen outside stateLock, so a
     * background thread (running at low priority) never holds up a writer that needs to switch memtables;
     * writers of the manifest queue here, and each writes the newest version, so it only moves forward.
     */
    private void writeManifest() throws IOException {
        synchronized (manifestLock) {
            Manifest.of(nextFile.get(), state.version).write(dir);
        }
    }

    /** Publishes a run written by {@link #ingestSorted}. */
    private void installIngested(SortedRun run) throws IOException {
        Memtable old;
        synchronized (stateLock) {
            if (!state.active.isEmpty() || !state.immutables.isEmpty()) {
                throw new IllegalStateException("writes arrived during a bulk load into " + dir);
            }
            Version next = state.version.with(run);
            old = state.active;
            // the fresh memtable's id must exceed the run's sequence so later writes read as newer:
            // a log prepared before the bulk load has a smaller id
            spareLog.discard();
            state = new LsmState(spareLog.take(0), new ArrayList<>(), next);
        }
        writeManifest();
        quiescence.await();
        old.markFlushed();
        old.release();
    }

    void backgroundFailure(String what, Throwable e) {
        if (backgroundError == null) {
            backgroundError = e;
        }
        System.err.println("lsm: " + what + " failed in " + dir + ": " + e);
        synchronized (stateLock) {
            stateLock.notifyAll();
        }
    }

    void scheduleCompaction() {
        compactor.maybeSchedule();
    }

    // ---------------------------------------------------------------- bulk load

    /**
     * Writes entries given in strictly increasing key order straight into a new newest sorted run
     * (no log, no memtable): the fast path for {@code Prefill}. Must not run concurrently with writes.
     *
     * @return the number of tables written
     */
    @Override
    public int ingestSorted(Iterator<Entry> sorted, long expectedKeys, long expectedBytes) throws IOException {
        flush();
        Cursor source = new IteratorCursor(sorted);
        RunWriter writer = new RunWriter(dir, this::newFileNumber, options.tableSize, options.blockSize,
                options.bloomBitsPerKey);
        List<SsTable> tables = writer.write(source, expectedKeys, expectedBytes, () -> closed);
        if (tables.isEmpty()) {
            return 0;
        }
        long seq = newFileNumber();
        installIngested(new SortedRun(seq, seq, tables));
        scheduleCompaction();
        return tables.size();
    }

    // ---------------------------------------------------------------- flush, stats, close

    @Override
    public void flush() throws IOException {
        Memtable target;
        synchronized (stateLock) {
            checkBackgroundError();
            LsmState s = state;
            if (!s.active.isEmpty()) {
                target = s.active;
                rotateLocked(0);
            } else if (!s.immutables.isEmpty()) {
                target = s.immutables.get(0);
            } else {
                return;
            }
            while (state.immutables.contains(target)) {
                checkBackgroundError();
                try {
                    stateLock.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new StorageException("interrupted while flushing " + dir);
                }
            }
        }
    }

    /** Waits until no compaction is running or pending (tests, Prefill, Inspect). */
    public void awaitCompactions() throws InterruptedException {
        compactor.awaitIdle();
    }

    @Override
    public Map<String, Object> stats() {
        Map<String, Object> s = StorageStats.template("lsm");
        LsmState st = state;
        long immutableBytes = 0;
        for (Memtable m : st.immutables) {
            immutableBytes += m.bytes();
        }
        s.put("memtable_bytes", st.active == null ? 0L : st.active.bytes());
        s.put("immutable_memtables", (long) st.immutables.size());
        s.put("sstables", (long) st.version.tableCount());
        s.put("sstable_bytes", st.version.bytes());
        s.put("flushes", metrics.flushes.sum());
        s.put("flush_bytes", metrics.flushBytes.sum());
        s.put("flush_ms", metrics.flushNanos.sum() / 1_000_000);
        s.put("flush_active", (long) metrics.flushActive.get());
        s.put("compactions", metrics.compactions.sum());
        s.put("compaction_bytes", metrics.compactionBytes.sum());
        s.put("compaction_ms", metrics.compactionNanos.sum() / 1_000_000);
        s.put("compaction_active", (long) metrics.compactionActive.get());
        s.put("bloom_negatives", metrics.perRequest.sum(LsmMetrics.BLOOM_NEGATIVES));
        s.put("wal_syncs", metrics.walSyncs.sum());
        s.put("wal_bytes", metrics.perRequest.sum(LsmMetrics.WAL_BYTES));
        s.put("write_stalls", metrics.writeStalls.sum());
        s.put("write_stall_ms", metrics.writeStallNanos.sum() / 1_000_000);
        s.put("immutable_bytes", immutableBytes);
        s.put("sorted_runs", (long) st.version.runs.size());
        s.put("tombstones_purged", metrics.tombstonesPurged.sum());
        return s;
    }

    /** Flushes every memtable, stops background work, unmaps files and releases the directory lock. */
    @Override
    public void close() throws IOException {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        quiescence.await(); // writers that got past the closed check have finished their append
        IOException failure = null;
        try {
            if (backgroundError == null) {
                flushForClose();
            }
        } catch (IOException e) {
            failure = e;
        }
        stopBackground();
        LsmState s = state;
        quiescence.await();
        if (s.active != null && s.active.isEmpty() && s.immutables.isEmpty() && failure == null
                && backgroundError == null) {
            s.active.markFlushed(); // nothing in it: its log can go
        }
        releaseAll(s);
        lock.close();
        if (failure != null) {
            throw failure;
        }
        if (backgroundError != null) {
            throw new StorageException("closed " + dir + " after a background failure (unflushed data stays in"
                    + " the write-ahead logs and is replayed on the next start): " + backgroundError);
        }
    }

    private void flushForClose() throws IOException {
        synchronized (stateLock) {
            if (state.active != null && !state.active.isEmpty()) {
                rotateLocked(0);
            }
            while (!state.immutables.isEmpty() && backgroundError == null) {
                try {
                    stateLock.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new StorageException("interrupted while flushing " + dir + " on close");
                }
            }
        }
    }

    /** Stops the flush, compaction, WAL sync and log preallocation threads. */
    private void stopBackground() {
        compactor.shutdown();
        flusher.shutdown();
        if (walSyncer != null) {
            walSyncer.stop();
        }
        synchronized (stateLock) {
            spareLog.shutdown();
        }
    }

    /** Drops the state's memtable and table references. */
    private static void releaseAll(LsmState s) {
        releaseMemtables(s);
        for (SortedRun run : s.version.runs) {
            for (SsTable t : run.tables) {
                t.release();
            }
        }
    }

    /** Drops the state's memtable references; logs of unflushed memtables stay on disk for replay. */
    private static void releaseMemtables(LsmState s) {
        if (s.active != null) {
            s.active.release();
        }
        for (Memtable m : s.immutables) {
            m.release();
        }
    }

    /** Releases everything after a failed open. */
    private void abandon() {
        closed = true;
        stopBackground();
        LsmState s = state;
        releaseAll(s);
        lock.close();
    }

    /** Test hook: simulates losing the process after an acknowledged write, without flushing. */
    void crashForTest() {
        closed = true;
        stopBackground();
        releaseMemtables(state);
        lock.close();
    }
}
