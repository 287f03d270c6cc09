package perflab.server;

import org.junit.Rule;
import org.junit.Test;
import perflab.testing.MiniJson;
import perflab.testing.RawHttp;
import perflab.testing.ServerProcess;
import perflab.testing.TempDir;
import perflab.tools.Prefill;
import perflab.util.Bytes;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** /v0/entities over a database larger than the server's heap (-Xmx64m): complete, sorted, and no OOM. */
public class LargeRangeStreamTest {
    @Rule
    public final TempDir temp = new TempDir();

    @Test
    public void streamsADatabaseLargerThanTheHeap() throws Exception {
        Path dir = temp.dir("db");
        long keys = 1_000_000;
        int valueSize = 100;
        long seed = 42;
        Map<String, Object> prefill = MiniJson.object(Prefill.run(dir, "lsm", keys, valueSize, seed, "key"));
        long dbBytes = MiniJson.number(prefill.get("disk_bytes"));
        assertTrue("database (" + dbBytes + " bytes) must exceed the 64 MB heap", dbBytes > 96L << 20);
        try (ServerProcess p = ServerProcess.server(Arrays.asList("-Xmx64m", "-Xms16m"), "--port", "0",
                "--data-dir", dir.toString())) {
            p.awaitReady();
            try (RawHttp http = new RawHttp(p.port())) {
                // a few writes on top, so the stream merges a memtable with the tables
                http.call("PUT", "/v0/entity?id=key5", "fresh".getBytes(StandardCharsets.UTF_8));
                http.call("DELETE", "/v0/entity?id=key6");
                byte[][] previous = {null};
                long[] count = {0};
                long[] bytes = {0};
                http.send(RawHttp.request("GET", "/v0/entities?start=key", null));
                RawHttp.Response r = http.read(chunk -> {
                    int nl = indexOf(chunk, (byte) '\n');
                    byte[] key = Arrays.copyOfRange(chunk, 0, nl);
                    byte[] value = Arrays.copyOfRange(chunk, nl + 1, chunk.length);
                    if (previous[0] != null && Bytes.compare(previous[0], key) >= 0) {
                        throw new AssertionError("out of order: " + Bytes.string(previous[0]) + " then "
                                + Bytes.string(key));
                    }
                    previous[0] = key;
                    long i = Long.parseLong(Bytes.string(key).substring(3));
                    byte[] expected = i == 5 ? "fresh".getBytes(StandardCharsets.UTF_8)
                            : Prefill.value(seed, i, valueSize);
                    assertArrayEquals("value of " + Bytes.string(key), expected, value);
                    count[0]++;
                    bytes[0] += chunk.length;
                });
                assertEquals(200, r.status);
                assertEquals("every key but the deleted one", keys - 1, count[0]);
                assertTrue(bytes[0] > 64L << 20);
                Map<String, Object> stats = MiniJson.object(http.call("GET", "/v0/stats").text());
                long heapMax = MiniJson.number(MiniJson.object(stats.get("jvm")).get("heap_max"));
                assertTrue("heap_max " + heapMax, heapMax <= 64L << 20);
            }
            assertTrue("server died during the stream: " + p.stderr(), p.isAlive());
            p.terminate();
        }
    }

    private static int indexOf(byte[] a, byte b) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] == b) {
                return i;
            }
        }
        throw new AssertionError("chunk without a newline");
    }
}
