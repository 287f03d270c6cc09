package perflab.server;

import org.junit.Rule;
import org.junit.Test;
import perflab.spec.HelpText;
import perflab.spec.OptionKind;
import perflab.spec.OptionList;
import perflab.spec.OptionScope;
import perflab.spec.OptionSpec;
import perflab.storage.InvalidOptionException;
import perflab.storage.StorageFactory;
import perflab.storage.StorageOptions;
import perflab.testing.MiniJson;
import perflab.testing.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

public class SettingsTest {
    @Rule
    public final TempDir temp = new TempDir();

    private static String error(String... args) {
        try {
            Settings.parse(args);
        } catch (ConfigException e) {
            return e.getMessage();
        }
        fail("accepted " + String.join(" ", args));
        return null;
    }

    @Test
    public void badValuesNameTheFlag() {
        // the wording promised in the docs, spelled out so a generator bug cannot hide behind itself
        assertEquals("--memtable-size: must be between 64k and 1g, got '1k'", error("--memtable-size", "1k"));
        assertEquals("--mode: expected one of sync, async, virtual, got 'x'", error("--mode", "x"));
        assertEquals("--queue: expected an integer, got 'abc'", error("--queue", "abc"));
        assertEquals("--queue: must be between 1 and 16777216, got '-1'", error("--queue", "-1"));
        assertEquals("--port: must be between 0 and 65535, got '70000'", error("--port", "70000", "--backend", "memory"));
        assertEquals("--queue-kind: expected one of array, linked, lifo, got 'stack'", error("--queue-kind=stack"));
        assertEquals("--memtable-size: expected a size like 4m, 512k or 1048576, got '4x'", error("--memtable-size", "4x"));
        assertEquals("--wal: expected one of none, batch, always, got 'sometimes'", error("--wal", "sometimes"));
        assertEquals("--wal-batch-delay: must be between 1ms and 60s, got '0'", error("--wal-batch-delay", "0"));
        assertEquals("--debug-delay: expected a duration like 5ms or 2s, got 'soon'", error("--debug-delay", "soon"));
        assertEquals("--debug-delay: expected whole milliseconds, got '500us'", error("--debug-delay", "500us"));
        assertEquals("--data-dir: required for --backend lsm", error());
        assertEquals("--port: missing value", error("--port"));
        assertTrue(error("--bogus", "1").startsWith("unknown flag --bogus"));
        assertEquals("--queue: given twice", error("--queue", "1", "--queue", "2"));
        assertEquals("--host: expected a non-empty value, got ' '", error("--host", " ", "--backend", "memory"));
    }

    /** A value inside the bounds that differs from the default, as text, for each kind. */
    private String nonDefaultText(OptionSpec s) throws Exception {
        switch (s.kind) {
            case INT:
            case SIZE:
            case DURATION:
                long v = s.max;
                return s.format(v);
            case ENUM:
                for (String c : s.choices) {
                    if (!c.equals(s.defaultValue) && !c.equals("virtual")) { // virtual needs JDK 21 only at start
                        return c;
                    }
                }
                throw new AssertionError(s + " has a single choice");
            case STRING:
                // a cluster of this node (at the largest port, the one this test gives --port) and another
                if (s == OptionList.CLUSTER) {
                    return "http://localhost:" + OptionList.PORT.max + ",http://127.0.0.1:2";
                }
                if (s == OptionList.SELF_URL) {
                    return "http://localhost:" + OptionList.PORT.max;
                }
                return "localhost";
            default:
                if (s == OptionList.CONFIG) {
                    Path p = temp.dir("empty.properties");
                    Files.write(p, new byte[0]);
                    return p.toString();
                }
                return temp.dir(s.key).toString();
        }
    }

    @Test
    public void everyOptionIsAcceptedAsAFlagAndReportedInTheConfigLine() throws Exception {
        List<String> args = new ArrayList<>();
        Map<String, Object> expected = new HashMap<>();
        for (OptionSpec s : OptionList.ALL) {
            String text = nonDefaultText(s);
            args.add("--" + s.key);
            args.add(text);
            Object canonical = s.parse(text);
            if (s.kind == OptionKind.PATH) {
                canonical = Path.of((String) canonical).toAbsolutePath().toString();
            }
            assertNotEquals(s + " must differ from its default in this test", s.effectiveDefault(), canonical);
            expected.put(s.key, canonical);
        }
        Map<String, Object> line = MiniJson.object(Settings.parse(args.toArray(new String[0])).toJson());
        for (OptionSpec s : OptionList.ALL) {
            assertEquals(s.key, expected.get(s.key), line.get(s.key));
        }
    }

    @Test
    public void everyOptionIsAcceptedInThePropertiesFile() throws Exception {
        StringBuilder props = new StringBuilder();
        Map<String, Object> expected = new HashMap<>();
        for (OptionSpec s : OptionList.ALL) {
            if (s == OptionList.CONFIG) {
                continue; // a properties file cannot name another one
            }
            String text = nonDefaultText(s);
            props.append(s.key).append('=').append(text).append('\n');
            Object canonical = s.parse(text);
            expected.put(s.key, s.kind == OptionKind.PATH ? Path.of((String) canonical).toAbsolutePath().toString()
                    : canonical);
        }
        Path file = temp.dir("all.properties");
        Files.write(file, props.toString().getBytes(StandardCharsets.UTF_8));
        Map<String, Object> line = MiniJson.object(Settings.parse(new String[]{"--config", file.toString()}).toJson());
        for (Map.Entry<String, Object> e : expected.entrySet()) {
            assertEquals(e.getKey(), e.getValue(), line.get(e.getKey()));
        }
        assertEquals(file.toAbsolutePath().toString(), line.get("config"));
    }

    @Test
    public void theConfigLineCarriesEveryDefaultInCanonicalUnits() throws Exception {
        Map<String, Object> line = MiniJson.object(Settings.parse(new String[]{"--backend", "memory"}).toJson());
        for (OptionSpec s : OptionList.ALL) {
            assertTrue("config line lacks " + s.key, line.containsKey(s.key));
            Object expected = s == OptionList.BACKEND ? "memory" : s.effectiveDefault();
            assertEquals(s.key, expected, line.get(s.key));
        }
        assertEquals(4L << 20, line.get("memtable-size"));
        assertEquals(5L, line.get("wal-batch-delay"));
        assertEquals(0L, line.get("debug-delay"));
        assertEquals((long) Runtime.getRuntime().availableProcessors(), line.get("selectors"));
        for (String extra : new String[]{"java_version", "one_nio_native", "cpus", "heap_max"}) {
            assertTrue(extra, line.containsKey(extra));
        }
    }

    /** Each bound and choice violation, through both parsers, gives the message built from the spec. */
    @Test
    public void boundViolationsGiveTheSpecMessageInTheServerAndInStorageFactory() throws Exception {
        int checked = 0;
        for (OptionSpec s : OptionList.ALL) {
            List<String> bad = new ArrayList<>();
            List<String> expected = new ArrayList<>();
            if (s.kind.numeric()) {
                for (long v : new long[]{s.min - 1, s.max + 1}) {
                    String text = s.format(v);
                    bad.add(text);
                    expected.add("must be " + s.boundsText() + ", got '" + text + "'");
                }
                bad.add("abc");
                expected.add(s.kind == OptionKind.INT ? "expected an integer, got 'abc'"
                        : s.kind == OptionKind.SIZE ? "expected a size like 4m, 512k or 1048576, got 'abc'"
                        : "expected a duration like 5ms or 2s, got 'abc'");
            } else if (s.kind == OptionKind.ENUM) {
                bad.add("nope");
                expected.add("expected one of " + String.join(", ", s.choices) + ", got 'nope'");
            } else {
                continue;
            }
            for (int i = 0; i < bad.size(); i++) {
                assertEquals("--" + s.key + ": " + expected.get(i), error("--" + s.key, bad.get(i)));
                if (s.scope == OptionScope.STORAGE) {
                    try {
                        StorageFactory.open("memory", null, Collections.singletonMap(s.key, bad.get(i))).close();
                        fail("StorageFactory accepted " + s.key + "=" + bad.get(i));
                    } catch (InvalidOptionException e) {
                        assertEquals(s.key + ": " + expected.get(i), e.getMessage());
                    }
                }
                checked++;
            }
        }
        assertTrue("checked " + checked, checked > 40);
    }

    @Test
    public void helpListsEveryOptionWithItsDefault() {
        String help = HelpText.render();
        String words = help.replaceAll("\\s+", " "); // help text is wrapped
        for (OptionSpec s : OptionList.ALL) {
            assertTrue("--help lacks --" + s.key, help.contains("\n  --" + s.key + " " + s.metavar()));
            assertTrue("--help lacks the help of " + s.key, words.contains(s.help + " (default " + s.defaultText
                    + (s.boundsText() == null ? ")" : "; " + s.boundsText() + ")")));
        }
    }

    @Test
    public void storageOptionsSkipServerKeysAndRejectUnknownOnes() {
        Map<String, String> m = new HashMap<>();
        m.put("memtable-size", "8m");
        m.put("mode", "async"); // a server key: ignored here
        StorageOptions o = StorageOptions.parse(m, null);
        assertEquals(8L << 20, o.memtableSize);
        assertEquals(StorageOptions.KEYS, new ArrayList<>(o.describe().keySet()));
        try {
            StorageOptions.parse(Collections.singletonMap("threads", "4"), null);
            fail();
        } catch (InvalidOptionException e) {
            assertEquals("threads", e.key());
            assertTrue(e.getMessage(), e.detail().startsWith("unknown storage option (known: memtable-size, "));
        }
        assertNotNull(StorageOptions.defaults());
    }

    @Test
    public void flagsOverrideThePropertiesFileAndTheConfigLineShowsTheResult() throws Exception {
        Path props = temp.dir("server.properties");
        Files.write(props, "backend=memory\nqueue=77\nmemtable-size=8m\nwal=always\n".getBytes(StandardCharsets.UTF_8));
        Settings s = Settings.parse(new String[]{"--config", props.toString(), "--queue", "5", "--mode", "async",
                "--wal-batch-delay", "2s", "--debug-delay", "3ms"});
        Map<String, Object> line = MiniJson.object(s.toJson());
        assertEquals("config", line.get("event"));
        assertEquals("memory", line.get("backend"));
        assertEquals(5L, line.get("queue"));
        assertEquals("async", line.get("mode"));
        assertEquals(8L << 20, line.get("memtable-size"));
        assertEquals("always", line.get("wal"));
        assertEquals(2000L, line.get("wal-batch-delay"));
        assertEquals(3L, line.get("debug-delay"));
        assertEquals("127.0.0.1", line.get("host"));
        assertEquals(8080L, line.get("port"));
    }

    @Test
    public void clusterFlagsAreCheckedTogether() throws Exception {
        String two = "http://127.0.0.1:8080,http://127.0.0.1:8081";
        assertEquals("--self-url: only meaningful with --cluster",
                error("--backend", "memory", "--self-url", "http://127.0.0.1:8080"));
        assertEquals("--self-url: required with --cluster (this node's URL in that list)",
                error("--backend", "memory", "--cluster", two));
        assertEquals("--cluster: duplicate URL http://127.0.0.1:8080", error("--backend", "memory", "--cluster",
                two + ",http://127.0.0.1:8080/", "--self", "http://127.0.0.1:8080"));
        assertEquals("--cluster: 'http://127.0.0.1' is not of the form http://host:port", error("--backend", "memory",
                "--cluster", "http://127.0.0.1", "--self", "http://127.0.0.1"));
        assertEquals("--self-url: http://127.0.0.1:9 is not in --cluster (" + two + ")",
                error("--backend", "memory", "--cluster", two, "--self", "http://127.0.0.1:9"));
        assertEquals("--port: 8080 differs from the port of --self-url http://127.0.0.1:8081",
                error("--backend", "memory", "--cluster", two, "--self", "http://127.0.0.1:8081"));
        assertEquals("--port: 0 differs from the port of --self-url http://127.0.0.1:8080 (a cluster node needs the"
                + " fixed port the others call it at)", error("--backend", "memory", "--port", "0", "--cluster", two,
                "--self", "http://127.0.0.1:8080"));
        assertEquals("--self-url: given twice", error("--backend", "memory", "--cluster", two, "--self",
                "http://127.0.0.1:8080", "--self-url", "http://127.0.0.1:8080"));
        assertEquals("--cluster-timeout: must be between 1ms and 60s, got '0'", error("--cluster-timeout", "0"));

        // --self is the name for --self-url; the key (config line, properties, Python) is self-url
        Settings s = Settings.parse(new String[]{"--backend", "memory", "--cluster", two + "/", "--self=http://127.0.0.1:8080"});
        assertEquals(0, s.cluster.self());
        assertEquals(2, s.cluster.size());
        assertEquals(1000L, s.clusterTimeoutMillis);
        Map<String, Object> line = MiniJson.object(s.toJson());
        assertEquals("http://127.0.0.1:8080", line.get("self-url"));
        assertEquals(two + "/", line.get("cluster"));
        Path props = temp.dir("cluster.properties");
        Files.write(props, ("backend=memory\nport=8081\ncluster=" + two + "\nself=http://127.0.0.1:8081\n")
                .getBytes(StandardCharsets.UTF_8));
        assertEquals(1, Settings.parse(new String[]{"--config", props.toString()}).cluster.self());
        // a single node has no cluster at all
        assertEquals(null, Settings.parse(new String[]{"--backend", "memory"}).cluster);
        assertTrue(OptionList.SELF_URL.help.contains("--" + OptionList.SELF_URL.alias));
    }

    @Test
    public void unknownKeysInThePropertiesFileAreRejected() throws Exception {
        Path props = temp.dir("bad.properties");
        Files.write(props, "backend=memory\nthreads=4\n".getBytes(StandardCharsets.UTF_8));
        String e = error("--config", props.toString());
        assertTrue(e, e.startsWith("--config: " + props + ": unknown key 'threads'"));
        assertTrue(error("--config", temp.dir("missing.properties").toString()).startsWith("--config: cannot read"));
    }
}
