package perflab.storage;

import perflab.spec.OptionException;
import perflab.spec.OptionList;
import perflab.spec.OptionScope;
import perflab.spec.OptionSpec;
import perflab.spec.OptionValues;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Engine settings: the storage-scope options of {@link OptionList} (keys, defaults, bounds and help live
 * there), as typed fields. The server, the properties file and the JPype bridge share one vocabulary.
 */
public final class StorageOptions {
    /** The storage-scope option keys. */
    public static final List<String> KEYS = OptionList.keys(OptionScope.STORAGE);

    public final long memtableSize;
    public final int maxImmutable;
    public final int flushThreads;
    public final int compactionThreads;
    public final WalPolicy wal;
    public final long walBatchDelayMs;
    public final long slowSyncThresholdMs;
    public final long tableSize;
    public final int blockSize;
    public final int bloomBitsPerKey;
    public final int backgroundNice;
    private final OptionValues values;

    private StorageOptions(OptionValues v) {
        this.values = v;
        memtableSize = v.getLong(OptionList.MEMTABLE_SIZE);
        maxImmutable = v.getInt(OptionList.MAX_IMMUTABLE);
        flushThreads = v.getInt(OptionList.FLUSH_THREADS);
        compactionThreads = v.getInt(OptionList.COMPACTION_THREADS);
        wal = WalPolicy.parse(v.getString(OptionList.WAL));
        walBatchDelayMs = v.getLong(OptionList.WAL_BATCH_DELAY);
        slowSyncThresholdMs = v.getLong(OptionList.SLOW_SYNC_THRESHOLD);
        tableSize = v.getLong(OptionList.TABLE_SIZE);
        blockSize = v.getInt(OptionList.BLOCK_SIZE);
        bloomBitsPerKey = v.getInt(OptionList.BLOOM_BITS);
        backgroundNice = v.getInt(OptionList.BACKGROUND_NICE);
    }

    public static StorageOptions defaults() {
        return parse(Collections.emptyMap(), null);
    }

    /** The storage options among values the server parsed (which must include every storage-scope spec). */
    public static StorageOptions from(OptionValues serverValues) {
        return new StorageOptions(serverValues);
    }

    /**
     * Parses {@code options}; keys in {@code ignored} and server-scope keys are skipped (a caller may pass a
     * whole server configuration), any other unknown key is an error.
     *
     * @throws InvalidOptionException naming the key, with the spec's message
     */
    public static StorageOptions parse(Map<String, String> options, Set<String> ignored) {
        Map<String, String> m = new LinkedHashMap<>();
        if (options != null) {
            for (Map.Entry<String, String> e : options.entrySet()) {
                String key = e.getKey();
                OptionSpec spec = OptionList.byKey(key);
                if (spec != null && spec.scope == OptionScope.STORAGE) {
                    if (e.getValue() == null) {
                        throw new InvalidOptionException(key, "missing value");
                    }
                    m.put(key, e.getValue());
                } else if (spec == null && (ignored == null || !ignored.contains(key))) {
                    throw new InvalidOptionException(key, "unknown storage option (known: " + String.join(", ", KEYS)
                            + ")");
                }
            }
        }
        try {
            return new StorageOptions(OptionValues.parse(m, OptionList.inScope(OptionScope.STORAGE)));
        } catch (OptionException e) {
            throw new InvalidOptionException(e.key(), e.detail());
        }
    }

    /** The effective values in canonical units (bytes, ms), for Inspect and tests. */
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        for (OptionSpec s : OptionList.inScope(OptionScope.STORAGE)) {
            d.put(s.key, values.get(s));
        }
        return d;
    }
}
