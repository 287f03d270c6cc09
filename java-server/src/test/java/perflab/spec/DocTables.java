package perflab.spec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The tables docs/contracts/server.md must carry, generated from the spec lists. {@link DocsMatchSpecTest}
 * compares them; {@code main} prints them for pasting after a spec change.
 */
final class DocTables {
    static final String FLAGS_HEADER = "| flag | default | meaning |";
    static final String EVENTS_HEADER = "| event | fields after `ts_us`, `dur_us` (unit) | meaning |";
    static final String METRICS_HEADER = "| metric | kind | unit | backends | meaning |";

    private DocTables() {
    }

    static List<String> flags() {
        List<String> rows = new ArrayList<>();
        rows.add(FLAGS_HEADER);
        rows.add("| --- | --- | --- |");
        for (OptionSpec o : OptionList.ALL) {
            rows.add("| `--" + o.key + "` | `" + o.defaultText + "` | " + o.help + " |");
        }
        return rows;
    }

    static List<String> events() {
        List<String> rows = new ArrayList<>();
        rows.add(EVENTS_HEADER);
        rows.add("| --- | --- | --- |");
        for (EventSpec e : EventList.ALL) {
            if (!e.timed) {
                continue;
            }
            List<String> fields = new ArrayList<>();
            for (Map.Entry<String, String> f : e.fields.entrySet()) {
                if (e.ownFields.contains(f.getKey())) {
                    fields.add("`" + f.getKey() + "` (" + f.getValue() + ")");
                }
            }
            rows.add("| `" + e.name + "` | " + (fields.isEmpty() ? "–" : String.join(", ", fields)) + " | "
                    + e.help + " |");
        }
        return rows;
    }

    static List<String> metrics() {
        List<String> rows = new ArrayList<>();
        rows.add(METRICS_HEADER);
        rows.add("| --- | --- | --- | --- | --- |");
        for (MetricSpec m : MetricList.ALL) {
            rows.add("| `" + m.name + "` | " + m.kind.label() + " | " + m.unit + " | "
                    + (m.backends == null ? "all" : String.join(", ", m.backends))
                    + (m.clusterOnly ? ", with --cluster" : "") + " | " + m.help + " |");
        }
        return rows;
    }

    public static void main(String[] args) {
        for (List<String> table : java.util.Arrays.asList(flags(), events(), metrics())) {
            System.out.println(String.join("\n", table));
            System.out.println();
        }
    }
}
