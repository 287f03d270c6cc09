package perflab.storage.lsm;

import perflab.util.Bytes;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;

/**
 * Appends records to a fixed-size, memory-mapped log file (one per memtable). An append is a copy into
 * the shared mapping under a short lock, so an acknowledged write is in the page cache and survives the
 * process being killed under every policy; fsync ({@link #sync}) is what protects against losing the
 * machine. {@code always} writers wait in {@link #sync}, where one fsync covers every writer queued
 * behind it (group commit).
 */
final class WalWriter implements AutoCloseable {
    final long id;
    final Path path;
    private final MappedRegion region;
    private final ByteBuffer buf;
    private final int capacity;
    private final LsmMetrics metrics;
    private final LsmEvents events;
    private final ReentrantLock syncLock = new ReentrantLock();

    private int position = WalFormat.HEADER; // guarded by this
    private volatile int written = WalFormat.HEADER;
    private volatile int synced = WalFormat.HEADER; // written under syncLock
    private boolean closed; // guarded by syncLock and this

    private WalWriter(long id, Path path, MappedRegion region, LsmMetrics metrics, LsmEvents events) {
        this.id = id;
        this.path = path;
        this.region = region;
        this.buf = region.buffer();
        this.capacity = region.size();
        this.metrics = metrics;
        this.events = events;
    }

    /**
     * Creates and maps a log file of {@code capacity} bytes, sparse until written. Zero-filling it here
     * instead (blocks allocated ahead, as some engines do) was measured: with {@code --wal always} at
     * 8000 PUT/s each msync got so slow that the server fell to 3600-4900 PUT/s, so the file stays sparse.
     */
    static WalWriter create(Path path, long id, int capacity, LsmMetrics metrics, LsmEvents events)
            throws IOException {
        MappedRegion region;
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            region = MappedRegion.map(ch, FileChannel.MapMode.READ_WRITE, capacity);
        }
        ByteBuffer b = region.buffer();
        b.putInt(0, WalFormat.MAGIC);
        b.putInt(4, WalFormat.VERSION);
        b.putLong(8, id);
        region.force(0, WalFormat.HEADER);
        return new WalWriter(id, path, region, metrics, events);
    }

    /** Space a record needs in the log. */
    static int recordSize(byte[] key, byte[] value) {
        return WalFormat.RECORD_HEADER + 1 + Bytes.varintSize(key.length) + key.length
                + (value == null ? 0 : value.length);
    }

    /** Where a record's key starts, given where the record starts. */
    static int keyPos(int recordPos, int keyLength) {
        return recordPos + WalFormat.RECORD_HEADER + 1 + Bytes.varintSize(keyLength);
    }

    /** The mapping, for readers of the memtable (absolute reads only). */
    ByteBuffer buffer() {
        return buf;
    }

    /**
     * Appends a put ({@code value != null}) or a delete. Returns the record's start offset (which also
     * orders writes within this log's memtable), or -1 when the log is full (the caller switches memtables).
     */
    int append(byte[] key, byte[] value) {
        int size = recordSize(key, value);
        int payload = size - WalFormat.RECORD_HEADER;
        byte type = value == null ? WalFormat.DELETE : WalFormat.PUT;
        byte[] lengthPrefix = new byte[5];
        int prefixLength = Bytes.putVarint(lengthPrefix, 0, key.length);
        CRC32C crc = new CRC32C();
        crc.update(type);
        crc.update(lengthPrefix, 0, prefixLength);
        crc.update(key);
        if (value != null) {
            crc.update(value);
        }
        int checksum = (int) crc.getValue();
        int pos;
        synchronized (this) {
            pos = position;
            if (closed || pos + size > capacity) {
                return -1;
            }
            int p = pos + WalFormat.RECORD_HEADER;
            buf.put(p, type);
            buf.put(p + 1, lengthPrefix, 0, prefixLength);
            p += 1 + prefixLength;
            buf.put(p, key);
            if (value != null) {
                buf.put(p + key.length, value);
            }
            buf.putInt(pos + 4, checksum);
            VarHandle.releaseFence(); // the length must not become visible before the record it covers
            buf.putInt(pos, payload);
            position = pos + size;
            written = position;
        }
        metrics.perRequest.add(LsmMetrics.WAL_BYTES, size);
        return pos;
    }

    /** The end of the record that starts at recordPos (what {@link #sync} must cover). */
    static long recordEnd(int recordPos, byte[] key, byte[] value) {
        return (long) recordPos + recordSize(key, value);
    }

    /** Whether a record of this size could ever fit in an empty log of this capacity. */
    boolean fitsEmpty(int recordSize) {
        return WalFormat.HEADER + recordSize <= capacity;
    }

    /** Returns once everything up to {@code upTo} is on the device (or the log was retired after a flush). */
    void sync(long upTo) {
        if (synced >= upTo) {
            return;
        }
        syncLock.lock();
        try {
            if (closed || synced >= upTo) {
                return;
            }
            syncNow();
        } finally {
            syncLock.unlock();
        }
    }

    /** The batch syncer's tick: fsync whatever was appended since the last one. True if it synced. */
    boolean syncIfDirty() {
        if (synced >= written) {
            return false;
        }
        syncLock.lock();
        try {
            return !closed && syncNow();
        } finally {
            syncLock.unlock();
        }
    }

    boolean dirty() {
        return synced < written;
    }

    private boolean syncNow() {
        int target = written;
        int from = synced;
        if (target > from) {
            long start = System.nanoTime();
            region.force(from, target - from);
            long duration = System.nanoTime() - start;
            synced = target;
            metrics.walSyncs.increment();
            events.synced(start, duration, target - from, path);
            return true;
        }
        return false;
    }

    /** Bytes appended, header included. */
    int size() {
        return written;
    }

    /** Unmaps the log; writers still waiting in sync() return (their data is in an SSTable by now). */
    @Override
    public void close() {
        syncLock.lock();
        try {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            region.close();
        } finally {
            syncLock.unlock();
        }
    }

    /** Closes and removes the file: its memtable is safely in an SSTable. */
    void delete() throws IOException {
        close();
        Files.deleteIfExists(path);
    }
}
