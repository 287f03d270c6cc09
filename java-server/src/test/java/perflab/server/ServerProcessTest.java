package perflab.server;

import org.junit.Assume;
import org.junit.Rule;
import org.junit.Test;
import perflab.spec.EventList;
import perflab.spec.EventSpec;
import perflab.testing.MiniJson;
import perflab.testing.RawHttp;
import perflab.testing.ServerProcess;
import perflab.testing.TempDir;

import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

/** The server as the lab runs it: a separate JVM, its stdout protocol, exit codes and error messages. */
public class ServerProcessTest {
    @Rule
    public final TempDir temp = new TempDir();

    private static final List<String> JVM = Collections.singletonList("-Xmx256m");

    private static int count(Path dir, String glob) throws Exception {
        int n = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, glob)) {
            for (Path ignored : ds) {
                n++;
            }
        }
        return n;
    }

    @Test
    public void stdoutCarriesConfigReadyAndStoppedAndSigtermFlushes() throws Exception {
        Path dir = temp.dir("db");
        try (ServerProcess p = ServerProcess.server(JVM, "--port", "0", "--data-dir", dir.toString(), "--wal", "none")) {
            Map<String, Object> config = p.awaitEvent("config", 30_000);
            assertEquals("lsm", config.get("backend"));
            assertEquals(0L, config.get("port"));
            assertEquals(dir.toAbsolutePath().toString(), config.get("data-dir"));
            assertEquals("none", config.get("wal"));
            Map<String, Object> ready = p.awaitReady();
            assertEquals("127.0.0.1", ready.get("host"));
            assertTrue(p.port() > 0);
            assertEquals(p.pid(), MiniJson.number(ready.get("pid")));
            assertEquals(System.getProperty("java.version"), ready.get("java_version"));
            try (RawHttp http = new RawHttp(p.port())) {
                for (int i = 0; i < 100; i++) {
                    assertEquals(201, http.call("PUT", "/v0/entity?id=k" + i, ("v" + i).getBytes(StandardCharsets.UTF_8)).status);
                }
            }
            int status = p.terminate();
            assertEquals("a graceful stop exits 0; stderr: " + p.stderr() + " stdout: " + p.stdoutLines(), 0, status);
            Map<String, Object> stopped = p.awaitEvent("stopped", 10_000);
            assertEquals(Boolean.TRUE, stopped.get("flushed"));
            assertTrue(MiniJson.number(stopped.get("requests")) >= 100);
            List<String> lines = p.stdoutLines();
            assertEquals("config", MiniJson.object(lines.get(0)).get("event"));
            assertEquals("stopped", MiniJson.object(lines.get(lines.size() - 1)).get("event"));
            int flushes = 0;
            for (String line : lines.subList(1, lines.size() - 1)) { // ready, then timed events (JSON only)
                Map<String, Object> ev = MiniJson.object(line);
                EventSpec spec = EventList.byName((String) ev.get("event"));
                assertNotNull("unknown event line " + line, spec);
                assertTrue(line, spec.timed || spec == EventList.READY);
                flushes += spec == EventList.FLUSH ? 1 : 0;
            }
            assertTrue("the SIGTERM flush has its event before the stopped line: " + lines, flushes >= 1);
        }
        assertEquals("graceful stop leaves no log to replay", 0, count(dir, "*.wal"));
        assertTrue(count(dir, "*.sst") >= 1);
        try (ServerProcess p = ServerProcess.server(JVM, "--port", "0", "--data-dir", dir.toString())) {
            p.awaitReady();
            try (RawHttp http = new RawHttp(p.port())) {
                assertEquals("v42", http.call("GET", "/v0/entity?id=k42").text());
            }
            p.terminate();
        }
    }

    private static void assertFails(int status, String stderr, String... args) throws Exception {
        try (ServerProcess p = ServerProcess.server(JVM, args)) {
            assertEquals("stderr: " + p.stderr(), status, p.waitFor(30_000));
            assertTrue("stderr was: " + p.stderr(), p.stderr().contains(stderr));
            if (status == 2) {
                assertEquals("nothing on stdout for a bad flag", Collections.emptyList(), p.stdoutLines());
            }
        }
    }

    @Test
    public void badFlagsExitWithStatus2NamingTheFlag() throws Exception {
        assertFails(2, "error: --queue: must be between 1 and 16777216, got '-1'", "--queue", "-1", "--backend", "memory");
        assertFails(2, "error: unknown flag --frobnicate", "--frobnicate", "1");
        assertFails(2, "error: --data-dir: required for --backend rocksdb", "--backend", "rocksdb");
    }

    @Test
    public void aBusyPortIsNamed() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            assertFails(1, "error: port " + port + " on 127.0.0.1 is already in use",
                    "--backend", "memory", "--port", Integer.toString(port));
        }
    }

    @Test
    public void anUnusableDataDirectoryIsNamed() throws Exception {
        Path file = temp.dir("a-file");
        Files.write(file, new byte[]{1});
        assertFails(1, "error: cannot create data directory " + file.resolve("db"),
                "--port", "0", "--data-dir", file.resolve("db").toString());
    }

    @Test
    public void aLockedDataDirectoryIsNamed() throws Exception {
        Path dir = temp.dir("db");
        try (ServerProcess first = ServerProcess.server(JVM, "--port", "0", "--data-dir", dir.toString())) {
            first.awaitReady();
            assertFails(1, "is locked by another process (lock file " + dir.resolve("perflab.lock") + ")",
                    "--port", "0", "--data-dir", dir.toString());
            first.terminate();
        }
    }

    @Test
    public void aCorruptedSstableRefusesToStartNamingTheFile() throws Exception {
        Path dir = temp.dir("db");
        perflab.tools.Prefill.run(dir, "lsm", 20_000, 50, 1, "key");
        Path table;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.sst")) {
            table = ds.iterator().next();
        }
        try (RandomAccessFile f = new RandomAccessFile(table.toFile(), "rw")) {
            f.seek(f.length() - 20); // inside the footer
            f.write(0x55);
        }
        assertFails(1, "error: corrupted SSTable " + table + ": ", "--port", "0", "--data-dir", dir.toString());
        assertTrue("the corrupted file is left for inspection", Files.exists(table));
    }

    @Test
    public void virtualModeExplainsItNeedsJdk21() throws Exception {
        Assume.assumeTrue(Runtime.version().feature() < 21);
        assertFails(2, "error: --mode virtual needs JDK 21+, this is " + System.getProperty("java.version"),
                "--mode", "virtual", "--backend", "memory");
    }

    @Test
    public void virtualModeRunsOnANewerJdk() throws Exception {
        Path jdk = Paths.get(System.getProperty("perflab.test.jdk21", "/usr/lib/jvm/temurin-25-jdk-amd64"));
        Assume.assumeTrue("no JDK 21+ at " + jdk, Files.isExecutable(jdk.resolve("bin/java")));
        try (ServerProcess p = ServerProcess.start(jdk, JVM, "perflab.server.Main", "--port", "0", "--backend",
                "memory", "--mode", "virtual")) {
            p.awaitReady();
            try (RawHttp http = new RawHttp(p.port())) {
                assertEquals(201, http.call("PUT", "/v0/entity?id=v", new byte[]{7}).status);
                assertEquals(200, http.call("GET", "/v0/entity?id=v").status);
                Map<String, Object> stats = MiniJson.object(http.call("GET", "/v0/stats").text());
                assertEquals("virtual", MiniJson.object(stats.get("executor")).get("mode"));
            }
            p.terminate();
        }
    }
}
