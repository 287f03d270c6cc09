package perflab.storage.lsm;

import org.junit.Rule;
import org.junit.Test;
import perflab.testing.TempDir;
import perflab.util.Bytes;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

/** The SSTable writer and reader against each other, and the bloom filter's error rate. */
public class TableFormatTest {
    @Rule
    public final TempDir temp = new TempDir();

    private static TreeMap<byte[], byte[]> randomData(int n, long seed) {
        Random r = new Random(seed);
        TreeMap<byte[], byte[]> m = new TreeMap<>(Bytes.ORDER);
        while (m.size() < n) {
            byte[] k = new byte[1 + r.nextInt(30)];
            r.nextBytes(k);
            byte[] v = r.nextInt(20) == 0 ? null : new byte[r.nextInt(r.nextInt(50) == 0 ? 20000 : 300)];
            if (v != null) {
                r.nextBytes(v);
            }
            m.put(k, v);
        }
        return m;
    }

    private SsTable write(Path path, TreeMap<byte[], byte[]> data, int blockSize) throws Exception {
        try (SsTableWriter w = new SsTableWriter(path, blockSize, 10, data.size())) {
            for (java.util.Map.Entry<byte[], byte[]> e : data.entrySet()) {
                w.add(e.getKey(), e.getValue());
            }
            w.finish();
        }
        return SsTable.open(path, 1);
    }

    @Test
    public void everyEntryIsFoundAndAbsentKeysAreNot() throws Exception {
        TreeMap<byte[], byte[]> data = randomData(5000, 1);
        SsTable t = write(temp.dir("t.sst"), data, 1024);
        try {
            assertEquals(5000, t.entries);
            assertTrue(t.blockCount() > 50);
            assertArrayEquals(data.firstKey(), t.firstKey);
            assertArrayEquals(data.lastKey(), t.lastKey);
            for (java.util.Map.Entry<byte[], byte[]> e : data.entrySet()) {
                byte[] got = t.get(e.getKey());
                if (e.getValue() == null) {
                    assertSame(SsTable.DELETED, got);
                } else {
                    assertArrayEquals(e.getValue(), got);
                }
            }
            Random r = new Random(99);
            for (int i = 0; i < 2000; i++) {
                byte[] k = new byte[31 + r.nextInt(5)]; // longer than any written key: never present
                r.nextBytes(k);
                assertNull(t.get(k));
            }
        } finally {
            t.release();
        }
    }

    @Test
    public void cursorsSeekAndIterateInOrder() throws Exception {
        TreeMap<byte[], byte[]> data = randomData(3000, 2);
        SsTable t = write(temp.dir("t.sst"), data, 512);
        try {
            List<byte[]> keys = new ArrayList<>(data.keySet());
            Random r = new Random(3);
            for (int trial = 0; trial < 50; trial++) {
                byte[] from = trial == 0 ? null : keys.get(r.nextInt(keys.size()));
                if (trial % 7 == 0 && from != null) {
                    from = java.util.Arrays.copyOf(from, from.length + 1); // between two keys
                }
                java.util.NavigableMap<byte[], byte[]> expected = from == null ? data : data.tailMap(from, true);
                TableCursor c = new TableCursor(t, from);
                for (java.util.Map.Entry<byte[], byte[]> e : expected.entrySet()) {
                    assertTrue(c.valid());
                    assertArrayEquals(e.getKey(), c.key());
                    assertArrayEquals(e.getValue(), c.value());
                    c.next();
                }
                assertFalse(c.valid());
            }
        } finally {
            t.release();
        }
    }

    @Test
    public void bloomFilterHasNoFalseNegativesAndAFewPercentFalsePositives() {
        int n = 100_000;
        BloomFilter.Builder builder = new BloomFilter.Builder(n, 10);
        for (int i = 0; i < n; i++) {
            builder.add(KeyHash.hash(Bytes.utf8("key" + i)));
        }
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(builder.serializedSize());
        builder.writeTo(buf);
        for (int i = 0; i < n; i++) {
            assertTrue(BloomFilter.mightContain(buf, 0, KeyHash.hash(Bytes.utf8("key" + i))));
        }
        int falsePositives = 0;
        for (int i = 0; i < n; i++) {
            if (BloomFilter.mightContain(buf, 0, KeyHash.hash(Bytes.utf8("other" + i)))) {
                falsePositives++;
            }
        }
        double rate = falsePositives / (double) n;
        assertTrue("false-positive rate " + rate, rate < 0.03);
    }

    @Test
    public void absentKeysAreMostlyRejectedByTheBloomFilter() throws Exception {
        TreeMap<byte[], byte[]> data = new TreeMap<>(Bytes.ORDER);
        for (int i = 0; i < 1000; i++) {
            data.put(Bytes.utf8(String.format("k%04d", i)), Bytes.utf8("v"));
        }
        SsTable t = write(temp.dir("t.sst"), data, 4096);
        try {
            int negatives = 0;
            int maybe = 0;
            for (int i = 0; i < 999; i++) { // "k0999x" would be past the last key: no bloom probe at all
                byte[] k = Bytes.utf8(String.format("k%04dx", i));
                int r = t.mightContain(k, KeyHash.hash(k));
                negatives += r == SsTable.BLOOM_NEGATIVE ? 1 : 0;
                maybe += r == SsTable.MAYBE ? 1 : 0;
            }
            assertTrue(negatives > 950);
            assertEquals(999, negatives + maybe);
            byte[] past = Bytes.utf8("k0999x");
            assertEquals(SsTable.OUT_OF_RANGE, t.mightContain(past, KeyHash.hash(past)));
            byte[] present = Bytes.utf8("k0500");
            assertEquals(SsTable.MAYBE, t.mightContain(present, KeyHash.hash(present)));
        } finally {
            t.release();
        }
    }
}
