package perflab.server;

import perflab.cluster.ClusterNode;
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
import java.util.TreeMap;

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
    /** Null for a single node. */
    private final ClusterNode cluster;
    private volatile Dispatcher dispatcher;

    StatsReport(RequestStats requests, Storage storage, EventWriter events, ClusterNode cluster) {
        this.requests = requests;
        this.storage = storage;
        this.events = events;
        this.cluster = cluster;
    }

    void setDispatcher(Dispatcher dispatcher) {
        this.dispatcher = dispatcher;
    }

    long uptimeMillis() {
        return System.currentTimeMillis() - startMillis;
    }

    /** Every group's values by leaf name ("" holds the top-level ones). */
    private Map<String, Map<String, Object>> collect(long now, TreeMap<Integer, Map<String, Object>> peers) {
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
        if (cluster != null) {
            Map<String, Object> c = new HashMap<>();
            cluster.stats(c, peers);
            g.put("cluster", c);
        }
        return g;
    }

    byte[] json() {
        TreeMap<Integer, Map<String, Object>> peers = new TreeMap<>();
        Map<String, Map<String, Object>> values = collect(System.currentTimeMillis(), peers);
        String backend = String.valueOf(values.get("storage").get("backend"));
        List<MetricSpec> specs = MetricList.reported(backend, cluster != null);
        Json j = new Json(new StringBuilder(1024)).beginObject();
        String open = "";
        boolean peersWritten = false;
        for (MetricSpec m : specs) {
            String group = m.group();
            if (m.isPattern() && group.equals(open)) { // cluster.peers.<PEER>.*: one object per peer, all leaves
                if (!peersWritten) {
                    writePeers(j, specs, peers);
                    peersWritten = true;
                }
                continue;
            }
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

    /** "peers": {"1": {"url": ..., "requests": ...}, ...}, leaves in the list's order, peers by index. */
    private static void writePeers(Json j, List<MetricSpec> specs, TreeMap<Integer, Map<String, Object>> peers) {
        j.key("peers").beginObject();
        for (Map.Entry<Integer, Map<String, Object>> p : peers.entrySet()) {
            j.key(Integer.toString(p.getKey())).beginObject();
            for (MetricSpec m : specs) {
                if (m.isPattern() && m.name.startsWith("cluster.peers.<PEER>.")) {
                    String leaf = m.name.substring("cluster.peers.<PEER>.".length());
                    j.field(leaf, p.getValue().get(leaf));
                }
            }
            j.endObject();
        }
        j.endObject();
    }
}
