package perflab.server;

import org.junit.Test;
import perflab.spec.EventList;
import perflab.spec.EventSpec;
import perflab.spec.MetricList;
import perflab.spec.MetricSpec;
import perflab.spec.OptionList;
import perflab.spec.OptionSpec;
import perflab.testing.MiniJson;
import perflab.testing.ServerProcess;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

/** {@code Main --options-json} from a real process: one JSON document that matches the spec lists. */
public class OptionsJsonTest {
    private static final List<String> JVM = Collections.singletonList("-Xmx128m");

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object o) {
        return (List<Map<String, Object>>) o;
    }

    private static Map<String, Object> optionsJson() throws Exception {
        try (ServerProcess p = ServerProcess.server(JVM, "--options-json")) {
            assertEquals("stderr: " + p.stderr(), 0, p.waitFor(30_000));
            List<String> lines = p.stdoutLines();
            assertEquals("one JSON document on one line", 1, lines.size());
            return MiniJson.object(lines.get(0));
        }
    }

    @Test
    public void optionsMatchTheSpecAndTheirDefaultsRoundTrip() throws Exception {
        Map<String, Object> doc = optionsJson();
        assertEquals("perflab-server", doc.get("program"));
        assertEquals(1L, doc.get("format"));
        List<Map<String, Object>> options = list(doc.get("options"));
        assertEquals(OptionList.ALL.size(), options.size());
        Map<String, Object> config;
        try (ServerProcess p = ServerProcess.server(JVM, "--port", "0", "--backend", "memory")) {
            config = p.awaitEvent("config", 30_000);
            p.awaitReady();
            p.terminate();
        }
        for (int i = 0; i < options.size(); i++) {
            Map<String, Object> o = options.get(i);
            OptionSpec s = OptionList.ALL.get(i);
            assertEquals(s.key, o.get("key"));
            for (String field : Arrays.asList("key", "scope", "kind", "unit", "default", "default_text", "min", "max",
                    "bounds_text", "choices", "help")) {
                assertTrue(s.key + " lacks " + field, o.containsKey(field));
            }
            assertEquals(s.scope.label(), o.get("scope"));
            assertEquals(s.kind.label(), o.get("kind"));
            assertEquals(s.help, o.get("help"));
            assertEquals(s.boundsText(), o.get("bounds_text"));
            assertEquals(s.min, o.get("min"));
            assertEquals(s.max, o.get("max"));
            assertEquals(s.choices, o.get("choices"));
            Object def = o.get("default");
            String text = (String) o.get("default_text");
            if (def != null) {
                // the text form parses back to the canonical default, and a server without flags uses it
                assertEquals(s.key, def, s.parse(text));
                if (s != OptionList.BACKEND && s != OptionList.PORT) {
                    assertEquals(s.key, def, config.get(s.key));
                }
            } else if (s.kind == perflab.spec.OptionKind.INT) {
                assertEquals("computed at start: " + s.key, "CPU count", text);
                assertEquals(config.get("cpus"), config.get(s.key));
            } else {
                assertEquals(s.key, "none", text);
                assertNull(s.key, config.get(s.key));
            }
        }
    }

    @Test
    public void boundsTextIsWhatTheServerSaysAfterMustBe() throws Exception {
        Map<String, Object> memtable = null;
        for (Map<String, Object> o : list(optionsJson().get("options"))) {
            if ("memtable-size".equals(o.get("key"))) {
                memtable = o;
            }
        }
        try (ServerProcess p = ServerProcess.server(JVM, "--backend", "memory", "--memtable-size", "1k")) {
            assertEquals(2, p.waitFor(30_000));
            assertEquals("error: --memtable-size: must be " + memtable.get("bounds_text") + ", got '1k'\n", p.stderr());
        }
    }

    @Test
    public void metricsAndEventsMatchTheirLists() throws Exception {
        Map<String, Object> doc = optionsJson();
        List<Map<String, Object>> metrics = list(doc.get("metrics"));
        List<String> names = new ArrayList<>();
        for (Map<String, Object> m : metrics) {
            names.add((String) m.get("name"));
            assertTrue(m.toString(), Arrays.asList("counter", "gauge", "label").contains(m.get("kind")));
            assertTrue(m.toString(), m.get("unit") instanceof String && m.get("help") instanceof String);
        }
        List<String> expected = new ArrayList<>();
        for (MetricSpec m : MetricList.ALL) {
            expected.add(m.name);
        }
        assertEquals(expected, names);
        assertEquals(Boolean.TRUE, metrics.get(names.indexOf("requests.<METHOD>.<STATUS>")).get("pattern"));
        assertEquals(Collections.singletonList("lsm"), metrics.get(names.indexOf("storage.sorted_runs")).get("backends"));
        List<Map<String, Object>> events = list(doc.get("events"));
        assertEquals(EventList.ALL.size(), events.size());
        for (int i = 0; i < events.size(); i++) {
            EventSpec e = EventList.ALL.get(i);
            assertEquals(e.name, events.get(i).get("event"));
            assertEquals(e.timed, events.get(i).get("timed"));
            assertEquals(new ArrayList<>(e.fields.keySet()),
                    new ArrayList<>(MiniJson.object(events.get(i).get("fields")).keySet()));
        }
        Map<String, Object> config = MiniJson.object(events.get(0).get("fields"));
        for (OptionSpec s : OptionList.ALL) {
            assertTrue("the config event lists " + s.key, config.containsKey(s.key));
        }
    }
}
