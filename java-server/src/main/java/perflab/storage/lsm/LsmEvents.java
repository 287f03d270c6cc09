package perflab.storage.lsm;

import perflab.events.Event;
import perflab.events.EventSink;
import perflab.spec.EventList;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Turns the engine's background work and stalls into timed events (nothing happens when events are off). */
final class LsmEvents {
    private final EventSink sink;
    private final long slowSyncNanos;
    private final String walPolicy;

    LsmEvents(EventSink sink, long slowSyncMillis, String walPolicy) {
        this.sink = sink;
        this.slowSyncNanos = slowSyncMillis * 1_000_000L;
        this.walPolicy = walPolicy;
    }

    /** @param run null when the memtable was empty (still a flush, counted in storage.flushes) */
    void flushed(long startNanos, long durNanos, SortedRun run) {
        if (sink.enabled()) {
            sink.emit(Event.of(EventList.FLUSH, startNanos, durNanos, run == null ? 0L : run.bytes,
                    run == null ? 0L : run.entries, run == null ? Collections.emptyList() : names(run.tables)));
        }
    }

    void compacted(long startNanos, long durNanos, List<SortedRun> inputs, SortedRun output) {
        if (sink.enabled()) {
            List<SsTable> in = new ArrayList<>();
            long inBytes = 0;
            for (SortedRun r : inputs) {
                in.addAll(r.tables);
                inBytes += r.bytes;
            }
            sink.emit(Event.of(EventList.COMPACTION, startNanos, durNanos, names(in), inBytes,
                    output == null ? Collections.emptyList() : names(output.tables), output == null ? 0L : output.bytes));
        }
    }

    /** One episode: from the first writer blocked to the last one resuming. */
    void stalled(long startNanos, long durNanos, int writers) {
        if (sink.enabled()) {
            sink.emit(Event.of(EventList.WRITE_STALL, startNanos, durNanos, "stopped", (long) writers));
        }
    }

    /** Every sync is timed; only those at or above the threshold become events. */
    void synced(long startNanos, long durNanos, long bytes, Path wal) {
        if (durNanos >= slowSyncNanos && sink.enabled()) {
            sink.emit(Event.of(EventList.WAL_SYNC, startNanos, durNanos, bytes, wal.getFileName().toString(),
                    walPolicy));
        }
    }

    private static List<String> names(List<SsTable> tables) {
        List<String> out = new ArrayList<>(tables.size());
        for (SsTable t : tables) {
            out.add(t.path.getFileName().toString());
        }
        return out;
    }
}
