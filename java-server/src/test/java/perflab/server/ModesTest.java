package perflab.server;

import org.junit.Assume;
import org.junit.Test;
import perflab.testing.MiniJson;
import perflab.testing.RawHttp;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** Request handling modes: bounded executors answer 503 at once when full; LIFO serves the newest first. */
public class ModesTest {
    private static long queueDepth(ServerHarness server) throws Exception {
        try (RawHttp http = server.connect()) {
            Map<String, Object> stats = MiniJson.object(http.call("GET", "/v0/stats").text());
            return MiniJson.number(MiniJson.object(stats.get("executor")).get("queue_depth"));
        }
    }

    private static void awaitQueueDepth(ServerHarness server, long depth) throws Exception {
        long deadline = System.currentTimeMillis() + 30_000; // a wait, not a speed: generous on a busy machine
        while (queueDepth(server) != depth) {
            assertTrue("queue never reached depth " + depth, System.currentTimeMillis() < deadline);
            Thread.sleep(5);
        }
    }

    private void fullQueueAnswers503AtOnce(String kind) throws Exception {
        BlockingStorage storage = new BlockingStorage();
        try (ServerHarness server = ServerHarness.start(storage, "--mode", "async", "--workers", "1", "--queue", "1",
                "--queue-kind", kind);
             RawHttp busy = server.connect(); RawHttp queued = server.connect(); RawHttp rejected = server.connect()) {
            busy.send(RawHttp.request("GET", "/v0/entity?id=block", null));
            assertTrue(storage.entered.await(30, TimeUnit.SECONDS));
            queued.send(RawHttp.request("GET", "/v0/entity?id=queued", null));
            awaitQueueDepth(server, 1);
            long t0 = System.nanoTime();
            RawHttp.Response r = rejected.call("GET", "/v0/entity?id=rejected");
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(503, r.status);
            assertTrue("503 took " + ms + " ms while the worker was still blocked", storage.release.getCount() == 1);
            Map<String, Object> stats = MiniJson.object(rejected.call("GET", "/v0/stats").text());
            Map<String, Object> executor = MiniJson.object(stats.get("executor"));
            assertEquals(1L, executor.get("rejected"));
            assertEquals(1L, executor.get("queue_capacity"));
            assertEquals(1L, executor.get("active_workers"));
            assertEquals(1L, MiniJson.object(MiniJson.object(stats.get("requests")).get("GET")).get("503"));
            storage.release.countDown();
            assertEquals(404, busy.read(null).status);
            assertEquals(404, queued.read(null).status);
            assertEquals(404, rejected.call("GET", "/v0/entity?id=later").status); // capacity is back
        }
    }

    @Test
    public void arrayQueue() throws Exception {
        fullQueueAnswers503AtOnce("array");
    }

    @Test
    public void linkedQueue() throws Exception {
        fullQueueAnswers503AtOnce("linked");
    }

    @Test
    public void lifoQueue() throws Exception {
        fullQueueAnswers503AtOnce("lifo");
    }

    @Test
    public void lifoServesTheNewestRequestFirst() throws Exception {
        BlockingStorage storage = new BlockingStorage();
        List<RawHttp> connections = new ArrayList<>();
        try (ServerHarness server = ServerHarness.start(storage, "--mode", "async", "--workers", "1", "--queue", "8",
                "--queue-kind", "lifo")) {
            RawHttp busy = server.connect();
            connections.add(busy);
            busy.send(RawHttp.request("GET", "/v0/entity?id=block", null));
            assertTrue(storage.entered.await(30, TimeUnit.SECONDS));
            for (String id : new String[]{"first", "second", "third"}) {
                RawHttp c = server.connect();
                connections.add(c);
                c.send(RawHttp.request("GET", "/v0/entity?id=" + id, null));
                awaitQueueDepth(server, connections.size() - 1);
            }
            storage.release.countDown();
            for (RawHttp c : connections) {
                assertEquals(404, c.read(null).status);
            }
            assertEquals(Arrays.asList("block", "third", "second", "first"), storage.getOrder);
        } finally {
            for (RawHttp c : connections) {
                c.close();
            }
        }
    }

    @Test
    public void statsStayAvailableWhileTheExecutorIsSaturated() throws Exception {
        BlockingStorage storage = new BlockingStorage();
        try (ServerHarness server = ServerHarness.start(storage, "--mode", "async", "--workers", "1", "--queue", "1");
             RawHttp busy = server.connect(); RawHttp queued = server.connect()) {
            busy.send(RawHttp.request("GET", "/v0/entity?id=block", null));
            assertTrue(storage.entered.await(30, TimeUnit.SECONDS));
            queued.send(RawHttp.request("GET", "/v0/entity?id=q", null));
            awaitQueueDepth(server, 1); // answered although the worker is blocked and the queue full
            storage.release.countDown();
            assertEquals(404, busy.read(null).status);
            assertEquals(404, queued.read(null).status);
        }
    }

    @Test
    public void debugDelayHoldsEachRequest() throws Exception {
        try (ServerHarness server = ServerHarness.start(new BlockingStorage(), "--debug-delay", "30ms");
             RawHttp http = server.connect()) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 3; i++) {
                assertEquals(404, http.call("GET", "/v0/entity?id=x").status);
            }
            assertEquals(200, http.call("GET", "/v0/status").status);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue("4 requests with a 30 ms delay took " + ms + " ms", ms >= 120);
        }
    }

    @Test
    public void debugWorkBurnsCpuTimeOnTheRequestThread() throws Exception {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        try (ServerHarness server = ServerHarness.start(new BlockingStorage(), "--debug-work-ns", "20000000");
             RawHttp http = server.connect()) {
            // the server runs in this JVM: its threads' CPU time grows by at least 20 ms per request
            long before = totalCpu(threads);
            for (int i = 0; i < 5; i++) {
                assertEquals(200, http.call("GET", "/v0/status").status);
            }
            long ms = (totalCpu(threads) - before) / 1_000_000;
            assertTrue("5 requests with 20 ms of work each used " + ms + " ms of CPU", ms >= 100);
        }
    }

    private static long totalCpu(java.lang.management.ThreadMXBean threads) {
        long sum = 0;
        for (long id : threads.getAllThreadIds()) {
            sum += Math.max(0, threads.getThreadCpuTime(id));
        }
        return sum;
    }

    @Test
    public void virtualThreadsServeRequests() throws Exception {
        Assume.assumeTrue("virtual threads need JDK 21+", Runtime.version().feature() >= 21);
        try (ServerHarness server = ServerHarness.start(new BlockingStorage(), "--mode", "virtual");
             RawHttp http = server.connect()) {
            assertEquals(201, http.call("PUT", "/v0/entity?id=v", new byte[]{1}).status);
            assertEquals(200, http.call("GET", "/v0/entity?id=v").status);
        }
    }
}
