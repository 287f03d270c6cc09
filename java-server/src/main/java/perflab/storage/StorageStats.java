package perflab.storage;

import perflab.spec.MetricList;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The numeric keys every backend reports in /v0/stats "storage" (0 where the backend has no such notion). */
public final class StorageStats {
    /** The storage metrics of {@link MetricList} that every backend reports, in order. */
    public static final List<String> KEYS = MetricList.commonStorageKeys();

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
