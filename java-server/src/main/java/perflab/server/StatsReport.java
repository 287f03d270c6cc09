package perflab.server;

import perflab.storage.Storage;
import perflab.util.Json;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.List;
import java.util.Map;

/** Renders GET /v0/stats: counters are cumulative since start, gauges instantaneous (docs/architecture.md §3). */
final class StatsReport {
    private final long startMillis = System.currentTimeMillis();
    private final RequestStats requests;
    private final Storage storage;
    private final List<GarbageCollectorMXBean> gcs = ManagementFactory.getGarbageCollectorMXBeans();
    private volatile Dispatcher dispatcher;

    StatsReport(RequestStats requests, Storage storage) {
        this.requests = requests;
        this.storage = storage;
    }

    void setDispatcher(Dispatcher dispatcher) {
        this.dispatcher = dispatcher;
    }

    long uptimeMillis() {
        return System.currentTimeMillis() - startMillis;
    }

    byte[] json() {
        long now = System.currentTimeMillis();
        Json j = new Json(new StringBuilder(1024)).beginObject()
                .field("timestamp_ms", now)
                .field("uptime_ms", now - startMillis);
        j.key("requests");
        requests.writeTo(j);
        j.key("executor");
        dispatcher.writeStats(j);
        j.key("storage").beginObject();
        for (Map.Entry<String, Object> e : storage.stats().entrySet()) {
            j.field(e.getKey(), e.getValue());
        }
        j.endObject();
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        long gcCount = 0;
        long gcMillis = 0;
        for (GarbageCollectorMXBean gc : gcs) {
            gcCount += Math.max(0, gc.getCollectionCount());
            gcMillis += Math.max(0, gc.getCollectionTime());
        }
        j.key("jvm").beginObject()
                .field("heap_used", heap.getUsed())
                .field("heap_committed", heap.getCommitted())
                .field("heap_max", heap.getMax())
                .field("gc_count", gcCount)
                .field("gc_ms", gcMillis)
                .field("threads", ManagementFactory.getThreadMXBean().getThreadCount())
                .endObject();
        return j.endObject().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
}
