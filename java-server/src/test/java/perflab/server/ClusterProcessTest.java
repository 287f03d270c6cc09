package perflab.server;

import org.junit.Rule;
import org.junit.Test;
import perflab.cluster.Topology;
import perflab.events.EventClock;
import perflab.testing.FreePorts;
import perflab.testing.MiniJson;
import perflab.testing.RawHttp;
import perflab.testing.ServerProcess;
import perflab.testing.TempDir;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
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
 * Cluster nodes as separate server processes, killed with SIGKILL and started again on the same port and
 * data directory: acknowledged writes survive on every node that acknowledged them (--wal always), and
 * updates a killed node missed are outvoted by their timestamps once it is back.
 */
public class ClusterProcessTest {
    @Rule
    public final TempDir temp = new TempDir();

    private final int[] ports;
    private final String list;
    private final String digest;

    public ClusterProcessTest() throws Exception {
        ports = FreePorts.pick(2);
        list = FreePorts.clusterList(ports);
        digest = Topology.parse(list, null).digest();
    }

    private String url(int i) {
        return "http://127.0.0.1:" + ports[i];
    }

    private ServerProcess node(int i) throws Exception {
        // no JFR: a JVM killed with -9 leaves its JFR repository in the temp directory
        return ServerProcess.server(Arrays.asList("-Xmx128m"), "--port", Integer.toString(ports[i]), "--cluster",
                list, "--self", url(i), "--data-dir", temp.dir("node" + i).toString(), "--wal", "always",
                "--mode", "async", "--workers", "4", "--gc-events", "off", "--cluster-timeout", "10s",
                "--memtable-size", "256k");
    }

    private static byte[] value(String key) {
        return (key + ":" + key.hashCode()).getBytes(StandardCharsets.UTF_8);
    }

    /** The node's own copy, read with an internal request (which is never passed on). */
    private RawHttp.Response local(RawHttp http, String key) throws Exception {
        return http.call("GET", "/v0/entity?id=" + key, null, "X-Perflab-Internal: http://test", "X-Perflab-Cluster: "
                + digest);
    }

    private void assertHoldsEveryAcknowledgedWrite(ServerProcess p, int i, Map<String, Boolean> acked) throws Exception {
        try (RawHttp http = new RawHttp(ports[i])) {
            int missing = 0;
            for (String key : acked.keySet()) {
                RawHttp.Response r = local(http, key);
                if (r.status != 200) {
                    missing++;
                } else {
                    assertArrayEquals(value(key), r.body);
                }
            }
            assertEquals("acknowledged 2/2 writes missing on node " + i + " after its kill -9", 0, missing);
        }
    }

    @Test
    public void acknowledgedWritesSurviveKill9OfEachNodeThatAcknowledgedThem() throws Exception {
        Map<String, Boolean> acked = new ConcurrentHashMap<>();
        ServerProcess a = node(0);
        ServerProcess b = node(1);
        try {
            a.awaitReady();
            b.awaitReady();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> clients = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int id = t;
                Thread c = new Thread(() -> {
                    try (RawHttp http = new RawHttp(ports[0])) {
                        for (int n = 0; !stop.get(); n++) {
                            String key = "c" + id + "-" + n;
                            // 201 for 2/2 means both nodes acknowledged it, each after its own log sync
                            if (http.call("PUT", "/v0/entity?id=" + key + "&replicas=2/2", value(key)).status == 201) {
                                acked.put(key, Boolean.TRUE);
                            }
                        }
                    } catch (java.io.IOException e) {
                        // not expected (node 0 stays up), but the assertions below say what was acknowledged
                    }
                });
                c.start();
                clients.add(c);
            }
            long deadline = System.currentTimeMillis() + 30_000;
            while (acked.size() < 1000 && System.currentTimeMillis() < deadline) {
                Thread.sleep(20);
            }
            b.kill9(); // mid-stream: node 0 still has requests to node 1 in flight
            stop.set(true);
            for (Thread c : clients) {
                c.join(30_000);
            }
            assertTrue("too few acknowledged writes to mean anything: " + acked.size(), acked.size() >= 500);

            b = node(1);
            b.awaitReady();
            assertHoldsEveryAcknowledgedWrite(b, 1, acked);

            a.kill9();
            a = node(0);
            a.awaitReady();
            assertHoldsEveryAcknowledgedWrite(a, 0, acked);
            assertEquals(0, a.terminate());
            assertEquals(0, b.terminate());
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    public void updatesMissedByAKilledNodeAreOutvotedOnceItIsBack() throws Exception {
        ServerProcess a = node(0);
        ServerProcess b = node(1);
        try {
            a.awaitReady();
            b.awaitReady();
            try (RawHttp http = new RawHttp(ports[0])) {
                assertEquals(201, http.call("PUT", "/v0/entity?id=del&replicas=2/2", value("v1")).status);
                assertEquals(201, http.call("PUT", "/v0/entity?id=over&replicas=2/2", value("v1")).status);
                assertEquals(201, http.call("PUT", "/v0/entity?id=re&replicas=2/2", value("v1")).status);
                assertEquals(202, http.call("DELETE", "/v0/entity?id=re&replicas=2/2").status);
            }
            b.kill9();
            long before = EventClock.micros(Instant.now());
            try (RawHttp http = new RawHttp(ports[0])) {
                // two of two with one node down: 504 for every method
                assertEquals(504, http.call("GET", "/v0/entity?id=over&replicas=2/2").status);
                assertEquals(504, http.call("PUT", "/v0/entity?id=x&replicas=2/2", value("x")).status);
                assertEquals(504, http.call("DELETE", "/v0/entity?id=x&replicas=2/2").status);
                // the updates node 1 misses
                assertEquals(201, http.call("PUT", "/v0/entity?id=new&replicas=1/2", value("v2")).status);
                assertEquals(202, http.call("DELETE", "/v0/entity?id=del&replicas=1/2").status);
                assertEquals(201, http.call("PUT", "/v0/entity?id=over&replicas=1/2", value("v2")).status);
                assertEquals(201, http.call("PUT", "/v0/entity?id=re&replicas=1/2", value("v2")).status);
            }
            long after = EventClock.micros(Instant.now());
            b = node(1);
            b.awaitReady();
            try (RawHttp http = new RawHttp(ports[1])) {
                assertEquals(200, local(http, "del").status); // its own copy is stale...
                assertArrayEquals(value("v1"), local(http, "over").body);
                // ...but two of two read the newest state
                assertArrayEquals(value("v2"), http.call("GET", "/v0/entity?id=new&replicas=2/2").body);
                assertEquals(404, http.call("GET", "/v0/entity?id=del&replicas=2/2").status);
                assertArrayEquals(value("v2"), http.call("GET", "/v0/entity?id=over&replicas=2/2").body);
                assertArrayEquals(value("v2"), http.call("GET", "/v0/entity?id=re&replicas=2/2").body);
            }
            try (RawHttp http = new RawHttp(ports[0])) {
                assertEquals(404, http.call("GET", "/v0/entity?id=del&replicas=2/2").status);
            }
            // node 0 saw node 1 go and come back: peer_down then peer_up on the events' clock
            assertEquals(0, a.terminate());
            Map<String, Object> down = null;
            Map<String, Object> up = null;
            for (String line : a.stdoutLines()) {
                Map<String, Object> e = MiniJson.object(line);
                if ("peer_down".equals(e.get("event"))) {
                    assertEquals("one peer_down: " + a.stdoutLines(), null, down);
                    down = e;
                } else if ("peer_up".equals(e.get("event"))) {
                    up = e;
                }
            }
            assertTrue(a.stdoutLines().toString(), down != null && up != null);
            assertEquals(url(1), down.get("peer"));
            assertEquals(url(1), up.get("peer"));
            long ts = MiniJson.number(down.get("ts_us"));
            assertTrue(before + " <= " + ts + " <= " + after, ts >= before - 1000 && ts <= after + 1000);
            assertTrue(MiniJson.number(up.get("ts_us")) > after);
            assertEquals(0, b.terminate());
        } finally {
            a.close();
            b.close();
        }
    }
}
