package perflab.spec;

import perflab.util.Json;

import java.util.Map;

/** The machine-readable description printed by {@code perflab.server.Main --options-json}. */
public final class SpecJson {
    public static final int FORMAT = 1;

    private SpecJson() {
    }

    public static String render() {
        Json j = new Json(new StringBuilder(16384)).beginObject()
                .field("program", "perflab-server")
                .field("format", FORMAT);
        j.key("options").beginArray();
        for (OptionSpec o : OptionList.ALL) {
            j.beginObject()
                    .field("key", o.key)
                    .field("scope", o.scope.label())
                    .field("kind", o.kind.label())
                    .field("unit", o.kind.unit)
                    .field("default", o.defaultValue)
                    .field("default_text", o.defaultText)
                    .field("min", o.min)
                    .field("max", o.max)
                    .field("bounds_text", o.boundsText());
            j.key("choices");
            if (o.choices == null) {
                j.value((Object) null);
            } else {
                j.beginArray();
                for (String c : o.choices) {
                    j.value(c);
                }
                j.endArray();
            }
            j.field("help", o.help).field("alias", o.alias).endObject();
        }
        j.endArray();
        j.key("metrics").beginArray();
        for (MetricSpec m : MetricList.ALL) {
            j.beginObject()
                    .field("name", m.name)
                    .field("kind", m.kind.label())
                    .field("unit", m.unit)
                    .field("pattern", m.isPattern());
            j.key("backends");
            if (m.backends == null) {
                j.value((Object) null);
            } else {
                j.beginArray();
                for (String b : m.backends) {
                    j.value(b);
                }
                j.endArray();
            }
            j.field("cluster_only", m.clusterOnly).field("help", m.help).endObject();
        }
        j.endArray();
        j.key("events").beginArray();
        for (EventSpec e : EventList.ALL) {
            j.beginObject()
                    .field("event", e.name)
                    .field("timed", e.timed)
                    .field("help", e.help);
            j.key("fields").beginObject();
            for (Map.Entry<String, String> f : e.fields.entrySet()) {
                j.field(f.getKey(), f.getValue());
            }
            j.endObject().endObject();
        }
        j.endArray();
        return j.endObject().toString();
    }
}
