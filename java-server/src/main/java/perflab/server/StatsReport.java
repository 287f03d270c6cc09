package perflab.server;

import perflab.events.EventWriter;
import perflab.spec.MetricList;
import perflab.spec.MetricSpec;
import perflab.storage.Storage;
import perflab.util.Json;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Renders GET /v0/stats from {@link MetricList}: the sources fill one map per group, and only values with
 * a spec are written, in the list's order: a value without a spec is never reported, and a spec without a
 * value shows up as null (the tests compare every backend's response with the list, and each backend's
 * Storage.stats() keys with the storage specs).
 */
final class StatsReport {
    private final long startMillis = System.currentTimeMillis();
    private final RequestStats requests;
    private final Storage storage;
    /** Null when events are off. */
    private final EventWriter events;
    private final List<GarbageCollectorMXBean> gcs = ManagementFactory.getGarbageCollectorMXBeans();
    private volatile Dispatcher dispatcher;

    StatsReport(RequestStats requests, Storage storage, EventWriter events) {
        this.requests = requests;
        this.storage = storage;
        this.events = events;
    }

    void setDispatcher(Dispatcher dispatcher) {
        this.dispatcher = dispatcher;
    }

    long uptimeMillis() {
        return System.currentTimeMillis() - startMillis;
    }

    /** Every group's values by leaf name ("" holds the top-level ones). */
    private Map<String, Map<String, Object>> collect(long now) {
        Map<String, Map<String, Object>> g = new HashMap<>();
        Map<String, Object> top = new HashMap<>();
        top.put("timestamp_ms", now);
        top.put("uptime_ms", now - startMillis);
        g.put("", top);
        Map<String, Object> executor = new HashMap<>();
        dispatcher.stats(executor);
        g.put("executor", executor);
        g.put("storage", storage.stats());
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        long gcCount = 0;
        long gcMillis = 0;
        for (GarbageCollectorMXBean gc : gcs) {
            gcCount += Math.max(0, gc.getCollectionCount());
            gcMillis += Math.max(0, gc.getCollectionTime());
        }
        Map<String, Object> jvm = new HashMap<>();
        jvm.put("heap_used", heap.getUsed());
        jvm.put("heap_committed", heap.getCommitted());
        jvm.put("heap_max", heap.getMax());
        jvm.put("gc_count", gcCount);
        jvm.put("gc_ms", gcMillis);
        jvm.put("threads", (long) ManagementFactory.getThreadMXBean().getThreadCount());
        g.put("jvm", jvm);
        Map<String, Object> ev = new HashMap<>();
        ev.put("written", events == null ? 0L : events.written());
        ev.put("dropped", events == null ? 0L : events.dropped());
        g.put("events", ev);
        return g;
    }

    byte[] json() {
        Map<String, Map<String, Object>> values = collect(System.currentTimeMillis());
        String backend = String.valueOf(values.get("storage").get("backend"));
        Json j = new Json(new StringBuilder(1024)).beginObject();
        String open = "";
        for (MetricSpec m : MetricList.forBackend(backend)) {
            String group = m.group();
            if (!group.equals(open)) {
                if (!open.isEmpty()) {
                    j.endObject();
                }
                open = group;
                j.key(group);
                if (m.isPattern()) { // requests.<METHOD>.<STATUS>: the family is rendered by its source
                    requests.writeTo(j);
                    open = "";
                    continue;
                }
                j.beginObject();
            }
            j.field(group.isEmpty() ? m.name : m.leaf(), values.get(group).get(m.leaf()));
        }
        if (!open.isEmpty()) {
            j.endObject();
        }
        return j.endObject().toString().getBytes(StandardCharsets.UTF_8);
    }
}
