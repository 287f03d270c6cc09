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
 * start and duration in whole milliseconds since JVM start, so these times are only millisecond-precise.
 * Beans that report concurrent cycles rather than pauses (ZGC/Shenandoah "Cycles", G1 "Concurrent GC")
 * are skipped.
 */
final class MxBeanGcEvents implements AutoCloseable {
    private final EventSink sink;
    private final long vmStartMillis = ManagementFactory.getRuntimeMXBean().getStartTime();
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
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from(
                (CompositeData) n.getUserData());
        GcInfo gc = info.getGcInfo();
        sink.emit(Event.at(EventList.GC, (vmStartMillis + gc.getStartTime()) * 1000, gc.getDuration() * 1000,
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
