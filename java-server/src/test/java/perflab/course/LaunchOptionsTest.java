package perflab.course;

import org.junit.Test;

import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collections;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/** The launcher's flags: defaults, both spellings, and a message naming each bad value (exit status 2). */
public class LaunchOptionsTest {
    @Test
    public void defaults() throws Exception {
        LaunchOptions o = LaunchOptions.parse("--port", "8080");
        assertEquals(8080, o.port);
        assertEquals("127.0.0.1", o.host);
        assertEquals("http://127.0.0.1:8080", o.selfUrl);
        assertEquals(Collections.singletonList("http://127.0.0.1:8080"), o.cluster);
        assertNull(o.dataDir);
        assertNull(o.factory);
        assertEquals(0, o.stage);
        assertEquals(30_000, o.startTimeoutMs);
        assertEquals(30_000, o.stopTimeoutMs);
    }

    @Test
    public void everyFlagInBothSpellings() throws Exception {
        LaunchOptions o = LaunchOptions.parse("--port=8081", "--host", "localhost", "--data-dir", "/tmp/x/../y",
                "--cluster", "http://localhost:8080, http://localhost:8081", "--self-url=http://localhost:8081",
                "--stage", "5", "--start-timeout", "500ms", "--stop-timeout=2m");
        assertEquals(8081, o.port);
        assertEquals("localhost", o.host);
        assertEquals(Paths.get("/tmp/y"), o.dataDir);
        assertEquals(Arrays.asList("http://localhost:8080", "http://localhost:8081"), o.cluster);
        assertEquals("http://localhost:8081", o.selfUrl);
        assertEquals(5, o.stage);
        assertEquals(500, o.startTimeoutMs);
        assertEquals(120_000, o.stopTimeoutMs);
        assertEquals("a.b.C$Factory", LaunchOptions.parse("--port", "1", "--factory", "a.b.C$Factory").factory);
        assertEquals("http://[::1]:9", LaunchOptions.parse("--port", "9", "--host", "::1").selfUrl);
    }

    @Test
    public void helpIsAskedForAnywhere() {
        assertTrue(LaunchOptions.wantsHelp("--port", "1", "--help"));
        assertTrue(LaunchOptions.wantsHelp("-h"));
        assertFalse(LaunchOptions.wantsHelp("--port", "1"));
    }

    @Test
    public void badFlagsAreNamed() {
        fails("--port is required (the port the service listens on)");
        fails("--port: expected an integer, got 'x'", "--port", "x");
        fails("--port: must be between 1 and 65535, got '0'", "--port", "0");
        fails("--port: must be between 1 and 65535, got '70000'", "--port", "70000");
        fails("unknown flag --prot (see --help)", "--prot", "1");
        fails("unexpected argument '8080' (flags are --key value; see --help)", "8080");
        fails("--port needs a value", "--port");
        fails("--port is given twice", "--port", "1", "--port=2");
        fails("--host: expected a host name or IP address, got ''", "--port", "1", "--host", "");
        fails("--data-dir: not a path: '' (empty)", "--port", "1", "--data-dir", "");
        fails("--factory and --stage exclude each other: give the class, or the stage whose factory to use",
                "--port", "1", "--factory", "a.B", "--stage", "2");
        fails("--factory: expected a fully qualified class name, got 'a..B'", "--port", "1", "--factory", "a..B");
        fails("--stage: must be between 1 and 2147483647, got '0'", "--port", "1", "--stage", "0");
        fails("--start-timeout: expected a duration with a unit (500ms, 30s, 2m), got '30'",
                "--port", "1", "--start-timeout", "30");
        fails("--stop-timeout: must be more than 0, got '0s'", "--port", "1", "--stop-timeout", "0s");
    }

    @Test
    public void badUrlsAreNamed() {
        fails("--cluster: 'localhost:8080' is not a node URL like http://127.0.0.1:8080 (not an http:// URL)",
                "--port", "1", "--cluster", "localhost:8080");
        fails("--cluster: 'http://h' is not a node URL like http://127.0.0.1:8080 (no port)",
                "--port", "1", "--cluster", "http://h");
        fails("--cluster: 'http://h:1/v0' is not a node URL like http://127.0.0.1:8080 (a path or query after"
                + " the port)", "--port", "1", "--cluster", "http://h:1/v0");
        fails("--cluster: '' is not a node URL like http://127.0.0.1:8080 (not an http:// URL)",
                "--port", "1", "--cluster", "http://127.0.0.1:1,");
        fails("--cluster: http://h:1 is listed twice", "--port", "1", "--cluster", "http://h:1,http://h:1");
        fails("--self-url http://127.0.0.1:1 is not in --cluster [http://localhost:1, http://localhost:2]"
                + " (write it exactly as in the list)", "--port", "1", "--cluster", "http://localhost:1,http://localhost:2");
        fails("--self-url: its port 2 is not --port 1", "--port", "1", "--self-url", "http://h:2");
    }

    private static void fails(String message, String... args) {
        try {
            LaunchOptions.parse(args);
            fail("accepted " + Arrays.toString(args));
        } catch (LaunchException e) {
            assertEquals(message, e.getMessage());
            assertEquals(2, e.exitStatus);
        }
    }
}
