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

    /**
     * The JSON line. Built with plain appends and the spec's pre-quoted keys: events are rare, so this
     * runs interpreted most of the time, where a per-character quoting loop over every key was the
     * writer thread's main cost.
     */
    public String toJson() {
        StringBuilder sb = new StringBuilder(96 + 24 * values.length);
        sb.append(spec.jsonPrefix).append(tsMicros).append(",\"dur_us\":").append(durMicros);
        for (int i = 0; i < values.length; i++) {
            sb.append(spec.jsonKeys.get(i));
            Object v = values[i];
            if (v instanceof Long || v instanceof Integer) {
                sb.append(((Number) v).longValue());
            } else if (v instanceof Collection) {
                Json list = new Json().beginArray();
                for (Object x : (Collection<?>) v) {
                    list.value(x);
                }
                sb.append(list.endArray());
            } else {
                sb.append(new Json().value(v));
            }
        }
        return sb.append('}').toString();
    }
}
