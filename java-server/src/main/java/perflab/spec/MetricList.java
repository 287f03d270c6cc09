package perflab.spec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import static perflab.spec.MetricSpec.counter;
import static perflab.spec.MetricSpec.gauge;
import static perflab.spec.MetricSpec.label;

/**
 * Every value GET /v0/stats reports, in the order it reports them. StatsReport renders exactly these
 * (a value without a spec is not reported; a test checks every backend's real response against this list).
 * Counters are cumulative since start, gauges instantaneous.
 */
public final class MetricList {
    public static final List<MetricSpec> ALL = Collections.unmodifiableList(Arrays.asList(
            gauge("timestamp_ms", "epoch_ms", "server wall clock when the response was built"),
            gauge("uptime_ms", "ms", "time since the server started"),

            counter("requests.<METHOD>.<STATUS>", "count", "responses by request method (GET, PUT, DELETE, POST,"
                    + " HEAD, OTHER) and status code (200, 201, 202, 400, 404, 405, 413, 421, 500, 503, 504, other);"
                    + " only non-zero cells are present; in cluster mode internal requests from other nodes count"
                    + " too"),

            label("executor.mode", "request handling mode: sync, async or virtual"),
            gauge("executor.pool_size", "count", "threads handling requests (sync: selectors; virtual: requests"
                    + " in flight)"),
            gauge("executor.active_workers", "count", "workers running a request (sync: 0)"),
            gauge("executor.queue_depth", "count", "requests waiting in the async queue (other modes: 0)"),
            gauge("executor.queue_capacity", "count", "async queue capacity; virtual: in-flight cap; sync: 0"),
            counter("executor.rejected", "count", "requests answered 503 because the queue or in-flight cap was"
                    + " full"),
            counter("executor.completed", "count", "requests handled by the executor"),

            label("storage.backend", "lsm, memory or rocksdb"),
            gauge("storage.memtable_bytes", "bytes", "active memtable size (memory: all data)"),
            gauge("storage.immutable_memtables", "count", "memtables waiting for their flush"),
            gauge("storage.sstables", "count", "table files"),
            gauge("storage.sstable_bytes", "bytes", "table file bytes"),
            counter("storage.flushes", "count", "memtables written to tables (one flush event each)"),
            counter("storage.flush_bytes", "bytes", "table bytes written by flushes"),
            counter("storage.flush_ms", "ms", "time spent flushing"),
            gauge("storage.flush_active", "count", "flushes running now"),
            counter("storage.compactions", "count", "compactions finished (one compaction event each)"),
            counter("storage.compaction_bytes", "bytes", "table bytes written by compactions"),
            counter("storage.compaction_ms", "ms", "time spent compacting"),
            gauge("storage.compaction_active", "count", "compactions running now"),
            counter("storage.bloom_negatives", "count", "table probes a bloom filter answered 'absent'"),
            counter("storage.wal_syncs", "count", "write-ahead log syncs"),
            counter("storage.wal_bytes", "bytes", "bytes appended to the write-ahead log"),
            counter("storage.write_stalls", "count", "writers that had to wait for a flush (lsm); changes into a"
                    + " delayed or stopped write condition (rocksdb)"),
            counter("storage.write_stall_ms", "ms", "time writers spent stalled (lsm: summed over writers)"),
            gauge("storage.immutable_bytes", "bytes", "bytes in memtables waiting for their flush").only("lsm"),
            gauge("storage.sorted_runs", "count", "sorted runs a read may probe").only("lsm"),
            counter("storage.tombstones_purged", "count", "deletes dropped by compactions that reached the"
                    + " oldest run").only("lsm"),

            gauge("cluster.nodes", "count", "nodes in --cluster").inCluster(),
            gauge("cluster.self", "id", "this node's index in the --cluster list (the <PEER> index of the others)")
                    .inCluster(),
            counter("cluster.coordinated", "count", "client /v0/entity requests this node coordinated (asked the"
                    + " key's replicas for)").inCluster(),
            counter("cluster.replicas_asked", "count", "replica operations started by coordinated requests (from per"
                    + " request, this node's own included)").inCluster(),
            counter("cluster.replicas_answered", "count", "replica operations that succeeded, also those that"
                    + " arrived after the client was answered").inCluster(),
            counter("cluster.replicas_failed", "count", "replica operations that failed: timeout, refused"
                    + " connection, an error status, a cluster mismatch").inCluster(),
            counter("cluster.gateway_timeouts", "count", "client requests answered 504 because fewer than ack"
                    + " replicas answered (also in requests.<METHOD>.504)").inCluster(),
            counter("cluster.internal_served", "count", "internal requests from other nodes served from this node's"
                    + " storage").inCluster(),
            counter("cluster.mismatches", "count", "internal requests refused with 421 because the sender's"
                    + " --cluster list differs from this node's").inCluster(),
            label("cluster.peers.<PEER>.url", "another node's URL; <PEER> is its index in the --cluster list")
                    .inCluster(),
            gauge("cluster.peers.<PEER>.up", "bool", "1 unless the last internal request to it failed (see the"
                    + " peer_down and peer_up events)").inCluster(),
            counter("cluster.peers.<PEER>.requests", "count", "internal requests sent to it (proxied reads and"
                    + " writes)").inCluster(),
            counter("cluster.peers.<PEER>.answered", "count", "internal requests it answered within protocol")
                    .inCluster(),
            counter("cluster.peers.<PEER>.errors", "count", "internal requests that failed other than by timeout"
                    + " (refused connection, error status, cluster mismatch)").inCluster(),
            counter("cluster.peers.<PEER>.timeouts", "count", "internal requests without an answer within"
                    + " --cluster-timeout").inCluster(),
            counter("cluster.peers.<PEER>.latency_us", "us", "summed latency of its answered requests (divide the"
                    + " change by that of answered for the mean)").inCluster(),

            gauge("jvm.heap_used", "bytes", "heap in use"),
            gauge("jvm.heap_committed", "bytes", "heap committed"),
            gauge("jvm.heap_max", "bytes", "heap limit (-Xmx)"),
            counter("jvm.gc_count", "count", "garbage collections, all collectors"),
            counter("jvm.gc_ms", "ms", "time in garbage collections as the collectors' MXBeans report it"),
            gauge("jvm.threads", "count", "live threads"),

            counter("events.written", "count", "timed event lines written to stdout"),
            counter("events.dropped", "count", "timed events dropped because the event queue was full")));

    private MetricList() {
    }

    /** The metrics a single node (no --cluster) with this backend reports. */
    public static List<MetricSpec> forBackend(String backend) {
        return reported(backend, false);
    }

    /** The metrics a server with this backend reports, in cluster mode or not. */
    public static List<MetricSpec> reported(String backend, boolean cluster) {
        List<MetricSpec> out = new ArrayList<>();
        for (MetricSpec m : ALL) {
            if (m.reportedBy(backend, cluster)) {
                out.add(m);
            }
        }
        return out;
    }

    /** The numeric "storage" leaves every backend reports (Storage.stats() keys besides "backend"). */
    public static List<String> commonStorageKeys() {
        List<String> out = new ArrayList<>();
        for (MetricSpec m : ALL) {
            if (m.group().equals("storage") && m.backends == null && m.kind != MetricSpec.Kind.LABEL) {
                out.add(m.leaf());
            }
        }
        return out;
    }

    /** The "storage" leaves, label included, that {@code backend} reports. */
    public static List<String> storageKeys(String backend) {
        List<String> out = new ArrayList<>();
        for (MetricSpec m : forBackend(backend)) {
            if (m.group().equals("storage")) {
                out.add(m.leaf());
            }
        }
        return out;
    }
}
