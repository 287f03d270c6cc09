package perflab.storage.lsm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A memtable: its write-ahead log (which holds the key and value bytes) plus a {@link LogSkipList} over
 * the log's records. Active while it takes writes, then immutable until a flush turns it into a run.
 * Its id is also its log's file number and the sequence that orders its run among the others.
 * <p>
 * Reference-counted like a table: the engine state holds one reference, range cursors take more. The
 * log is unmapped when the last reference goes, and deleted if the memtable was flushed by then.
 */
final class Memtable {
    final long id;
    /** Null for a memtable rebuilt from a log at start-up. */
    final WalWriter wal;
    final Path walPath;
    private final MappedRegion recovered;
    private final LogSkipList index;
    private final AtomicInteger refs = new AtomicInteger(1);
    private volatile boolean flushed;
    private volatile int recoveredBytes;

    private Memtable(long id, WalWriter wal, Path walPath, MappedRegion recovered, ByteBuffer log) {
        this.id = id;
        this.wal = wal;
        this.walPath = walPath;
        this.recovered = recovered;
        this.index = new LogSkipList(log);
    }

    static Memtable active(long id, WalWriter wal) {
        return new Memtable(id, wal, wal.path, null, wal.buffer());
    }

    /** A memtable over an existing log, mapped read-only, for replay. */
    static Memtable recovered(long id, Path walPath, MappedRegion region) {
        return new Memtable(id, null, walPath, region, region.buffer());
    }

    /** Indexes a record just appended to this memtable's log at {@code recordPos}. */
    void add(byte[] key, byte[] value, int recordPos) {
        index.insert(key, WalWriter.keyPos(recordPos, key.length), value == null ? -1 : value.length);
    }

    /** Replay: indexes a record found in the log. */
    void addRecovered(byte[] key, int keyPos, int valueLength, int recordEnd) {
        index.insert(key, keyPos, valueLength);
        recoveredBytes = recordEnd;
    }

    /** Newest version of the key: 0 when absent, else a node for {@link #isTombstone}/{@link #value}. */
    int find(byte[] key) {
        return index.find(key);
    }

    boolean isTombstone(int node) {
        return index.valueLength(node) < 0;
    }

    byte[] value(int node) {
        return index.value(node);
    }

    LogSkipList index() {
        return index;
    }

    /** Log bytes used: the memtable's size as far as the switch threshold is concerned. */
    long bytes() {
        return wal != null ? wal.size() : recoveredBytes;
    }

    boolean isEmpty() {
        return index.isEmpty();
    }

    int entries() {
        return index.size();
    }

    boolean retain() {
        return RefCounts.retain(refs);
    }

    /** After its run is published: the log may go once no reader needs it. */
    void markFlushed() {
        flushed = true;
    }

    void release() {
        if (refs.decrementAndGet() != 0) {
            return;
        }
        try {
            if (wal != null) {
                if (flushed) {
                    wal.delete();
                } else {
                    wal.close();
                }
            } else {
                recovered.close();
                if (flushed) {
                    Files.deleteIfExists(walPath);
                }
            }
        } catch (IOException e) {
            System.err.println("lsm: cannot delete " + walPath + ": " + e);
        }
    }
}
