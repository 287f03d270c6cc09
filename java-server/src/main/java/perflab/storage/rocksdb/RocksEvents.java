package perflab.storage.rocksdb;

import org.rocksdb.AbstractEventListener;
import org.rocksdb.CompactionJobInfo;
import org.rocksdb.FlushJobInfo;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteStallCondition;
import org.rocksdb.WriteStallInfo;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Counts flushes, compactions and stalls from RocksDB's callbacks (rare events, so JNI upcalls are cheap). */
final class RocksEvents extends AbstractEventListener {
    final LongAdder flushes = new LongAdder();
    final LongAdder flushNanos = new LongAdder();
    final LongAdder compactions = new LongAdder();
    final LongAdder compactionMicros = new LongAdder();
    final LongAdder stalls = new LongAdder();
    private final ConcurrentHashMap<Long, Long> flushStart = new ConcurrentHashMap<>();

    RocksEvents() {
        super(EnabledEventCallback.ON_FLUSH_BEGIN, EnabledEventCallback.ON_FLUSH_COMPLETED,
                EnabledEventCallback.ON_COMPACTION_COMPLETED, EnabledEventCallback.ON_STALL_CONDITIONS_CHANGED);
    }

    @Override
    public void onFlushBegin(RocksDB db, FlushJobInfo info) {
        flushStart.put(info.getThreadId(), System.nanoTime());
    }

    @Override
    public void onFlushCompleted(RocksDB db, FlushJobInfo info) {
        flushes.increment();
        Long start = flushStart.remove(info.getThreadId());
        if (start != null) {
            flushNanos.add(System.nanoTime() - start);
        }
    }

    @Override
    public void onCompactionCompleted(RocksDB db, CompactionJobInfo info) {
        compactions.increment();
        compactionMicros.add(info.stats().elapsedMicros());
    }

    @Override
    public void onStallConditionsChanged(WriteStallInfo info) {
        if (info.getCurrentCondition() != WriteStallCondition.NORMAL) {
            stalls.increment();
        }
    }
}
