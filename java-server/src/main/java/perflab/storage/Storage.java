package perflab.storage;

import java.io.Closeable;
import java.io.IOException;
import java.util.Map;

/**
 * The key-value engine seen by the HTTP server and by the lab's in-process JPype bridge.
 * Keys and values are arbitrary byte arrays (an empty value is a legal value, not a delete);
 * keys are ordered unsigned-lexicographically. Implementations are thread-safe.
 */
public interface Storage extends Closeable {
    /** The value, or {@code null} if the key is absent or deleted. */
    byte[] get(byte[] key) throws IOException;

    /** Inserts or replaces. Returns once the write is acknowledged under the backend's durability policy. */
    void put(byte[] key, byte[] value) throws IOException;

    /** Removes the key; deleting an absent key is not an error. */
    void delete(byte[] key) throws IOException;

    /**
     * Live entries with {@code from <= key < to}, in key order, produced lazily (the result may be larger
     * than the heap). {@code null} bounds are open. The caller must close the iterator.
     */
    RangeIterator range(byte[] from, byte[] to) throws IOException;

    /** Makes everything written so far durable in the backend's on-disk tables (no-op for memory). */
    void flush() throws IOException;

    /**
     * Counters and gauges: "backend" (String) and the numeric keys of the "storage" object of /v0/stats
     * (Long values). Cheap enough to call every second while serving.
     */
    Map<String, Object> stats();

    /** Flushes and releases files and the directory lock. Idempotent. */
    @Override
    void close() throws IOException;
}
