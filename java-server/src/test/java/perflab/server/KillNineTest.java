package perflab.server;

import org.junit.Rule;
import org.junit.Test;
import perflab.testing.RawHttp;
import perflab.testing.ServerProcess;
import perflab.testing.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * SIGKILL while clients are writing, then restart: every PUT that was acknowledged must be there.
 * That is the promise of "always"; our log is a shared memory mapping, so "batch" and "none" make the
 * same promise for a killed process (they differ only when the machine itself goes down).
 */
public class KillNineTest {
    @Rule
    public final TempDir temp = new TempDir();

    private static byte[] value(String key) {
        return (key + ":" + key.hashCode()).getBytes(StandardCharsets.UTF_8);
    }

    private void acknowledgedWritesSurviveKill9(String policy) throws Exception {
        Path dir = temp.dir("db-" + policy);
        // no JFR: a JVM killed with -9 leaves its JFR repository in the temp directory
        List<String> server = Arrays.asList("--port", "0", "--data-dir", dir.toString(), "--wal", policy,
                "--memtable-size", "256k", "--mode", "async", "--workers", "4", "--gc-events", "off");
        Map<String, Boolean> acked = new ConcurrentHashMap<>();
        try (ServerProcess p = ServerProcess.server(Arrays.asList("-Xmx256m"), server.toArray(new String[0]))) {
            p.awaitReady();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> clients = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int id = t;
                Thread c = new Thread(() -> {
                    try (RawHttp http = new RawHttp(p.port())) {
                        for (int n = 0; !stop.get(); n++) {
                            String key = "c" + id + "-" + n;
                            if (http.call("PUT", "/v0/entity?id=" + key, value(key)).status == 201) {
                                acked.put(key, Boolean.TRUE);
                            }
                        }
                    } catch (java.io.IOException expected) {
                        // the server died under us
                    }
                });
                c.start();
                clients.add(c);
            }
            long deadline = System.currentTimeMillis() + 20_000;
            while (acked.size() < 3000 && System.currentTimeMillis() < deadline) {
                Thread.sleep(20);
            }
            p.kill9(); // mid-stream: clients are still sending
            stop.set(true);
            for (Thread c : clients) {
                c.join(10_000);
            }
        }
        assertTrue("too few acknowledged writes to mean anything: " + acked.size(), acked.size() >= 1000);
        try (ServerProcess p = ServerProcess.server(Arrays.asList("-Xmx256m"), server.toArray(new String[0]));
             RawHttp http = new RawHttp(p.awaitReady() != null ? p.port() : -1)) {
            int missing = 0;
            for (String key : acked.keySet()) {
                RawHttp.Response r = http.call("GET", "/v0/entity?id=" + key);
                if (r.status != 200) {
                    missing++;
                } else {
                    assertArrayEquals(value(key), r.body);
                }
            }
            assertEquals("acknowledged writes lost after kill -9 with --wal " + policy, 0, missing);
            p.terminate();
        }
    }

    @Test
    public void always() throws Exception {
        acknowledgedWritesSurviveKill9("always");
    }

    @Test
    public void batch() throws Exception {
        acknowledgedWritesSurviveKill9("batch");
    }

    @Test
    public void none() throws Exception {
        acknowledgedWritesSurviveKill9("none");
    }
}
