package perflab.spec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import static perflab.spec.OptionScope.SERVER;
import static perflab.spec.OptionScope.STORAGE;
import static perflab.spec.OptionSpec.words;

/**
 * Every server and storage option, each documented once (the role LevelDB's options.h plays). Flag and
 * properties parsing, StorageOptions, the config line, --help, --options-json and the flag table in
 * docs/contracts/server.md section 2 (checked by a test) all come from this list. The order is the order of
 * --help, of the config line and of the docs table.
 */
public final class OptionList {
    private static final int CPUS = Runtime.getRuntime().availableProcessors();

    public static final OptionSpec HOST = OptionSpec.string("host", SERVER, "127.0.0.1",
            "bind address (a host name or IP address that must resolve)");
    public static final OptionSpec PORT = OptionSpec.integer("port", SERVER, 8080, 0, 65535,
            "TCP port; 0 picks a free one, which the ready line reports");
    public static final OptionSpec DATA_DIR = OptionSpec.path("data-dir", SERVER, "none",
            "storage directory, created if missing; required for the lsm and rocksdb backends");
    public static final OptionSpec BACKEND = OptionSpec.choice("backend", SERVER, "lsm",
            words("lsm", "memory", "rocksdb"),
            "storage engine: lsm (ours), memory (a heap map; nothing survives a restart) or rocksdb (the reference LSM)");
    public static final OptionSpec MODE = OptionSpec.choice("mode", SERVER, "sync", words("sync", "async", "virtual"),
            "where requests run: sync (on the selector thread that parsed them), async (a bounded executor; 503 when"
                    + " full) or virtual (a virtual thread per request; JDK 21+)");
    public static final OptionSpec SELECTORS = OptionSpec.integer("selectors", SERVER, "CPU count", () -> (long) CPUS,
            1, 1024, "one-nio selector threads");
    public static final OptionSpec WORKERS = OptionSpec.integer("workers", SERVER, "CPU count", () -> (long) CPUS,
            1, 65536, "async: executor threads");
    public static final OptionSpec QUEUE = OptionSpec.integer("queue", SERVER, 1024, 1, 1 << 24,
            "async: executor queue capacity; virtual: cap on requests in flight (503 beyond either)");
    public static final OptionSpec QUEUE_KIND = OptionSpec.choice("queue-kind", SERVER, "array",
            words("array", "linked", "lifo"),
            "async: the executor's bounded queue: array (ArrayBlockingQueue), linked (LinkedBlockingQueue) or lifo"
                    + " (a deque that serves the newest request first)");
    public static final OptionSpec CLUSTER = OptionSpec.optionalString("cluster", SERVER, "none",
            "the URLs of every node of a cluster, http://host:port separated by commas, the same list on every"
                    + " node; enables sharding and replication (the cluster protocol in docs/architecture.md); none: a single"
                    + " node");
    public static final OptionSpec SELF_URL = OptionSpec.optionalString("self-url", SERVER, "none",
            "with --cluster: this node's URL as written in that list (its port must be --port); --self is the"
                    + " same flag").withAlias("self");
    public static final OptionSpec CLUSTER_TIMEOUT = OptionSpec.duration("cluster-timeout", SERVER, "1s", "1ms",
            "60s", "with --cluster: how long a node waits for another node's answer to an internal request,"
                    + " connecting included, before counting that replica as failed");

    public static final OptionSpec MEMTABLE_SIZE = OptionSpec.size("memtable-size", STORAGE, "4m", "64k", "1g",
            "memtable byte threshold: bytes of its write-ahead log (keys, values, ~10 B per record) at which it is"
                    + " switched and flushed (rocksdb: write_buffer_size)");
    public static final OptionSpec MAX_IMMUTABLE = OptionSpec.integer("max-immutable", STORAGE, 2, 1, 64,
            "immutable memtables waiting for a flush before writers stall (rocksdb: max_write_buffer_number - 1)");
    public static final OptionSpec FLUSH_THREADS = OptionSpec.integer("flush-threads", STORAGE, 1, 1, 64,
            "background flush threads (rocksdb: the HIGH pool)");
    public static final OptionSpec COMPACTION_THREADS = OptionSpec.integer("compaction-threads", STORAGE, 1, 0, 64,
            "background compaction threads; 0 disables compaction (rocksdb: the LOW pool)");
    public static final OptionSpec WAL = OptionSpec.choice("wal", STORAGE, "batch", words("none", "batch", "always"),
            "write-ahead log policy: none (never synced), batch (a background sync at most wal-batch-delay after a"
                    + " write) or always (a write is acknowledged after a sync that covers it)");
    public static final OptionSpec WAL_BATCH_DELAY = OptionSpec.duration("wal-batch-delay", STORAGE, "5ms", "1ms",
            "60s", "batch: the longest time between a write and the sync that covers it");
    public static final OptionSpec SLOW_SYNC_THRESHOLD = OptionSpec.duration("slow-sync-threshold", STORAGE, "5ms",
            "0ms", "60s", "a write-ahead log sync that takes at least this long is reported as a wal_sync event (0"
                    + " reports every sync); lsm, and rocksdb with --wal batch");
    public static final OptionSpec TABLE_SIZE = OptionSpec.size("table-size", STORAGE, "64m", "1m", "1g",
            "target SSTable file size; a run is split into files of about this size (rocksdb: target_file_size_base)");
    public static final OptionSpec BLOCK_SIZE = OptionSpec.size("block-size", STORAGE, "4k", "512", "1m",
            "SSTable data block size");
    public static final OptionSpec BLOOM_BITS = OptionSpec.integer("bloom-bits", STORAGE, 10, 0, 32,
            "bloom filter bits per key; 0 = no filter");
    public static final OptionSpec BACKGROUND_NICE = OptionSpec.integer("background-nice", STORAGE, 10, 0, 19,
            "nice value given to flush and compaction threads (Linux), so request threads preempt them on a small"
                    + " machine; 0 leaves them alone (rocksdb: any value above 0 lowers both pools' CPU priority)");

    public static final OptionSpec EVENTS = OptionSpec.choice("events", SERVER, "on", words("on", "off"),
            "timed server events (flush, compaction, write_stall, wal_sync, queue_full, gc, debug_pause, peer_down,"
                    + " peer_up) as JSON"
                    + " lines on stdout, written by a background thread from a bounded queue (dropped and counted"
                    + " in events.dropped when it is full)");
    public static final OptionSpec GC_EVENTS = OptionSpec.choice("gc-events", SERVER, "jfr",
            words("jfr", "mxbean", "off"),
            "source of gc events: jfr (an in-process JFR stream, microsecond times; mxbean when JFR cannot start),"
                    + " mxbean (GC notifications, millisecond times) or off");
    public static final OptionSpec DEBUG_ENDPOINTS = OptionSpec.choice("debug-endpoints", SERVER, "off",
            words("on", "off"), "test aid: on enables POST /v0/debug/gc and POST /v0/debug/pause?ms=N; off answers"
                    + " them like any unknown path");
    public static final OptionSpec DEBUG_DELAY = OptionSpec.duration("debug-delay", SERVER, "0ms", "0ms", "60s",
            "test aid: each /v0/entity and /v0/status request parks this long before answering (on the worker"
                    + " thread in async mode), giving a server of known capacity");
    public static final OptionSpec DEBUG_WORK_NS = OptionSpec.integer("debug-work-ns", SERVER, 0, 0, 1_000_000_000,
            "test aid: each /v0/entity and /v0/status request spins on its thread until it has used this many"
                    + " nanoseconds of CPU time (its thread's CPU clock; wall time on a virtual thread), giving a"
                    + " server whose CPU per request is known to grow by that much");
    public static final OptionSpec CONFIG = OptionSpec.path("config", SERVER, "none",
            "a .properties file with the same keys (without --); flags override it");

    public static final List<OptionSpec> ALL = Collections.unmodifiableList(Arrays.asList(
            HOST, PORT, DATA_DIR, BACKEND, MODE, SELECTORS, WORKERS, QUEUE, QUEUE_KIND,
            CLUSTER, SELF_URL, CLUSTER_TIMEOUT,
            MEMTABLE_SIZE, MAX_IMMUTABLE, FLUSH_THREADS, COMPACTION_THREADS, WAL, WAL_BATCH_DELAY,
            SLOW_SYNC_THRESHOLD, TABLE_SIZE, BLOCK_SIZE, BLOOM_BITS, BACKGROUND_NICE,
            EVENTS, GC_EVENTS, DEBUG_ENDPOINTS, DEBUG_DELAY, DEBUG_WORK_NS, CONFIG));

    private OptionList() {
    }

    /** The spec whose key or alias is {@code flag} (without "--"), or null. */
    public static OptionSpec byFlag(String flag) {
        for (OptionSpec s : ALL) {
            if (s.key.equals(flag) || flag.equals(s.alias)) {
                return s;
            }
        }
        return null;
    }

    /** The spec for {@code key}, or null. */
    public static OptionSpec byKey(String key) {
        for (OptionSpec s : ALL) {
            if (s.key.equals(key)) {
                return s;
            }
        }
        return null;
    }

    public static List<OptionSpec> inScope(OptionScope scope) {
        List<OptionSpec> out = new ArrayList<>();
        for (OptionSpec s : ALL) {
            if (s.scope == scope) {
                out.add(s);
            }
        }
        return Collections.unmodifiableList(out);
    }

    public static List<String> keys(OptionScope scope) {
        List<String> out = new ArrayList<>();
        for (OptionSpec s : inScope(scope)) {
            out.add(s.key);
        }
        return Collections.unmodifiableList(out);
    }
}
