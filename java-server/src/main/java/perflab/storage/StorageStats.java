package perflab.storage;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The numeric keys every backend reports in /v0/stats "storage" (0 where the backend has no such notion). */
public final class StorageStats {
    public static final List<String> KEYS = Collections.unmodifiableList(Arrays.asList(
            "memtable_bytes", "immutable_memtables", "sstables", "sstable_bytes",
            "flushes", "flush_bytes", "flush_ms", "flush_active",
            "compactions", "compaction_bytes", "compaction_ms", "compaction_active",
            "bloom_negatives", "wal_syncs", "wal_bytes", "write_stalls", "write_stall_ms"));

    private StorageStats() {
    }

    /** A mutable map with "backend" and every standard key set to 0, in the documented order. */
    public static Map<String, Object> template(String backend) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("backend", backend);
        for (String k : KEYS) {
            m.put(k, 0L);
        }
        return m;
    }
}
