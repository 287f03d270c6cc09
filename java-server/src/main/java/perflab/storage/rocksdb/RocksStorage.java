package perflab.storage.rocksdb;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.Env;
import org.rocksdb.EnvOptions;
import org.rocksdb.IngestExternalFileOptions;
import org.rocksdb.SstFileWriter;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.Priority;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Statistics;
import org.rocksdb.TickerType;
import org.rocksdb.WriteOptions;
import perflab.events.Event;
import perflab.events.EventSink;
import perflab.spec.EventList;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Collections;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * RocksDB (rocksdbjni) behind the same interface: the reference LSM. Options map onto RocksDB's
 * equivalents (see README); compression is off so both engines store the same bytes.
 */
public final class RocksStorage implements Storage, BulkLoader {
    static {
        RocksDB.loadLibrary();
    }

    private final Path dir;
    private final DirectoryLock lock;
    private final Options options;
    private final Statistics statistics;
    private final RocksEvents events;
    private final RocksDB db;
    private final WriteOptions writeOptions;
    private final ScheduledExecutorService walSyncer;
    private final long tableSize;
    private final EventSink eventSink;
    private final long slowSyncNanos;
    /** WAL bytes at the previous batch sync (syncer thread only), for a slow sync's byte count. */
    private long walBytesAtSync;
    private volatile boolean closed;
    /** Set by writers, cleared by the batch syncer: an idle database is not fsynced every few ms. */
    private volatile boolean unsynced;

    private RocksStorage(Path dir, DirectoryLock lock, StorageOptions opts, EventSink eventSink)
            throws StorageException {
        this.dir = dir;
        this.lock = lock;
        this.statistics = new Statistics();
        this.tableSize = opts.tableSize;
        this.eventSink = eventSink;
        this.slowSyncNanos = opts.slowSyncThresholdMs * 1_000_000L;
        this.events = new RocksEvents(eventSink);
        Env env = Env.getDefault();
        env.setBackgroundThreads(opts.flushThreads, Priority.HIGH);
        env.setBackgroundThreads(Math.max(1, opts.compactionThreads), Priority.LOW);
        if (opts.backgroundNice > 0) {
            // the counterpart of our engine's background-nice (RocksDB picks the nice value itself)
            env.lowerThreadPoolCPUPriority(Priority.HIGH);
            env.lowerThreadPoolCPUPriority(Priority.LOW);
        }
        BlockBasedTableConfig table = new BlockBasedTableConfig()
                .setBlockSize(opts.blockSize);
        if (opts.bloomBitsPerKey > 0) {
            table.setFilterPolicy(new BloomFilter(opts.bloomBitsPerKey));
        }
        this.options = new Options()
                .setCreateIfMissing(true)
                .setEnv(env)
                .setWriteBufferSize(opts.memtableSize)
                .setMaxWriteBufferNumber(opts.maxImmutable + 1)
                .setMaxBackgroundJobs(opts.flushThreads + Math.max(1, opts.compactionThreads))
                .setTargetFileSizeBase(opts.tableSize)
                .setCompressionType(CompressionType.NO_COMPRESSION)
                .setStatistics(statistics)
                .setListeners(Collections.singletonList(events));
        options.setTableFormatConfig(table);
        if (opts.compactionThreads == 0) {
            options.setDisableAutoCompactions(true);
        }
        this.writeOptions = new WriteOptions().setSync(opts.wal == WalPolicy.ALWAYS);
        try {
            this.db = RocksDB.open(options, dir.toString());
        } catch (RocksDBException e) {
            options.close();
            throw new StorageException("cannot open RocksDB in " + dir + ": " + e.getMessage(), e);
        }
        if (opts.wal == WalPolicy.BATCH) {
            walSyncer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "rocksdb-wal-sync");
                t.setDaemon(true);
                return t;
            });
            walSyncer.scheduleWithFixedDelay(this::syncWalQuietly, opts.walBatchDelayMs, opts.walBatchDelayMs,
                    TimeUnit.MILLISECONDS);
        } else {
            walSyncer = null;
        }
    }

    public static RocksStorage open(Path dir, StorageOptions opts) throws StorageException {
        return open(dir, opts, EventSink.NONE);
    }

    /** @param events where flush, compaction, write_stall and (batch) wal_sync events go */
    public static RocksStorage open(Path dir, StorageOptions opts, EventSink events) throws StorageException {
        DirectoryLock lock = DirectoryLock.acquire(dir);
        try {
            return new RocksStorage(dir, lock, opts, events);
        } catch (StorageException | RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    private void syncWalQuietly() {
        if (closed || !unsynced) {
            return;
        }
        unsynced = false;
        try {
            long start = System.nanoTime();
            db.syncWal();
            long duration = System.nanoTime() - start;
            if (eventSink.enabled()) {
                long walBytes = statistics.getTickerCount(TickerType.WAL_FILE_BYTES);
                if (duration >= slowSyncNanos) {
                    eventSink.emit(Event.of(EventList.WAL_SYNC, start, duration, walBytes - walBytesAtSync, null,
                            "batch"));
                }
                walBytesAtSync = walBytes;
            }
        } catch (RocksDBException e) {
            System.err.println("rocksdb: WAL sync failed in " + dir + ": " + e.getMessage());
        }
    }

    @Override
    public byte[] get(byte[] key) throws IOException {
        try {
            return db.get(key);
        } catch (RocksDBException e) {
            throw failure("get", e);
        }
    }

    @Override
    public void put(byte[] key, byte[] value) throws IOException {
        try {
            db.put(writeOptions, key, value);
            unsynced = true;
        } catch (RocksDBException e) {
            throw failure("put", e);
        }
    }

    @Override
    public void delete(byte[] key) throws IOException {
        try {
            db.delete(writeOptions, key);
            unsynced = true;
        } catch (RocksDBException e) {
            throw failure("delete", e);
        }
    }

    @Override
    public RangeIterator range(byte[] from, byte[] to) {
        ReadOptions ro = new ReadOptions().setFillCache(false);
        Slice upper = to == null ? null : new Slice(to);
        if (upper != null) {
            ro.setIterateUpperBound(upper);
        }
        RocksIterator it = db.newIterator(ro);
        if (from == null) {
            it.seekToFirst();
        } else {
            it.seek(from);
        }
        return new RangeIterator() {
            private boolean open = true;

            @Override
            public boolean hasNext() {
                return open && it.isValid();
            }

            @Override
            public Entry next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Entry e = new Entry(it.key(), it.value());
                it.next();
                return e;
            }

            @Override
            public void close() {
                if (open) {
                    open = false;
                    it.close();
                    ro.close();
                    if (upper != null) {
                        upper.close();
                    }
                }
            }
        };
    }

    /** Writes SST files with SstFileWriter (split at table-size) and ingests them as the newest data. */
    @Override
    public int ingestSorted(Iterator<Entry> sorted, long expectedKeys, long expectedBytes) throws IOException {
        Path staging = dir.resolve("ingest.tmp");
        List<String> files = new ArrayList<>();
        try (EnvOptions env = new EnvOptions()) {
            Files.createDirectories(staging);
            SstFileWriter writer = null;
            long written = 0;
            try {
                while (sorted.hasNext()) {
                    if (writer == null) {
                        String file = staging.resolve(String.format("bulk-%06d.sst", files.size())).toString();
                        writer = new SstFileWriter(env, options);
                        writer.open(file);
                        files.add(file);
                        written = 0;
                    }
                    Entry e = sorted.next();
                    writer.put(e.key(), e.value());
                    written += e.key().length + e.value().length;
                    if (written >= tableSize) {
                        writer.finish();
                        writer.close();
                        writer = null;
                    }
                }
                if (writer != null) {
                    writer.finish();
                    writer.close();
                    writer = null;
                }
                if (!files.isEmpty()) {
                    try (IngestExternalFileOptions ingest = new IngestExternalFileOptions().setMoveFiles(true)) {
                        db.ingestExternalFile(files, ingest);
                    }
                }
            } finally {
                if (writer != null) {
                    writer.close();
                }
            }
        } catch (RocksDBException e) {
            throw failure("bulk load", e);
        } finally {
            for (String f : files) {
                Files.deleteIfExists(Paths.get(f));
            }
            Files.deleteIfExists(staging);
        }
        return files.size();
    }

    @Override
    public void flush() throws IOException {
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
            db.flush(fo);
        } catch (RocksDBException e) {
            throw failure("flush", e);
        }
    }

    @Override
    public Map<String, Object> stats() {
        Map<String, Object> s = StorageStats.template("rocksdb");
        if (closed) {
            return s;
        }
        s.put("memtable_bytes", property("rocksdb.cur-size-active-mem-table"));
        s.put("immutable_memtables", property("rocksdb.num-immutable-mem-table"));
        long files = 0;
        for (int level = 0; level < options.numLevels(); level++) {
            files += stringProperty("rocksdb.num-files-at-level" + level);
        }
        s.put("sstables", files);
        s.put("sstable_bytes", property("rocksdb.total-sst-files-size"));
        s.put("flushes", events.flushes.sum());
        s.put("flush_bytes", statistics.getTickerCount(TickerType.FLUSH_WRITE_BYTES));
        s.put("flush_ms", events.flushNanos.sum() / 1_000_000);
        s.put("flush_active", property("rocksdb.num-running-flushes"));
        s.put("compactions", events.compactions.sum());
        s.put("compaction_bytes", statistics.getTickerCount(TickerType.COMPACT_WRITE_BYTES));
        s.put("compaction_ms", events.compactionMicros.sum() / 1000);
        s.put("compaction_active", property("rocksdb.num-running-compactions"));
        s.put("bloom_negatives", statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL));
        s.put("wal_syncs", statistics.getTickerCount(TickerType.WAL_FILE_SYNCED));
        s.put("wal_bytes", statistics.getTickerCount(TickerType.WAL_FILE_BYTES));
        s.put("write_stalls", events.stalls.sum());
        s.put("write_stall_ms", statistics.getTickerCount(TickerType.STALL_MICROS) / 1000);
        return s;
    }

    /** Some numeric properties are only exposed as strings. */
    private long stringProperty(String name) {
        try {
            String v = db.getProperty(name);
            return v == null ? 0 : Long.parseLong(v.trim());
        } catch (RocksDBException | NumberFormatException e) {
            return 0;
        }
    }

    private long property(String name) {
        try {
            return db.getLongProperty(name);
        } catch (RocksDBException e) {
            return 0;
        }
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        if (walSyncer != null) {
            walSyncer.shutdownNow();
        }
        try {
            flush();
            db.syncWal();
        } catch (RocksDBException e) {
            throw failure("close", e);
        } finally {
            db.close();
            writeOptions.close();
            options.close();
            statistics.close();
            lock.close();
        }
    }

    private StorageException failure(String op, RocksDBException e) {
        return new StorageException("rocksdb " + op + " failed in " + dir + ": " + e.getMessage(), e);
    }
}
