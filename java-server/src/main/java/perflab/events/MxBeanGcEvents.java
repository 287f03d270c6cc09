package perflab.events;

import com.sun.management.GarbageCollectionNotificationInfo;
import com.sun.management.GcInfo;
import perflab.spec.EventList;

import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * gc events from the collectors' MXBean notifications: the fallback when JFR cannot start. GcInfo gives
 * start and end in whole milliseconds on the JVM's management clock, whose origin is neither
 * RuntimeMXBean.getStartTime() (measured: 0.2-260 ms apart, depending on how long VM start-up took) nor
 * now minus getUptime(). The origin is therefore taken from the notifications themselves: a
 * notification arrives after its collection ended, so receipt time minus GcInfo end time is an upper
 * bound of the origin, and the smallest one seen so far is used. Times are millisecond-precise and may
 * be late by the quickest delivery seen. Beans that report concurrent cycles rather than pauses
 * (ZGC/Shenandoah "Cycles", G1 "Concurrent GC") are skipped.
 */
final class MxBeanGcEvents implements AutoCloseable {
    private final EventSink sink;
    /** Epoch milliseconds of the management clock's zero (upper bound, lowered by each notification). */
    private long originMillis = Long.MAX_VALUE; // guarded by this
    private final List<NotificationEmitter> emitters = new ArrayList<>();
    private final NotificationListener listener = this::notified;

    MxBeanGcEvents(EventSink sink) {
        this.sink = sink;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            String name = gc.getName();
            if (name.endsWith("Cycles") || name.contains("Concurrent") || !(gc instanceof NotificationEmitter)) {
                continue;
            }
            NotificationEmitter emitter = (NotificationEmitter) gc;
            emitter.addNotificationListener(listener, n -> GarbageCollectionNotificationInfo
                    .GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType()), null);
            emitters.add(emitter);
        }
    }

    private void notified(Notification n, Object handback) {
        long received = System.currentTimeMillis();
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from(
                (CompositeData) n.getUserData());
        GcInfo gc = info.getGcInfo();
        long origin;
        synchronized (this) {
            originMillis = Math.min(originMillis, received - gc.getEndTime());
            origin = originMillis;
        }
        sink.emit(Event.at(EventList.GC, (origin + gc.getStartTime()) * 1000, gc.getDuration() * 1000,
                gc.getId(), info.getGcName(), info.getGcCause(), info.getGcAction(), used(gc.getMemoryUsageBeforeGc()),
                used(gc.getMemoryUsageAfterGc()), "mxbean"));
    }

    private static long used(Map<String, MemoryUsage> pools) {
        long sum = 0;
        for (MemoryUsage u : pools.values()) {
            sum += u.getUsed();
        }
        return sum;
    }

    @Override
    public void close() {
        for (NotificationEmitter e : emitters) {
            try {
                e.removeNotificationListener(listener);
            } catch (ListenerNotFoundException ignored) {
                // already gone
            }
        }
    }
}
