package perflab.storage;

import perflab.util.Units;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Engine settings, keyed exactly like the server flags (without "--") so the server, the properties file
 * and the JPype bridge share one vocabulary. Validation errors name the key.
 */
public final class StorageOptions {
    public static final List<String> KEYS = Collections.unmodifiableList(Arrays.asList(
            "memtable-size", "max-immutable", "flush-threads", "compaction-threads", "wal", "wal-batch-delay",
            "table-size", "block-size", "bloom-bits", "background-nice"));

    public final long memtableSize;
    public final int maxImmutable;
    public final int flushThreads;
    public final int compactionThreads;
    public final WalPolicy wal;
    public final long walBatchDelayMs;
    public final long tableSize;
    public final int blockSize;
    public final int bloomBitsPerKey;
    public final int backgroundNice;

    private StorageOptions(Map<String, String> m) {
        memtableSize = bytes(m, "memtable-size", "4m", 64 << 10, 1L << 30);
        maxImmutable = integer(m, "max-immutable", "2", 1, 64);
        flushThreads = integer(m, "flush-threads", "1", 1, 64);
        compactionThreads = integer(m, "compaction-threads", "1", 0, 64);
        wal = walPolicy(m.getOrDefault("wal", "batch"));
        walBatchDelayMs = millis(m, "wal-batch-delay", "5ms", 1, 60_000);
        tableSize = bytes(m, "table-size", "64m", 1 << 20, 1L << 30);
        blockSize = (int) bytes(m, "block-size", "4k", 512, 1 << 20);
        bloomBitsPerKey = integer(m, "bloom-bits", "10", 0, 32);
        backgroundNice = integer(m, "background-nice", "10", 0, 19);
    }

    public static StorageOptions defaults() {
        return new StorageOptions(Collections.emptyMap());
    }

    /**
     * Parses {@code options}; keys in {@code ignored} (e.g. server-only flags) are skipped, any other
     * unknown key is an error.
     */
    public static StorageOptions parse(Map<String, String> options, Set<String> ignored) {
        Map<String, String> m = new LinkedHashMap<>();
        if (options != null) {
            for (Map.Entry<String, String> e : options.entrySet()) {
                String key = e.getKey();
                if (KEYS.contains(key)) {
                    if (e.getValue() == null) {
                        throw new InvalidOptionException(key, "missing value");
                    }
                    m.put(key, e.getValue());
                } else if (ignored == null || !ignored.contains(key)) {
                    throw new InvalidOptionException(key, "unknown storage option (known: " + String.join(", ", KEYS)
                            + ")");
                }
            }
        }
        return new StorageOptions(m);
    }

    /** The effective values, for the config line and for Inspect. */
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("memtable-size", memtableSize);
        d.put("max-immutable", maxImmutable);
        d.put("flush-threads", flushThreads);
        d.put("compaction-threads", compactionThreads);
        d.put("wal", wal.label());
        d.put("wal-batch-delay", walBatchDelayMs);
        d.put("table-size", tableSize);
        d.put("block-size", blockSize);
        d.put("bloom-bits", bloomBitsPerKey);
        d.put("background-nice", backgroundNice);
        return d;
    }

    private static WalPolicy walPolicy(String value) {
        try {
            return WalPolicy.parse(value);
        } catch (IllegalArgumentException e) {
            throw new InvalidOptionException("wal", e.getMessage());
        }
    }

    private static long bytes(Map<String, String> m, String key, String def, long min, long max) {
        String raw = m.getOrDefault(key, def);
        long v;
        try {
            v = Units.parseBytes(raw);
        } catch (IllegalArgumentException e) {
            throw new InvalidOptionException(key, e.getMessage());
        }
        checkRange(key, v, min, max, raw);
        return v;
    }

    private static long millis(Map<String, String> m, String key, String def, long min, long max) {
        String raw = m.getOrDefault(key, def);
        long v;
        try {
            v = Units.parseMillis(raw);
        } catch (IllegalArgumentException e) {
            throw new InvalidOptionException(key, e.getMessage());
        }
        checkRange(key, v, min, max, raw);
        return v;
    }

    private static int integer(Map<String, String> m, String key, String def, int min, int max) {
        String raw = m.getOrDefault(key, def);
        int v;
        try {
            v = Units.parseInt(raw);
        } catch (IllegalArgumentException e) {
            throw new InvalidOptionException(key, e.getMessage());
        }
        checkRange(key, v, min, max, raw);
        return v;
    }

    private static void checkRange(String key, long v, long min, long max, String raw) {
        if (v < min) {
            throw new InvalidOptionException(key, "must be >= " + min + ", got " + raw.trim());
        }
        if (v > max) {
            throw new InvalidOptionException(key, "must be <= " + max + ", got " + raw.trim());
        }
    }
}
