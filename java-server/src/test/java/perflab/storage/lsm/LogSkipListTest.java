package perflab.storage.lsm;

import org.junit.Test;
import perflab.util.Bytes;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

/** The lock-free memtable index under concurrent inserts (with repeated keys) and concurrent lookups. */
public class LogSkipListTest {
    @Test
    public void concurrentInsertsKeepOrderAndNewestVersionFirst() throws Exception {
        ByteBuffer log = ByteBuffer.allocate(64 << 20);
        AtomicInteger end = new AtomicInteger(16);
        LogSkipList list = new LogSkipList(log);
        int threads = 4;
        int perThread = 40_000;
        ConcurrentHashMap<String, Integer> newestPos = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads + 2);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            futures.add(pool.submit(() -> {
                Random r = new Random(id);
                for (int n = 0; n < perThread; n++) {
                    byte[] key = Bytes.utf8("k" + r.nextInt(20_000)); // many repeats across threads
                    int pos;
                    synchronized (end) { // like the log: the position is assigned in append order
                        pos = end.getAndAdd(key.length + 4);
                        log.put(pos, key);
                        log.putInt(pos + key.length, pos);
                    }
                    list.insert(key, pos, 4);
                    newestPos.merge(Bytes.string(key), pos, Math::max);
                }
                return null;
            }));
        }
        for (int t = 0; t < 2; t++) {
            futures.add(pool.submit(() -> {
                Random r = new Random();
                for (int n = 0; n < 100_000; n++) {
                    String k = "k" + r.nextInt(20_000);
                    Integer seen = newestPos.get(k);
                    int node = list.find(Bytes.utf8(k));
                    if (seen != null) {
                        assertNotEquals(k + " inserted but not found", 0, node);
                        assertTrue("an older version came first for " + k, list.keyPos(node) >= seen);
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get(120, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertEquals(threads * perThread, list.size());
        TreeMap<String, Integer> expected = new TreeMap<>();
        for (java.util.Map.Entry<String, Integer> e : newestPos.entrySet()) {
            expected.put(e.getKey(), e.getValue());
        }
        // level 0 walk: strictly increasing keys, each at its newest position
        List<String> keys = new ArrayList<>();
        byte[] prev = null;
        for (int node = list.first(); node != 0; node = list.nextKey(node)) {
            byte[] k = list.key(node);
            assertTrue(prev == null || Bytes.compare(prev, k) < 0);
            assertEquals((int) expected.get(Bytes.string(k)), list.keyPos(node));
            keys.add(Bytes.string(k));
            prev = k;
        }
        assertEquals(new ArrayList<>(expected.keySet()), keys);
    }
}
