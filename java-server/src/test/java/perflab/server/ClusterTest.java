package perflab.server;

import org.junit.Rule;
import org.junit.Test;
import perflab.cluster.Record;
import perflab.cluster.Topology;
import perflab.events.EventClock;
import perflab.spec.MetricList;
import perflab.spec.MetricSpec;
import perflab.testing.MiniJson;
import perflab.testing.RawHttp;
import perflab.testing.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

/**
 * The course's cluster invariants with the nodes as servers in this JVM (each its own port, storage and
 * events): sharding, replication with ack/from, failures and restarts, metrics and events.
 */
public class ClusterTest {
    @Rule
    public final TempDir temp = new TempDir();

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static int status(RawHttp http, String method, String target) throws Exception {
        return http.call(method, target, method.equals("PUT") ? utf8("x") : null).status;
    }

    @Test
    public void shardingWritesThroughAnyNodeAndReadsThroughEveryNode() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(3, null)) {
            Topology t = c.topology();
            int[] owned = new int[3];
            for (int k = 0; k < 60; k++) {
                String key = "shard" + k;
                try (RawHttp http = c.http(k % 3)) {
                    assertEquals(201, http.call("PUT", "/v0/entity?id=" + key + "&from=1", utf8("v" + k)).status);
                }
                // a write with from = 1 lands on exactly one node: the key's owner
                int owner = t.owner(utf8(key));
                assertEquals(key, Collections.singletonList(owner), c.holders(key));
                owned[owner]++;
                for (int n = 0; n < 3; n++) {
                    try (RawHttp http = c.http(n)) {
                        RawHttp.Response r = http.call("GET", "/v0/entity?id=" + key + "&ack=1&from=1");
                        assertEquals(key + " via node " + n, 200, r.status);
                        assertEquals("v" + k, r.text());
                    }
                }
            }
            for (int n = 0; n < 3; n++) {
                assertTrue("every node owns some of 60 keys: " + Arrays.toString(owned), owned[n] > 0);
            }
            // proxied: the owner served internal requests for the keys written through other nodes
            long proxied = 0;
            for (int n = 0; n < 3; n++) {
                proxied += MiniJson.number(MiniJson.object(c.stats(n).get("cluster")).get("internal_served"));
            }
            assertTrue("some requests were proxied: " + proxied, proxied >= 60);
        }
    }

    @Test
    public void eachNodesOwnRangeHoldsExactlyTheKeysRoutingGivesIt() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(3, null)) {
            Topology t = c.topology();
            int[] expected = new int[3];
            try (RawHttp http = c.http(0)) {
                for (int k = 0; k < 300; k++) {
                    String key = "key" + k;
                    assertEquals(201, http.call("PUT", "/v0/entity?id=" + key + "&from=1", utf8("v")).status);
                    expected[t.owner(utf8(key))]++;
                }
                // a deleted key is a tombstone in storage, never a range entry
                assertEquals(202, http.call("DELETE", "/v0/entity?id=key0&from=1").status);
                expected[t.owner(utf8("key0"))]--;
            }
            int total = 0;
            for (int n = 0; n < 3; n++) {
                try (RawHttp http = c.http(n)) {
                    RawHttp.Response r = http.call("GET", "/v0/entities?start=key");
                    assertEquals(200, r.status);
                    assertEquals("node " + n, expected[n], r.chunks.size());
                    for (byte[] chunk : r.chunks) {
                        String entry = new String(chunk, StandardCharsets.UTF_8);
                        assertTrue(entry, entry.endsWith("\nv"));
                        assertEquals(n, t.owner(utf8(entry.substring(0, entry.indexOf('\n')))));
                    }
                    total += r.chunks.size();
                }
            }
            assertEquals(299, total);
        }
    }

    @Test
    public void badAckOrFromIs400() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(3, null); RawHttp http = c.http(1)) {
            for (String method : Arrays.asList("GET", "PUT", "DELETE")) {
                for (String q : Arrays.asList("ack=0", "ack=0&from=3", "replicas=0/3", "ack=3&from=2", "replicas=4/3",
                        "from=4", "ack=1&from=4", "replicas=2/4", "from=0", "ack=x", "replicas=2", "replicas=a/b",
                        "ack=", "replicas=2/3&ack=2")) {
                    RawHttp.Response r = http.call(method, "/v0/entity?id=k&" + q, method.equals("PUT") ? utf8("x") : null);
                    assertEquals(method + " " + q + ": " + r.text(), 400, r.status);
                    assertTrue(q + ": " + r.text(), r.text().matches(".*(ack|from|replicas).*"));
                }
            }
            assertEquals("ack must be at least 1, got 0", http.call("GET", "/v0/entity?id=k&ack=0").text());
            assertEquals("ack must not exceed from: ack=4, from=3", http.call("GET", "/v0/entity?id=k&replicas=4/3").text());
            assertEquals("from must be between 1 and the cluster size 3, got 4",
                    http.call("GET", "/v0/entity?id=k&from=4").text());
            // nothing was written by any of them
            assertEquals(Collections.emptyList(), c.holders("k"));
            // the defaults: from = 3, ack = 2; the extremes are fine
            assertEquals(201, status(http, "PUT", "/v0/entity?id=k"));
            assertEquals(Arrays.asList(0, 1, 2), c.awaitHolders("k", Arrays.asList(0, 1, 2)));
            assertEquals(200, status(http, "GET", "/v0/entity?id=k&replicas=3/3"));
            assertEquals(200, status(http, "GET", "/v0/entity?id=k&ack=1&from=1"));
        }
    }

    @Test
    public void twoOfTwoWithOneNodeDownIs504ForEveryMethodThenRecovers() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(2, null)) {
            try (RawHttp http = c.http(0)) {
                assertEquals(201, http.call("PUT", "/v0/entity?id=k&replicas=2/2", utf8("v")).status);
            }
            c.stop(1);
            long before = EventClock.micros(Instant.now());
            try (RawHttp http = c.http(0)) {
                for (String method : Arrays.asList("GET", "PUT", "DELETE")) {
                    RawHttp.Response r = http.call(method, "/v0/entity?id=k&replicas=2/2",
                            method.equals("PUT") ? utf8("w") : null);
                    assertEquals(method + ": " + r.text(), 504, r.status);
                    assertTrue(r.text(), r.text().startsWith("not enough replicas: 2 of 2 needed, 1 failed ("
                            + c.url(1) + ": "));
                }
                // ack = 1 needs only this node; a 504 is no rollback: the DELETE was applied where it could be
                assertEquals(404, status(http, "GET", "/v0/entity?id=k&replicas=1/2"));
            }
            long after = EventClock.micros(Instant.now());
            // the 1/2 GET was answered before node 1's failure arrived: wait for it to be counted
            Map<String, Object> cluster = awaitCluster(c, 0, "replicas_failed", 4L);
            assertEquals(3L, cluster.get("gateway_timeouts"));
            assertEquals(10L, cluster.get("replicas_asked")); // 2 for the first PUT, for each 504 and the 1/2 GET
            Map<String, Object> peer = MiniJson.object(MiniJson.object(cluster.get("peers")).get("1"));
            assertEquals(c.url(1), peer.get("url"));
            assertEquals(0L, peer.get("up"));
            assertEquals(5L, peer.get("requests"));
            assertEquals(1L, peer.get("answered"));
            assertEquals(4L, MiniJson.number(peer.get("errors")) + MiniJson.number(peer.get("timeouts")));
            Map<String, Object> requests = MiniJson.object(c.stats(0).get("requests"));
            for (String method : Arrays.asList("GET", "PUT", "DELETE")) {
                assertEquals(method, 1L, MiniJson.object(requests.get(method)).get("504"));
            }
            // one peer_down at the first failure, on the clock of every other event
            Map<String, Object> down = c.awaitEvents(0, "peer_down", 1).get(0);
            assertEquals(c.url(1), down.get("peer"));
            long ts = MiniJson.number(down.get("ts_us"));
            assertTrue(before + " <= " + ts + " <= " + after, ts >= before - 1000 && ts <= after + 1000);

            c.start(1); // memory backend: it comes back empty
            try (RawHttp http = c.http(0)) {
                assertEquals(201, http.call("PUT", "/v0/entity?id=k&replicas=2/2", utf8("again")).status);
                assertEquals("again", http.call("GET", "/v0/entity?id=k&replicas=2/2").text());
            }
            Map<String, Object> up = c.awaitEvents(0, "peer_up", 1).get(0);
            assertEquals(c.url(1), up.get("peer"));
            assertEquals(4L, up.get("failures"));
            assertTrue(MiniJson.number(up.get("ts_us")) > ts);
            assertTrue(MiniJson.number(up.get("down_us")) > 0);
            assertEquals(1, c.events(0, "peer_down").size());
            assertEquals(1L, MiniJson.object(MiniJson.object(MiniJson.object(c.stats(0).get("cluster")).get("peers"))
                    .get("1")).get("up"));
        }
    }

    /** Node i's "cluster" stats once {@code name} has reached {@code expected} (within 30 s). */
    private static Map<String, Object> awaitCluster(ClusterHarness c, int i, String name, long expected)
            throws Exception {
        long deadline = System.currentTimeMillis() + 30_000;
        while (true) {
            Map<String, Object> cluster = MiniJson.object(c.stats(i).get("cluster"));
            if (MiniJson.number(cluster.get(name)) >= expected || System.currentTimeMillis() > deadline) {
                assertEquals(name, expected, cluster.get(name));
                return cluster;
            }
            Thread.sleep(20);
        }
    }

    @Test
    public void toleratesOneFailureOfThreeInAsyncMode() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(3, null, "--mode", "async", "--workers", "2")) {
            c.stop(2);
            for (int via = 0; via < 2; via++) {
                try (RawHttp http = c.http(via)) {
                    String key = "t" + via;
                    assertEquals(201, http.call("PUT", "/v0/entity?id=" + key, utf8("v")).status); // 2/3 by default
                    assertEquals("v", http.call("GET", "/v0/entity?id=" + key + "&replicas=2/3").text());
                    assertEquals(202, status(http, "DELETE", "/v0/entity?id=" + key + "&replicas=2/3"));
                    assertEquals(404, status(http, "GET", "/v0/entity?id=" + key));
                    assertEquals(504, status(http, "GET", "/v0/entity?id=" + key + "&replicas=3/3"));
                }
            }
        }
    }

    @Test
    public void theClientIsAnsweredAfterAckReplicasNotAfterTheSlowest() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(3, null)) {
            c.stop(2);
            c.startWith(2, "--debug-delay", "3s"); // every /v0/entity request on node 2 waits 3 s
            try (RawHttp http = c.http(0)) {
                assertEquals(201, http.call("PUT", "/v0/entity?id=k&replicas=2/3", utf8("v")).status);
                // answered while node 2 still holds the request: its copy is not there yet
                assertEquals(Arrays.asList(0, 1), c.holders("k"));
                assertEquals("v", http.call("GET", "/v0/entity?id=k&replicas=2/3").text());
            }
            // node 2 was asked in parallel all the same: its copy lands once its delay is over
            assertEquals(Arrays.asList(0, 1, 2), c.awaitHolders("k", Arrays.asList(0, 1, 2)));
            Map<String, Object> cluster = awaitCluster(c, 0, "replicas_answered", 6L);
            assertEquals(6L, cluster.get("replicas_asked"));
        }
    }

    @Test
    public void respectsTheReplicationFactor() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(3, null)) {
            Topology t = c.topology();
            try (RawHttp http = c.http(0)) {
                for (int k = 0; k < 20; k++) {
                    for (int rf = 1; rf <= 3; rf++) {
                        String key = "rf" + rf + "-" + k;
                        assertEquals(201, http.call("PUT", "/v0/entity?id=" + key + "&replicas=" + rf + "/" + rf,
                                utf8("v")).status);
                        List<Integer> expected = new ArrayList<>();
                        for (int n : t.replicas(utf8(key), rf)) {
                            expected.add(n);
                        }
                        Collections.sort(expected);
                        assertEquals(key, expected, c.holders(key));
                    }
                }
            }
        }
    }

    @Test
    public void overlappingQuorumsSeeTheNewestWriteAndDelete() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(3, temp.dir("overlap"))) {
            try (RawHttp http = c.http(0)) {
                assertEquals(201, http.call("PUT", "/v0/entity?id=w&replicas=3/3", utf8("old")).status);
                assertEquals(201, http.call("PUT", "/v0/entity?id=d&replicas=3/3", utf8("old")).status);
            }
            // node 2 misses a 2/3 overwrite (through node 0) and a 2/3 delete (through node 1)
            c.stop(2);
            try (RawHttp http = c.http(0)) {
                assertEquals(201, http.call("PUT", "/v0/entity?id=w&replicas=2/3", utf8("new")).status);
            }
            try (RawHttp http = c.http(1)) {
                assertEquals(202, status(http, "DELETE", "/v0/entity?id=d&replicas=2/3"));
            }
            c.start(2);
            assertEquals("old", new String(c.local(2, "w").valueCopy(), StandardCharsets.UTF_8));
            assertTrue(c.local(2, "d").isLive());
            // any two of three include a node that saw the newest write: every coordinator reads it
            for (int via = 0; via < 3; via++) {
                try (RawHttp http = c.http(via)) {
                    assertEquals("via " + via, "new", http.call("GET", "/v0/entity?id=w&replicas=2/3").text());
                    assertEquals("via " + via, 404, status(http, "GET", "/v0/entity?id=d&replicas=2/3"));
                    assertEquals("via " + via, 404, status(http, "GET", "/v0/entity?id=d&replicas=3/3"));
                }
            }
            // overlapping writes through different coordinators: the later one wins everywhere
            try (RawHttp a = c.http(0); RawHttp b = c.http(1); RawHttp r = c.http(2)) {
                assertEquals(201, a.call("PUT", "/v0/entity?id=o&replicas=2/3", utf8("first")).status);
                assertEquals(201, b.call("PUT", "/v0/entity?id=o&replicas=2/3", utf8("second")).status);
                assertEquals("second", r.call("GET", "/v0/entity?id=o&replicas=2/3").text());
                assertEquals(202, a.call("DELETE", "/v0/entity?id=o&replicas=2/3").status);
                assertEquals(404, r.call("GET", "/v0/entity?id=o&replicas=2/3").status);
            }
        }
    }

    @Test
    public void updatesMissedByARestartedNodeAreOutvotedByTheirTimestamps() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(2, temp.dir("missed"))) {
            try (RawHttp http = c.http(0)) {
                assertEquals(201, http.call("PUT", "/v0/entity?id=del&replicas=2/2", utf8("v1")).status);
                assertEquals(201, http.call("PUT", "/v0/entity?id=over&replicas=2/2", utf8("v1")).status);
                assertEquals(201, http.call("PUT", "/v0/entity?id=re&replicas=2/2", utf8("v1")).status);
                assertEquals(202, status(http, "DELETE", "/v0/entity?id=re&replicas=2/2"));
            }
            c.stop(1);
            try (RawHttp http = c.http(0)) {
                assertEquals(201, http.call("PUT", "/v0/entity?id=new&replicas=1/2", utf8("v2")).status);
                assertEquals(202, status(http, "DELETE", "/v0/entity?id=del&replicas=1/2"));
                assertEquals(201, http.call("PUT", "/v0/entity?id=over&replicas=1/2", utf8("v2")).status);
                assertEquals(201, http.call("PUT", "/v0/entity?id=re&replicas=1/2", utf8("v2")).status);
            }
            c.start(1);
            assertNull(c.local(1, "new"));
            assertTrue(c.local(1, "del").isLive());
            assertEquals("v1", new String(c.local(1, "over").valueCopy(), StandardCharsets.UTF_8));
            assertTrue(!c.local(1, "re").isLive());
            try (RawHttp http = c.http(1)) {
                assertEquals("v2", http.call("GET", "/v0/entity?id=new&replicas=2/2").text());
                assertEquals(404, status(http, "GET", "/v0/entity?id=del&replicas=2/2"));
                assertEquals("v2", http.call("GET", "/v0/entity?id=over&replicas=2/2").text());
                assertEquals("v2", http.call("GET", "/v0/entity?id=re&replicas=2/2").text());
            }
            // the quorum reads answered right without repairing: this node alone still holds its stale view (read
            // through ack = 1 it may or may not win the race with the other replica's answer: a busy machine decides)
            assertTrue(c.local(1, "del").isLive());
        }
    }

    @Test
    public void aLateOlderWriteDoesNotReplaceANewerOne() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(2, null)) {
            String digest = c.topology().digest();
            try (RawHttp http = c.http(1)) {
                String[] internal = {"X-Perflab-Internal: " + c.url(0), "X-Perflab-Cluster: " + digest,
                        "X-Perflab-Timestamp: 2000"};
                assertEquals(201, http.call("PUT", "/v0/entity?id=k", utf8("newer"), internal).status);
                internal[2] = "X-Perflab-Timestamp: 1000";
                assertEquals(201, http.call("PUT", "/v0/entity?id=k", utf8("older"), internal).status);
                assertEquals(202, http.call("DELETE", "/v0/entity?id=k", null, internal).status);
                RawHttp.Response r = http.call("GET", "/v0/entity?id=k", null, internal[0], internal[1]);
                assertEquals(200, r.status);
                assertEquals("newer", r.text());
                assertEquals("2000", r.header("X-Perflab-Timestamp"));
                assertEquals(digest, r.header("X-Perflab-Cluster"));
                // a tombstone answers 404 with its timestamp; a key never written, 404 without one
                internal[2] = "X-Perflab-Timestamp: 3000";
                assertEquals(202, http.call("DELETE", "/v0/entity?id=k", null, internal).status);
                r = http.call("GET", "/v0/entity?id=k", null, internal[0], internal[1]);
                assertEquals(404, r.status);
                assertEquals("3000", r.header("X-Perflab-Timestamp"));
                r = http.call("GET", "/v0/entity?id=never", null, internal[0], internal[1]);
                assertEquals(404, r.status);
                assertNull(r.header("X-Perflab-Timestamp"));
                // an internal write without a timestamp is refused, not stored with a made-up one
                r = http.call("PUT", "/v0/entity?id=k2", utf8("x"), internal[0], internal[1]);
                assertEquals(400, r.status);
                assertTrue(r.text(), r.text().contains("X-Perflab-Timestamp"));
                assertNull(c.local(1, "k2"));
            }
        }
    }

    @Test
    public void differentClusterListsAreRefusedLoudlyNeverServed() throws Exception {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (ClusterHarness a = ClusterHarness.start(2, null)) {
            // a node that believes in a third member: its digest differs from node 0's
            List<String> args = new ArrayList<>(Arrays.asList("--backend", "memory", "--port",
                    a.url(1).substring(a.url(1).lastIndexOf(':') + 1), "--cluster", a.list() + ",http://127.0.0.1:1",
                    "--self-url", a.url(1)));
            a.stop(1);
            RunningServer odd = RunningServer.start(Settings.parse(args.toArray(new String[0])),
                    perflab.storage.StorageFactory.open("memory", null, perflab.storage.StorageOptions.defaults()));
            try {
                System.setErr(new PrintStream(captured, true, "UTF-8"));
                try (RawHttp http = a.http(0)) {
                    RawHttp.Response r = http.call("PUT", "/v0/entity?id=k&replicas=2/2", utf8("v"));
                    assertEquals(504, r.status);
                    assertTrue(r.text(), r.text().contains("cluster mismatch"));
                }
                assertNull("the odd node stored nothing", odd.storage().get(utf8("k")));
            } finally {
                System.setErr(err);
                odd.stop();
            }
            String log = new String(captured.toByteArray(), StandardCharsets.UTF_8);
            assertTrue(log, log.contains("error: cluster mismatch: " + a.url(0) + " sent an internal request"));
            assertTrue(log, log.contains("error: cluster: peer " + a.url(1) + " refused an internal request"));
            Map<String, Object> down = a.awaitEvents(0, "peer_down", 1).get(0);
            assertEquals("mismatch", down.get("reason"));

        } finally {
            System.setErr(err);
        }
    }

    @Test
    public void aPeerStartedWithoutClusterIsNotCountedAsAReplica() throws Exception {
        try (ClusterHarness a = ClusterHarness.start(2, null)) {
            a.stop(1); // before any request reached it: no pooled connection to the old node 1
            List<String> plain = Arrays.asList("--backend", "memory", "--port",
                    a.url(1).substring(a.url(1).lastIndexOf(':') + 1));
            RunningServer single = RunningServer.start(Settings.parse(plain.toArray(new String[0])),
                    perflab.storage.StorageFactory.open("memory", null, perflab.storage.StorageOptions.defaults()));
            try (RawHttp http = a.http(0)) {
                RawHttp.Response r = http.call("PUT", "/v0/entity?id=k&replicas=2/2", utf8("v"));
                assertEquals(504, r.status);
                assertTrue(r.text(), r.text().contains("started without --cluster"));
                r = http.call("GET", "/v0/entity?id=k&replicas=2/2");
                assertEquals(504, r.status);
                assertTrue(r.text(), r.text().contains("started without --cluster"));
            } finally {
                single.stop();
            }
        }
    }

    @Test
    public void aPlainValueInAClusterNodesStorageFailsThatReplicaNamingTheCause() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(1, null)) { // a cluster of one node is legal
            c.storage(0).put(utf8("plain"), utf8("written without --cluster"));
            try (RawHttp http = c.http(0)) {
                RawHttp.Response r = http.call("GET", "/v0/entity?id=plain");
                assertEquals(504, r.status);
                assertTrue(r.text(), r.text().contains("not in the cluster encoding"));
                assertEquals(201, http.call("PUT", "/v0/entity?id=k", utf8("v")).status);
                assertEquals("v", http.call("GET", "/v0/entity?id=k").text());
            }
        }
    }

    @Test
    public void concurrentClientsThroughEveryCoordinatorGetConsistentAnswers() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(3, null, "--mode", "async", "--workers", "2")) {
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                int id = t;
                Thread th = new Thread(() -> {
                    try (RawHttp http = c.http(id % 3)) {
                        for (int i = 0; i < 100; i++) {
                            String key = "c" + id + "-" + i;
                            assertEquals(201, http.call("PUT", "/v0/entity?id=" + key, utf8(key)).status);
                            assertEquals(key, http.call("GET", "/v0/entity?id=" + key).text());
                            if (i % 3 == 0) {
                                assertEquals(202, http.call("DELETE", "/v0/entity?id=" + key).status);
                                assertEquals(404, http.call("GET", "/v0/entity?id=" + key).status);
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                th.start();
                threads.add(th);
            }
            for (Thread th : threads) {
                th.join(120_000);
            }
            if (failure.get() != null) {
                throw new AssertionError("a client failed", failure.get());
            }
            // every write reached all three replicas in the end (the third answer may come after the client's)
            assertEquals(Arrays.asList(0, 1, 2), c.awaitHolders("c5-99", Arrays.asList(0, 1, 2)));
            Record r = c.local(0, "c0-0");
            assertNotNull(r);
            assertTrue(!r.isLive());
        }
    }

    @Test
    public void clusterStatsAreExactlyTheSpecifiedMetrics() throws Exception {
        try (ClusterHarness c = ClusterHarness.start(3, temp.dir("stats"))) {
            try (RawHttp http = c.http(0)) {
                assertEquals(201, http.call("PUT", "/v0/entity?id=m", utf8("x")).status);
            }
            Map<String, Object> leaves = new TreeMap<>(MiniJson.leaves(c.stats(0)));
            List<MetricSpec> specs = MetricList.reported("lsm", true);
            for (Map.Entry<String, Object> leaf : leaves.entrySet()) {
                MetricSpec spec = null;
                for (MetricSpec m : specs) {
                    if (m.matches(leaf.getKey())) {
                        spec = m;
                    }
                }
                assertNotNull(leaf.getKey() + " has no spec", spec);
                assertTrue(leaf.getKey() + " = " + leaf.getValue(), spec.kind == MetricSpec.Kind.LABEL
                        ? leaf.getValue() instanceof String : leaf.getValue() instanceof Long);
            }
            for (MetricSpec m : specs) {
                boolean present = false;
                for (String name : leaves.keySet()) {
                    present |= m.matches(name);
                }
                assertTrue("not reported: " + m.name, present);
            }
            assertEquals(3L, leaves.get("cluster.nodes"));
            assertEquals(0L, leaves.get("cluster.self"));
            assertEquals(c.url(1), leaves.get("cluster.peers.1.url"));
            assertEquals(c.url(2), leaves.get("cluster.peers.2.url"));
            assertTrue(leaves.containsKey("cluster.peers.1.latency_us"));
            assertTrue(!leaves.containsKey("cluster.peers.0.url"));
            assertEquals(1L, leaves.get("cluster.coordinated"));
            assertEquals(3L, leaves.get("cluster.replicas_asked"));
        }
    }
}
