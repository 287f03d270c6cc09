package perflab.events;

import perflab.spec.EventSpec;
import perflab.util.Json;

import java.util.Collection;

/** One timed event, built only from its spec's fields; rendered to JSON on the writer thread. */
public final class Event {
    final EventSpec spec;
    final long tsMicros;
    final long durMicros;
    private final Object[] values;

    private Event(EventSpec spec, long tsMicros, long durMicros, Object[] values) {
        if (!spec.timed) {
            throw new IllegalArgumentException(spec.name + " is not a timed event");
        }
        if (values.length != spec.ownFields.size()) {
            throw new IllegalArgumentException(spec.name + " takes " + spec.ownFields + ", got " + values.length
                    + " values");
        }
        this.spec = spec;
        this.tsMicros = tsMicros;
        this.durMicros = durMicros;
        this.values = values;
    }

    /** An event that started when System.nanoTime() read {@code startNanos} and lasted {@code durNanos}. */
    public static Event of(EventSpec spec, long startNanos, long durNanos, Object... values) {
        return new Event(spec, EventClock.epochMicros(startNanos), durNanos / 1000, values);
    }

    /** An event whose times were measured elsewhere (JFR, the GC MXBeans, RocksDB). */
    public static Event at(EventSpec spec, long tsMicros, long durMicros, Object... values) {
        return new Event(spec, tsMicros, durMicros, values);
    }

    public String kind() {
        return spec.name;
    }

    public String toJson() {
        Json j = new Json(new StringBuilder(160)).beginObject()
                .field("event", spec.name)
                .field("ts_us", tsMicros)
                .field("dur_us", durMicros);
        for (int i = 0; i < values.length; i++) {
            j.key(spec.ownFields.get(i));
            Object v = values[i];
            if (v instanceof Collection) {
                j.beginArray();
                for (Object x : (Collection<?>) v) {
                    j.value(x);
                }
                j.endArray();
            } else {
                j.value(v);
            }
        }
        return j.endObject().toString();
    }
}
