package perflab.tools;

import org.junit.Test;
import perflab.testing.MiniJson;
import perflab.testing.ServerProcess;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/** The routing the lab reads from outside a server: the same vectors as ClusterHashTest. */
public class OwnersTest {
    private static final String LIST = "http://127.0.0.1:8080,http://127.0.0.1:8081,http://127.0.0.1:8082";

    @Test
    public void replicasAreTheRendezvousOrderOwnerFirst() {
        assertEquals(Arrays.asList("http://127.0.0.1:8082", "http://127.0.0.1:8081", "http://127.0.0.1:8080"),
                Owners.replicas(LIST, "key0".getBytes(StandardCharsets.UTF_8), 3));
        assertEquals(Collections.singletonList("http://127.0.0.1:8080"),
                Owners.replicas(LIST, "key42".getBytes(StandardCharsets.UTF_8), 1));
        try {
            Owners.replicas(LIST, new byte[]{1}, 4);
            fail();
        } catch (IllegalArgumentException e) {
            assertEquals("--from: must be between 1 and the cluster size 3, got 4", e.getMessage());
        }
        try {
            Owners.replicas("http://a:1,http://a:1", new byte[]{1}, 1);
            fail();
        } catch (IllegalArgumentException e) {
            assertEquals("--cluster: duplicate URL http://a:1", e.getMessage());
        }
    }

    @Test
    public void countsPerNodeFromTheCommandLine() throws Exception {
        try (ServerProcess p = ServerProcess.start(ServerProcess.javaHome(), Collections.singletonList("-Xmx64m"),
                "perflab.tools.Owners", "--cluster", LIST, "--keys", "300000")) {
            assertEquals(p.stderr(), 0, p.waitFor(60_000));
            Map<String, Object> doc = MiniJson.object(p.stdoutLines().get(0));
            Map<String, Object> nodes = MiniJson.object(doc.get("nodes"));
            // the numbers the Python reference gives (docs/contracts/cluster.md section 7)
            assertEquals(99_971L, nodes.get("http://127.0.0.1:8080"));
            assertEquals(99_841L, nodes.get("http://127.0.0.1:8081"));
            assertEquals(100_188L, nodes.get("http://127.0.0.1:8082"));
            assertEquals(1L, doc.get("from"));
            assertEquals("key", doc.get("key_prefix"));
        }
        // from = 2 counts each key on both of its replicas
        Map<String, Object> two = MiniJson.object(MiniJson.object(Owners.count(LIST, 2, 3000, "key")).get("nodes"));
        long copies = 0;
        for (Object v : two.values()) {
            copies += MiniJson.number(v);
        }
        assertEquals(6000L, copies);
        try (ServerProcess p = ServerProcess.start(ServerProcess.javaHome(), Collections.singletonList("-Xmx64m"),
                "perflab.tools.Owners", "--cluster", LIST, "--from", "0", "--keys", "1")) {
            assertEquals(2, p.waitFor(60_000));
            assertTrue(p.stderr(), p.stderr().startsWith("error: --from: must be between 1 and the cluster size 3"));
        }
    }
}
