package perflab.server;

import org.junit.Rule;
import org.junit.Test;
import perflab.testing.MiniJson;
import perflab.testing.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.Assert.assertEquals;
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
        assertEquals("--queue: must be > 0, got -1", error("--queue", "-1"));
        assertEquals("--port: must be <= 65535, got 70000", error("--port", "70000", "--backend", "memory"));
        assertEquals("--mode: expected one of sync, async, virtual, got 'fast'", error("--mode", "fast"));
        assertEquals("--queue-kind: expected one of array, linked, lifo, got 'stack'", error("--queue-kind=stack"));
        assertTrue(error("--memtable-size", "4x").startsWith("--memtable-size: expected a size"));
        assertEquals("--wal: expected one of none, batch, always, got 'sometimes'", error("--wal", "sometimes"));
        assertEquals("--workers: expected an integer, got 'many'", error("--workers", "many"));
        assertEquals("--data-dir: required for --backend lsm", error());
        assertEquals("--port: missing value", error("--port"));
        assertTrue(error("--bogus", "1").startsWith("unknown flag --bogus"));
        assertEquals("--queue: given twice", error("--queue", "1", "--queue", "2"));
        assertTrue(error("--debug-delay", "soon").startsWith("--debug-delay: expected a duration"));
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
    public void unknownKeysInThePropertiesFileAreRejected() throws Exception {
        Path props = temp.dir("bad.properties");
        Files.write(props, "backend=memory\nthreads=4\n".getBytes(StandardCharsets.UTF_8));
        String e = error("--config", props.toString());
        assertTrue(e, e.startsWith("--config: " + props + ": unknown key 'threads'"));
        assertTrue(error("--config", temp.dir("missing.properties").toString()).startsWith("--config: cannot read"));
    }
}
