package perflab.spec;

import perflab.util.Json;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One kind of stdout event line: its name, help and fields (name → unit), in the order they are written.
 * Timed events start with {@code ts_us} (CLOCK_REALTIME epoch microseconds when the thing started) and
 * {@code dur_us}; an event object can only be built with exactly the fields listed here.
 */
public final class EventSpec {
    public final String name;
    public final boolean timed;
    public final String help;
    /** Every field after "event", in output order, with its unit. */
    public final Map<String, String> fields;
    /** The kind-specific fields (after ts_us and dur_us for timed events). */
    public final List<String> ownFields;
    /** {"event":"<name>","ts_us": : the start of a timed event's JSON line. */
    public final String jsonPrefix;
    /** ,"<field>": for each own field, pre-quoted. */
    public final List<String> jsonKeys;

    private EventSpec(String name, boolean timed, String help, String... fieldsAndUnits) {
        this.name = name;
        this.timed = timed;
        this.help = help;
        Map<String, String> f = new LinkedHashMap<>();
        if (timed) {
            f.put("ts_us", "epoch_us");
            f.put("dur_us", "us");
        }
        List<String> own = new ArrayList<>();
        for (int i = 0; i < fieldsAndUnits.length; i += 2) {
            f.put(fieldsAndUnits[i], fieldsAndUnits[i + 1]);
            own.add(fieldsAndUnits[i]);
        }
        this.fields = Collections.unmodifiableMap(f);
        this.ownFields = Collections.unmodifiableList(own);
        this.jsonPrefix = new Json().beginObject().field("event", name).key("ts_us").toString();
        List<String> keys = new ArrayList<>();
        for (String k : own) {
            keys.add("," + new Json().value(k) + ":");
        }
        this.jsonKeys = Collections.unmodifiableList(keys);
    }

    static EventSpec timed(String name, String help, String... fieldsAndUnits) {
        return new EventSpec(name, true, help, fieldsAndUnits);
    }

    static EventSpec untimed(String name, String help, String... fieldsAndUnits) {
        return new EventSpec(name, false, help, fieldsAndUnits);
    }
}
