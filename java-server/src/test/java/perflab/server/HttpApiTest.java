package perflab.server;

import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import perflab.spec.MetricList;
import perflab.spec.MetricSpec;
import perflab.storage.StorageStats;
import perflab.testing.MiniJson;
import perflab.testing.RawHttp;
import perflab.testing.TempDir;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

/** The HTTP contract, status code by status code, through a real socket, for each backend. */
@RunWith(Parameterized.class)
public class HttpApiTest {
    @Parameterized.Parameters(name = "{0}")
    public static Collection<Object[]> backends() {
        return Arrays.asList(new Object[][]{{"memory"}, {"lsm"}, {"rocksdb"}});
    }

    @Rule
    public final TempDir temp = new TempDir();
    private final String backend;
    private ServerHarness server;
    private RawHttp http;

    public HttpApiTest(String backend) {
        this.backend = backend;
    }

    @Before
    public void start() throws Exception {
        server = ServerHarness.start(backend.equals("memory") ? null : temp.dir("db"), "--backend", backend,
                "--memtable-size", "64k");
        http = server.connect();
    }

    @After
    public void stop() throws Exception {
        if (http != null) {
            http.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    public void entityLifecycle() throws Exception {
        assertEquals(404, http.call("GET", "/v0/entity?id=k1").status);
        RawHttp.Response put = http.call("PUT", "/v0/entity?id=k1", utf8("hello"));
        assertEquals(201, put.status);
        RawHttp.Response get = http.call("GET", "/v0/entity?id=k1");
        assertEquals(200, get.status);
        assertEquals("hello", get.text());
        assertEquals(201, http.call("PUT", "/v0/entity?id=k1", utf8("again")).status);
        assertEquals("again", http.call("GET", "/v0/entity?id=k1").text());
        assertEquals(202, http.call("DELETE", "/v0/entity?id=k1").status);
        assertEquals(404, http.call("GET", "/v0/entity?id=k1").status);
        assertEquals(202, http.call("DELETE", "/v0/entity?id=never").status);
    }

    @Test
    public void badRequests() throws Exception {
        assertEquals(400, http.call("GET", "/v0/entity").status);
        assertEquals(400, http.call("GET", "/v0/entity?id=").status);
        assertEquals(400, http.call("PUT", "/v0/entity?other=1", utf8("x")).status);
        assertEquals(400, http.call("DELETE", "/v0/entity?idx=1").status);
        assertEquals(400, http.call("GET", "/v0/entity?id=%zz").status);
        assertEquals(400, http.call("GET", "/v0/entities").status);
        assertEquals(400, http.call("GET", "/v0/entities?start=").status);
        assertEquals(400, http.call("GET", "/unknown").status);
        assertEquals(400, http.call("GET", "/v0/entityx?id=1").status);
        assertEquals(400, http.call("GET", "/").status);
        RawHttp.Response post = http.call("POST", "/v0/entity?id=k", utf8("x"));
        assertEquals(405, post.status);
        assertEquals("GET, PUT, DELETE", post.header("Allow"));
        assertEquals(405, http.call("PATCH", "/v0/entity?id=k", utf8("x")).status);
        assertEquals(405, http.call("HEAD", "/v0/entity?id=k").status);
        assertEquals(405, http.call("PUT", "/v0/entities?start=a", utf8("x")).status);
        // the connection is still usable after all of these
        assertEquals(200, http.call("GET", "/v0/status").status);
    }

    @Test
    public void binaryAndEmptyValuesRoundTrip() throws Exception {
        byte[] all = new byte[256 * 4];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        assertEquals(201, http.call("PUT", "/v0/entity?id=bin", all).status);
        assertArrayEquals(all, http.call("GET", "/v0/entity?id=bin").body);
        assertEquals(201, http.call("PUT", "/v0/entity?id=empty", new byte[0]).status);
        RawHttp.Response empty = http.call("GET", "/v0/entity?id=empty");
        assertEquals(200, empty.status);
        assertEquals(0, empty.body.length);
        // ids are percent-decoded to bytes: %00 and %FF are legal key bytes
        assertEquals(201, http.call("PUT", "/v0/entity?id=a%00b%FF%20c+d", utf8("odd")).status);
        assertEquals("odd", http.call("GET", "/v0/entity?id=a%00b%ff%20c%20d").text());
        assertEquals(404, http.call("GET", "/v0/entity?id=a%00b").status);
        assertEquals(201, http.call("PUT", "/v0/entity?id=%D0%BA%D0%BB%D1%8E%D1%87", utf8("ключ")).status);
        assertEquals("ключ", http.call("GET", "/v0/entity?x=1&id=%D0%BA%D0%BB%D1%8E%D1%87&y=2").text());
    }

    @Test
    public void rangeStreamsSortedChunksWithInclusiveStartAndExclusiveEnd() throws Exception {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            keys.add(String.format("r%05d", i));
        }
        for (int i = keys.size() - 1; i >= 0; i--) {
            assertEquals(201, http.call("PUT", "/v0/entity?id=" + keys.get(i), utf8("v" + i)).status);
        }
        assertEquals(202, http.call("DELETE", "/v0/entity?id=r00010").status);
        assertEquals(201, http.call("PUT", "/v0/entity?id=r00011", new byte[0]).status);
        assertEquals(201, http.call("PUT", "/v0/entity?id=s", utf8("after the range")).status);

        RawHttp.Response r = http.call("GET", "/v0/entities?start=r00005&end=r02000");
        assertEquals(200, r.status);
        assertEquals("chunked", r.header("Transfer-Encoding"));
        assertEquals(2000 - 5 - 1, r.chunks.size());
        int expected = 5;
        for (byte[] chunk : r.chunks) {
            if (expected == 10) {
                expected++;
            }
            String c = new String(chunk, StandardCharsets.UTF_8);
            String key = String.format("r%05d", expected);
            String value = expected == 11 ? "" : "v" + expected;
            assertEquals(key + "\n" + value, c);
            expected++;
        }
        assertEquals(2000, expected);
        RawHttp.Response open = http.call("GET", "/v0/entities?start=r02998");
        assertEquals(3, open.chunks.size());
        assertEquals("s\nafter the range", new String(open.chunks.get(2), StandardCharsets.UTF_8));
        assertEquals(0, http.call("GET", "/v0/entities?start=z").chunks.size());
        // the keep-alive connection carries on after a stream
        assertEquals("v1", http.call("GET", "/v0/entity?id=r00001").text());
    }

    @Test
    public void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        byte[] a = RawHttp.request("PUT", "/v0/entity?id=p1", utf8("one"));
        byte[] b = RawHttp.request("GET", "/v0/entity?id=p1", null);
        byte[] c = RawHttp.request("GET", "/v0/entities?start=p", null);
        byte[] d = RawHttp.request("DELETE", "/v0/entity?id=p1", null);
        byte[] e = RawHttp.request("GET", "/v0/entity?id=p1", null);
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (byte[] x : new byte[][]{a, b, c, d, e}) {
            all.write(x);
        }
        http.send(all.toByteArray());
        assertEquals(201, http.read(null).status);
        assertEquals("one", http.read(null).text());
        RawHttp.Response range = http.read(null);
        assertEquals(1, range.chunks.size());
        assertEquals(202, http.read(null).status);
        assertEquals(404, http.read(null).status);
    }

    @Test
    public void statusAndStats() throws Exception {
        assertEquals(200, http.call("GET", "/v0/status").status);
        http.call("PUT", "/v0/entity?id=s1", utf8("x"));
        http.call("GET", "/v0/entity?id=s1");
        http.call("GET", "/v0/entity?id=nope");
        http.call("GET", "/nowhere");
        RawHttp.Response r = http.call("GET", "/v0/stats");
        assertEquals(200, r.status);
        assertEquals("application/json", r.header("Content-Type"));
        Map<String, Object> s = MiniJson.object(r.text());
        for (String k : new String[]{"timestamp_ms", "uptime_ms", "requests", "executor", "storage", "jvm"}) {
            assertNotNull("missing " + k, s.get(k));
        }
        Map<String, Object> requests = MiniJson.object(s.get("requests"));
        assertEquals(1L, MiniJson.object(requests.get("PUT")).get("201"));
        Map<String, Object> get = MiniJson.object(requests.get("GET"));
        assertEquals(1L, get.get("404"));
        assertEquals(1L, get.get("400"));
        assertTrue((Long) get.get("200") >= 2); // status + entity
        Map<String, Object> storage = MiniJson.object(s.get("storage"));
        assertEquals(backend, storage.get("backend"));
        for (String k : StorageStats.KEYS) {
            assertTrue("storage." + k, storage.get(k) instanceof Long);
        }
        Map<String, Object> executor = MiniJson.object(s.get("executor"));
        for (String k : new String[]{"mode", "pool_size", "active_workers", "queue_depth", "queue_capacity",
                "rejected", "completed"}) {
            assertTrue("executor." + k, executor.containsKey(k));
        }
        Map<String, Object> jvm = MiniJson.object(s.get("jvm"));
        for (String k : new String[]{"heap_used", "heap_committed", "heap_max", "gc_count", "gc_ms", "threads"}) {
            assertTrue("jvm." + k, jvm.get(k) instanceof Long);
        }
    }

    @Test
    public void statsLeavesAreExactlyTheSpecifiedMetrics() throws Exception {
        http.call("PUT", "/v0/entity?id=m1", utf8("x"));
        http.call("GET", "/v0/entity?id=m1");
        http.call("GET", "/v0/entity?id=absent");
        Map<String, Object> leaves = new java.util.TreeMap<>(MiniJson.leaves(MiniJson.object(http.call("GET", "/v0/stats").text())));
        List<MetricSpec> specs = MetricList.forBackend(backend);
        for (Map.Entry<String, Object> leaf : leaves.entrySet()) {
            MetricSpec spec = null;
            for (MetricSpec m : specs) {
                if (m.matches(leaf.getKey())) {
                    spec = m;
                }
            }
            assertNotNull(backend + " reports " + leaf.getKey() + ", which has no spec", spec);
            if (spec.kind == MetricSpec.Kind.LABEL) {
                assertTrue(leaf.getKey(), leaf.getValue() instanceof String);
            } else {
                assertTrue(leaf.getKey() + " = " + leaf.getValue(), leaf.getValue() instanceof Long);
            }
        }
        for (MetricSpec m : specs) {
            boolean present = false;
            for (String name : leaves.keySet()) {
                present |= m.matches(name);
            }
            assertTrue(backend + " does not report " + m.name + "; it reports " + leaves.keySet(), present);
        }
        assertTrue(leaves.containsKey("requests.PUT.201")); // the pattern family really is matched as a pattern
    }

    @Test
    public void connectionCloseIsHonoured() throws Exception {
        http.send(("GET /v0/status HTTP/1.1\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        RawHttp.Response r = http.read(null);
        assertEquals(200, r.status);
        assertEquals("close", r.header("Connection"));
        assertTrue(http.closedByPeer());
    }
}
