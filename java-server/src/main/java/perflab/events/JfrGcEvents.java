package perflab.events;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;
import perflab.spec.EventList;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * gc events from an in-process JFR stream: jdk.GCPhasePause gives each pause's start (nanosecond clock,
 * converted to the epoch by JFR) and duration, jdk.GCHeapSummary the heap before and after, and
 * jdk.GarbageCollection, committed when the collection ends, the collector's name and cause. Pauses are
 * held by GC id until that last event arrives. JFR delivers events about once a second, so gc lines lag
 * the pause by up to ~1 s; their timestamps do not.
 */
final class JfrGcEvents implements AutoCloseable {
    /** Collections whose end event never came (should not happen) are forgotten beyond this many. */
    private static final int MAX_PENDING = 64;

    private final EventSink sink;
    private final RecordingStream stream;
    /** Touched only by the stream's thread. */
    private final Map<Long, Pending> pending = new LinkedHashMap<>();
    private volatile CountDownLatch nextFlush = new CountDownLatch(1);

    private static final class Pending {
        long heapBefore = -1;
        long heapAfter = -1;
        final List<Object[]> pauses = new ArrayList<>(2); // {startMicros, durMicros, phase}
    }

    JfrGcEvents(EventSink sink) {
        this.sink = sink;
        RecordingStream s = new RecordingStream();
        try {
            s.enable("jdk.GCPhasePause");
            s.enable("jdk.GCHeapSummary");
            s.enable("jdk.GarbageCollection");
            s.onEvent("jdk.GCPhasePause", this::pause);
            s.onEvent("jdk.GCHeapSummary", this::heap);
            s.onEvent("jdk.GarbageCollection", this::collection);
            s.onFlush(() -> nextFlush.countDown());
            s.startAsync();
        } catch (RuntimeException | Error e) {
            s.close();
            throw e;
        }
        this.stream = s;
    }

    private Pending pending(long gcId) {
        Pending p = pending.get(gcId);
        if (p == null) {
            p = new Pending();
            pending.put(gcId, p);
            if (pending.size() > MAX_PENDING) {
                Iterator<Long> oldest = pending.keySet().iterator();
                oldest.next();
                oldest.remove();
            }
        }
        return p;
    }

    private void pause(RecordedEvent e) {
        pending(e.getLong("gcId")).pauses.add(new Object[]{EventClock.micros(e.getStartTime()),
                e.getDuration().toNanos() / 1000, e.getString("name")});
    }

    private void heap(RecordedEvent e) {
        Pending p = pending(e.getLong("gcId"));
        long used = e.getLong("heapUsed");
        if ("Before GC".equals(e.getString("when"))) {
            p.heapBefore = used;
        } else {
            p.heapAfter = used;
        }
    }

    private void collection(RecordedEvent e) {
        long gcId = e.getLong("gcId");
        Pending p = pending.remove(gcId);
        if (p == null) {
            return; // a collection without a pause (none of the collectors here) is not a pause event
        }
        String collector = e.getString("name");
        String cause = e.getString("cause");
        for (Object[] pause : p.pauses) {
            sink.emit(Event.at(EventList.GC, (Long) pause[0], (Long) pause[1], gcId, collector, cause, pause[2],
                    p.heapBefore, p.heapAfter, "jfr"));
        }
    }

    /**
     * Waits (at most ~1.5 s) for the stream's next flush, which delivers the pauses recorded so far, then
     * stops: closing a JDK 17 stream discards what it has not delivered yet.
     */
    @Override
    public void close() {
        CountDownLatch latch = new CountDownLatch(1);
        nextFlush = latch;
        try {
            latch.await(1500, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stream.close();
    }
}
