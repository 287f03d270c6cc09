package perflab.storage;

import org.junit.After;
import org.junit.Assume;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import perflab.spec.MetricList;
import perflab.testing.TempDir;
import perflab.util.Bytes;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/** The behaviour every backend promises through {@link Storage}; one subclass per backend. */
public abstract class StorageContractTest {
    @Rule
    public final TempDir temp = new TempDir();

    protected Storage storage;
    protected Path dir;

    protected abstract String backend();

    protected boolean persistent() {
        return true;
    }

    /** Small memtables so that the tests cross flushes (and compactions for lsm). */
    protected Map<String, String> options() {
        Map<String, String> o = new HashMap<>();
        o.put("memtable-size", "64k");
        return o;
    }

    @Before
    public void open() throws IOException {
        dir = temp.dir("db");
        storage = StorageFactory.open(backend(), dir, options());
    }

    @After
    public void close() throws IOException {
        if (storage != null) {
            storage.close();
        }
    }

    protected void reopen() throws IOException {
        storage.close();
        storage = StorageFactory.open(backend(), dir, options());
    }

    static byte[] b(String s) {
        return Bytes.utf8(s);
    }

    static List<String> keys(RangeIterator it) {
        List<String> out = new ArrayList<>();
        try {
            while (it.hasNext()) {
                out.add(Bytes.string(it.next().key()));
            }
        } finally {
            it.close();
        }
        return out;
    }

    @Test
    public void putGetOverwrite() throws IOException {
        assertNull(storage.get(b("a")));
        storage.put(b("a"), b("1"));
        assertArrayEquals(b("1"), storage.get(b("a")));
        storage.put(b("a"), b("2"));
        assertArrayEquals(b("2"), storage.get(b("a")));
        assertNull(storage.get(b("b")));
    }

    @Test
    public void deleteHidesTheValueAndDeletingAbsentKeysIsFine() throws IOException {
        storage.put(b("a"), b("1"));
        storage.delete(b("a"));
        assertNull(storage.get(b("a")));
        storage.delete(b("never-written"));
        assertNull(storage.get(b("never-written")));
        storage.put(b("a"), b("3"));
        assertArrayEquals(b("3"), storage.get(b("a")));
    }

    @Test
    public void emptyValueIsAValueNotADelete() throws IOException {
        storage.put(b("e"), new byte[0]);
        byte[] v = storage.get(b("e"));
        assertNotNull(v);
        assertEquals(0, v.length);
        assertEquals(List.of("e"), keys(storage.range(null, null)));
        storage.flush();
        v = storage.get(b("e"));
        assertNotNull("empty value lost after flush", v);
        assertEquals(0, v.length);
    }

    @Test
    public void binaryKeysAndValuesRoundTrip() throws IOException {
        Random r = new Random(7);
        Map<byte[], byte[]> written = new HashMap<>();
        for (int i = 0; i < 300; i++) {
            byte[] k = new byte[1 + r.nextInt(40)];
            r.nextBytes(k);
            k[0] = (byte) i; // distinct
            byte[] v = new byte[r.nextInt(300)];
            r.nextBytes(v);
            storage.put(k, v);
            written.put(k, v);
        }
        byte[] all = new byte[256];
        for (int i = 0; i < 256; i++) {
            all[i] = (byte) i;
        }
        storage.put(all, all);
        written.put(all, all);
        storage.flush();
        for (Map.Entry<byte[], byte[]> e : written.entrySet()) {
            assertArrayEquals(e.getValue(), storage.get(e.getKey()));
        }
    }

    @Test
    public void rangeIsOrderedByUnsignedBytesWithInclusiveStartAndExclusiveEnd() throws IOException {
        byte[][] keys = {{0x01}, {0x01, 0x00}, {0x02}, {(byte) 0x7f}, {(byte) 0x80}, {(byte) 0xff}, {(byte) 0xff, 0x01}};
        for (int i = keys.length - 1; i >= 0; i--) {
            storage.put(keys[i], new byte[]{(byte) i});
        }
        List<byte[]> seen = new ArrayList<>();
        try (RangeIterator it = storage.range(null, null)) {
            while (it.hasNext()) {
                Entry e = it.next();
                assertArrayEquals(new byte[]{(byte) seen.size()}, e.value());
                seen.add(e.key());
            }
        }
        assertEquals(keys.length, seen.size());
        for (int i = 0; i < keys.length; i++) {
            assertArrayEquals(keys[i], seen.get(i));
        }
        assertEquals(3, count(storage.range(keys[1], keys[4])));           // [01 00, 02, 7f]
        assertEquals(0, count(storage.range(keys[3], keys[3])));           // empty when from == to
        assertEquals(keys.length - 4, count(storage.range(keys[4], null))); // open end
        assertEquals(4, count(storage.range(null, keys[4])));              // open start
    }

    private static int count(RangeIterator it) {
        int n = 0;
        try {
            while (it.hasNext()) {
                it.next();
                n++;
            }
        } finally {
            it.close();
        }
        return n;
    }

    @Test
    public void rangeSkipsDeletedKeysAndSeesOverwrites() throws IOException {
        for (int i = 0; i < 2000; i++) {
            storage.put(b(String.format("k%05d", i)), b("old" + i));
        }
        storage.flush();
        for (int i = 0; i < 2000; i += 3) {
            storage.delete(b(String.format("k%05d", i)));
        }
        for (int i = 1; i < 2000; i += 3) {
            storage.put(b(String.format("k%05d", i)), b("new" + i));
        }
        TreeMap<String, String> expected = new TreeMap<>();
        for (int i = 0; i < 2000; i++) {
            if (i % 3 != 0) {
                expected.put(String.format("k%05d", i), (i % 3 == 1 ? "new" : "old") + i);
            }
        }
        TreeMap<String, String> actual = new TreeMap<>();
        List<String> order = new ArrayList<>();
        try (RangeIterator it = storage.range(b("k00000"), b("k99999"))) {
            while (it.hasNext()) {
                Entry e = it.next();
                order.add(Bytes.string(e.key()));
                actual.put(Bytes.string(e.key()), Bytes.string(e.value()));
            }
        }
        assertEquals(expected, actual);
        assertEquals(new ArrayList<>(expected.keySet()), order);
    }

    @Test
    public void dataSurvivesReopen() throws IOException {
        Assume.assumeTrue(persistent());
        for (int i = 0; i < 3000; i++) {
            storage.put(b("key" + i), b("value" + i));
        }
        storage.delete(b("key7"));
        reopen();
        for (int i = 0; i < 3000; i++) {
            if (i == 7) {
                assertNull(storage.get(b("key7")));
            } else {
                assertArrayEquals("key" + i, b("value" + i), storage.get(b("key" + i)));
            }
        }
    }

    @Test
    public void aSecondOpenerIsToldAboutTheLock() throws IOException {
        Assume.assumeTrue(persistent());
        try {
            Storage second = StorageFactory.open(backend(), dir, options());
            second.close();
            fail("second open of a locked directory succeeded");
        } catch (StorageException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(DirectoryLock.FILE_NAME));
        }
    }

    @Test
    public void concurrentWritersAndReadersSeeConsistentValues() throws Exception {
        int writers = 4;
        int keysPerWriter = 2000;
        ExecutorService pool = Executors.newFixedThreadPool(writers + 2);
        Map<String, Integer> committed = new ConcurrentHashMap<>();
        List<Future<?>> futures = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            int id = w;
            futures.add(pool.submit(() -> {
                for (int round = 0; round < 3; round++) {
                    for (int i = 0; i < keysPerWriter; i++) {
                        String k = "w" + id + "-" + i;
                        storage.put(b(k), b(k + "@" + round));
                        committed.put(k, round);
                    }
                }
                return null;
            }));
        }
        for (int r = 0; r < 2; r++) {
            futures.add(pool.submit(() -> {
                Random rnd = new Random();
                for (int n = 0; n < 20000; n++) {
                    String k = "w" + rnd.nextInt(writers) + "-" + rnd.nextInt(keysPerWriter);
                    Integer floor = committed.get(k);
                    byte[] v = storage.get(b(k));
                    if (floor != null) {
                        assertNotNull("committed key " + k + " missing", v);
                        String s = Bytes.string(v);
                        int round = Integer.parseInt(s.substring(s.indexOf('@') + 1));
                        assertTrue(k + " went back from " + floor + " to " + round, round >= floor);
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get(120, TimeUnit.SECONDS);
        }
        pool.shutdown();
        for (int w = 0; w < writers; w++) {
            for (int i = 0; i < keysPerWriter; i++) {
                String k = "w" + w + "-" + i;
                assertArrayEquals(b(k + "@2"), storage.get(b(k)));
            }
        }
        assertEquals(writers * keysPerWriter, count(storage.range(b("w"), b("x"))));
    }

    @Test
    public void statsReportExactlyTheSpecifiedKeys() throws IOException {
        storage.put(b("a"), b("b"));
        Map<String, Object> s = storage.stats();
        assertEquals(backend(), s.get("backend"));
        for (String k : StorageStats.KEYS) {
            assertTrue("missing " + k, s.get(k) instanceof Long);
        }
        assertFalse(s.containsValue(null));
        // StatsReport writes only specified values: a key the spec lacks would silently never be reported
        assertEquals(new java.util.HashSet<>(MetricList.storageKeys(backend())), s.keySet());
    }
}
