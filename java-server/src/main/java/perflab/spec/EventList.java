package perflab.spec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Every kind of JSON line the server writes on stdout. Field units: bytes, count, us, epoch_us, text,
 * names (a list of file names), id, and for the config line each option's canonical unit.
 */
public final class EventList {
    public static final EventSpec FLUSH = EventSpec.timed("flush",
            "a memtable written to a sorted run of tables (lsm; rocksdb from its listener)",
            "bytes", "bytes", "entries", "count", "tables", "names");
    public static final EventSpec COMPACTION = EventSpec.timed("compaction",
            "tables merged into new ones (lsm: adjacent runs; rocksdb from its listener)",
            "input_tables", "names", "input_bytes", "bytes", "output_tables", "names", "output_bytes", "bytes");
    public static final EventSpec WRITE_STALL = EventSpec.timed("write_stall",
            "writers blocked because the immutable memtables are full (lsm: from the first writer blocked until"
                    + " the last one resumes; rocksdb: a stall condition from its start until it is normal again);"
                    + " writers is null for rocksdb",
            "condition", "text", "writers", "count");
    public static final EventSpec WAL_SYNC = EventSpec.timed("wal_sync",
            "a write-ahead log sync that took at least --slow-sync-threshold (lsm; rocksdb with --wal batch, where"
                    + " bytes are the log bytes written since the previous sync and wal is null)",
            "bytes", "bytes", "wal", "text", "policy", "text");
    public static final EventSpec QUEUE_FULL = EventSpec.timed("queue_full",
            "a 503 episode of the async executor or the virtual in-flight cap: from the first rejection until it"
                    + " accepted a request again, written once 100 ms pass without a rejection (within ~1 s)",
            "rejected", "count");
    public static final EventSpec GC = EventSpec.timed("gc",
            "one garbage collection pause (ts_us and dur_us are the pause); heap_before and heap_after are the"
                    + " collection's, shared by all its pauses; source says where the times come from (jfr:"
                    + " nanosecond clock, mxbean: whole milliseconds)",
            "gc_id", "id", "collector", "text", "cause", "text", "phase", "text", "heap_before", "bytes",
            "heap_after", "bytes", "source", "text");
    public static final EventSpec DEBUG_PAUSE = EventSpec.timed("debug_pause",
            "POST /v0/debug/pause: /v0/entity and /v0/status requests arriving in this window waited until its end");
    public static final EventSpec PEER_DOWN = EventSpec.timed("peer_down",
            "cluster: the first failed internal request to another node after a success (or since start); ts_us"
                    + " and dur_us are that request's; reason is timeout, error or mismatch, detail says what failed",
            "peer", "text", "reason", "text", "detail", "text");
    public static final EventSpec PEER_UP = EventSpec.timed("peer_up",
            "cluster: the first answered internal request to a node after failures; ts_us and dur_us are that"
                    + " request's; down_us runs from the first failed request's start to this answer, failures"
                    + " counts the requests that failed in between",
            "peer", "text", "down_us", "us", "failures", "count");

    public static final EventSpec CONFIG = EventSpec.untimed("config",
            "right after parsing: every option's effective value (sizes in bytes, durations in ms) and the runtime",
            configFields());
    public static final EventSpec READY = EventSpec.untimed("ready", "once listening",
            "host", "text", "port", "count", "pid", "id", "java_version", "text");
    public static final EventSpec STOPPED = EventSpec.untimed("stopped",
            "after a graceful stop (SIGTERM or SIGINT), which flushes memtables; always the last line",
            "uptime_ms", "ms", "requests", "count", "shutdown_ms", "ms", "flushed", "bool", "error", "text");

    public static final List<EventSpec> ALL = Collections.unmodifiableList(Arrays.asList(
            CONFIG, READY, FLUSH, COMPACTION, WRITE_STALL, WAL_SYNC, QUEUE_FULL, GC, DEBUG_PAUSE, PEER_DOWN, PEER_UP,
            STOPPED));

    private EventList() {
    }

    private static String[] configFields() {
        List<String> f = new ArrayList<>();
        for (OptionSpec o : OptionList.ALL) {
            f.add(o.key);
            f.add(o.kind.unit != null ? o.kind.unit : o.kind.label());
        }
        f.addAll(Arrays.asList("java_version", "text", "one_nio_native", "bool", "cpus", "count", "heap_max", "bytes"));
        return f.toArray(new String[0]);
    }

    public static EventSpec byName(String name) {
        for (EventSpec e : ALL) {
            if (e.name.equals(name)) {
                return e;
            }
        }
        return null;
    }
}
