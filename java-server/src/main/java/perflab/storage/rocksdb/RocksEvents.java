package perflab.storage.rocksdb;

import org.rocksdb.AbstractEventListener;
import org.rocksdb.CompactionJobInfo;
import org.rocksdb.CompactionJobStats;
import org.rocksdb.FlushJobInfo;
import org.rocksdb.RocksDB;
import org.rocksdb.TableProperties;
import org.rocksdb.WriteStallCondition;
import org.rocksdb.WriteStallInfo;
import perflab.events.Event;
import perflab.events.EventSink;
import perflab.spec.EventList;

import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts flushes, compactions and stalls from RocksDB's callbacks and turns them into events (rare, so
 * the JNI upcalls are cheap).
 */
final class RocksEvents extends AbstractEventListener {
    final LongAdder flushes = new LongAdder();
    final LongAdder flushNanos = new LongAdder();
    final LongAdder compactions = new LongAdder();
    final LongAdder compactionMicros = new LongAdder();
    final LongAdder stalls = new LongAdder();
    private final EventSink sink;
    private final ConcurrentHashMap<Long, Long> flushStart = new ConcurrentHashMap<>();
    /** The current stall episode (guarded by this): its start (0 = none) and worst condition. */
    private long stallStart;
    private WriteStallCondition stallWorst;

    RocksEvents(EventSink sink) {
        super(EnabledEventCallback.ON_FLUSH_BEGIN, EnabledEventCallback.ON_FLUSH_COMPLETED,
                EnabledEventCallback.ON_COMPACTION_COMPLETED, EnabledEventCallback.ON_STALL_CONDITIONS_CHANGED);
        this.sink = sink;
    }

    @Override
    public void onFlushBegin(RocksDB db, FlushJobInfo info) {
        flushStart.put(info.getThreadId(), System.nanoTime());
    }

    @Override
    public void onFlushCompleted(RocksDB db, FlushJobInfo info) {
        long end = System.nanoTime();
        flushes.increment();
        Long start = flushStart.remove(info.getThreadId());
        if (start != null) {
            flushNanos.add(end - start);
        }
        if (sink.enabled()) {
            TableProperties props = info.getTableProperties();
            String path = info.getFilePath();
            long begin = start != null ? start : end;
            sink.emit(Event.of(EventList.FLUSH, begin, end - begin, new File(path).length(),
                    props == null ? 0L : props.getNumEntries(), Collections.singletonList(new File(path).getName())));
        }
    }

    @Override
    public void onCompactionCompleted(RocksDB db, CompactionJobInfo info) {
        long end = System.nanoTime();
        CompactionJobStats stats = info.stats();
        long micros = stats.elapsedMicros();
        compactions.increment();
        compactionMicros.add(micros);
        if (sink.enabled()) {
            sink.emit(Event.of(EventList.COMPACTION, end - micros * 1000, micros * 1000, names(info.inputFiles()),
                    stats.totalInputBytes(), names(info.outputFiles()), stats.totalOutputBytes()));
        }
    }

    @Override
    public void onStallConditionsChanged(WriteStallInfo info) {
        long now = System.nanoTime();
        WriteStallCondition current = info.getCurrentCondition();
        if (current != WriteStallCondition.NORMAL) {
            stalls.increment();
        }
        synchronized (this) {
            if (current != WriteStallCondition.NORMAL) {
                if (stallStart == 0) {
                    stallStart = now;
                    stallWorst = current;
                } else if (current == WriteStallCondition.STOPPED) {
                    stallWorst = current;
                }
            } else if (stallStart != 0) {
                if (sink.enabled()) {
                    sink.emit(Event.of(EventList.WRITE_STALL, stallStart, now - stallStart,
                            stallWorst.name().toLowerCase(Locale.ROOT), null));
                }
                stallStart = 0;
            }
        }
    }

    private static List<String> names(List<String> paths) {
        List<String> out = new ArrayList<>(paths.size());
        for (String p : paths) {
            out.add(new File(p).getName());
        }
        return out;
    }
}
