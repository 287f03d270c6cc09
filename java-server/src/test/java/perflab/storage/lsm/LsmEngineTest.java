package perflab.storage.lsm;

import org.junit.After;
import org.junit.Rule;
import org.junit.Test;
import perflab.storage.CorruptionException;
import perflab.storage.Entry;
import perflab.storage.RangeIterator;
import perflab.storage.StorageException;
import perflab.storage.StorageOptions;
import perflab.testing.TempDir;
import perflab.util.Bytes;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/** Engine behaviour that needs the engine's insides: flushes, compaction, logs, files on disk. */
public class LsmEngineTest {
    @Rule
    public final TempDir temp = new TempDir();
    private LsmStorage db;

    @After
    public void closeDb() throws IOException {
        if (db != null) {
            db.close();
        }
    }

    private static StorageOptions opts(String... kv) {
        Map<String, String> m = new HashMap<>();
        m.put("memtable-size", "64k");
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return StorageOptions.parse(m, null);
    }

    private LsmStorage open(Path dir, StorageOptions o) throws IOException {
        db = LsmStorage.open(dir, o);
        return db;
    }

    private static byte[] b(String s) {
        return Bytes.utf8(s);
    }

    private static String s(byte[] b) {
        return b == null ? null : Bytes.string(b);
    }

    private long stat(String key) {
        return (Long) db.stats().get(key);
    }

    private static List<Path> files(Path dir, String glob) throws IOException {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, glob)) {
            for (Path p : ds) {
                out.add(p);
            }
        }
        Collections.sort(out);
        return out;
    }

    @Test
    public void newestVersionWinsAcrossMemtableImmutablesAndRuns() throws Exception {
        Path dir = temp.dir("db");
        open(dir, opts("compaction-threads", "0"));
        for (int i = 0; i < 500; i++) {
            db.put(b("k" + i), b("v1-" + i));
        }
        db.flush();
        for (int i = 0; i < 500; i += 2) {
            db.put(b("k" + i), b("v2-" + i));
        }
        db.flush();
        for (int i = 0; i < 500; i += 5) {
            db.delete(b("k" + i));
        }
        db.flush();
        for (int i = 0; i < 500; i += 10) {
            db.put(b("k" + i), b("v3-" + i)); // resurrected in the memtable
        }
        assertEquals(3L, stat("sorted_runs"));
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 500; i++) {
                String expected = i % 10 == 0 ? "v3-" + i : i % 5 == 0 ? null : i % 2 == 0 ? "v2-" + i : "v1-" + i;
                assertEquals("k" + i + " round " + round, expected, s(db.get(b("k" + i))));
            }
            db.close();
            open(dir, opts("compaction-threads", "0"));
        }
    }

    @Test
    public void flushAndCompactionUnderConcurrentWritersAndReaders() throws Exception {
        open(temp.dir("db"), opts("memtable-size", "64k", "max-immutable", "2", "flush-threads", "2",
                "compaction-threads", "2", "table-size", "1m"));
        int writers = 3;
        int keys = 3000;
        int rounds = 6;
        AtomicLongArray committed = new AtomicLongArray(writers * keys);
        for (int i = 0; i < committed.length(); i++) {
            committed.set(i, -1);
        }
        java.util.concurrent.atomic.AtomicIntegerArray writerRound =
                new java.util.concurrent.atomic.AtomicIntegerArray(writers);
        ExecutorService pool = Executors.newFixedThreadPool(writers + 2);
        List<Future<?>> futures = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            int id = w;
            futures.add(pool.submit(() -> {
                Random r = new Random(id);
                for (int round = 0; round < rounds; round++) {
                    writerRound.set(id, round); // before any write of the round: readers may see it early
                    for (int i = 0; i < keys; i++) {
                        int slot = id * keys + i;
                        String k = String.format("w%d-%05d", id, i);
                        if (round == rounds - 1 && i % 4 == 0) {
                            db.delete(b(k));
                            committed.set(slot, Long.MAX_VALUE);
                        } else {
                            byte[] v = new byte[20 + r.nextInt(200)];
                            byte[] tag = b(k + "@" + round + "#");
                            System.arraycopy(tag, 0, v, 0, Math.min(tag.length, v.length));
                            db.put(b(k), v);
                            committed.set(slot, round);
                        }
                    }
                }
                return null;
            }));
        }
        for (int rd = 0; rd < 2; rd++) {
            futures.add(pool.submit(() -> {
                Random r = new Random();
                for (int n = 0; n < 40000; n++) {
                    int slot = r.nextInt(writers * keys);
                    long floor = committed.get(slot);
                    String k = String.format("w%d-%05d", slot / keys, slot % keys);
                    byte[] v = db.get(b(k));
                    boolean mayBeDeleted = slot % keys % 4 == 0 && writerRound.get(slot / keys) == rounds - 1;
                    if (floor == Long.MAX_VALUE) {
                        assertNull(k + " deleted but visible", v);
                    } else if (floor >= 0 && !(v == null && mayBeDeleted)) {
                        String str = s(v);
                        assertTrue(k + " missing after commit of round " + floor, str != null);
                        int round = Integer.parseInt(str.substring(str.indexOf('@') + 1, str.indexOf('#')));
                        assertTrue(k + " regressed from " + floor + " to " + round, round >= floor);
                    }
                    if (n % 5000 == 0) {
                        // a range read while runs are being swapped must stay sorted
                        byte[] prev = null;
                        try (RangeIterator it = db.range(b("w0-"), b("w0-01000"))) {
                            while (it.hasNext()) {
                                byte[] key = it.next().key();
                                assertTrue(prev == null || Bytes.compare(prev, key) < 0);
                                prev = key;
                            }
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get(180, TimeUnit.SECONDS);
        }
        pool.shutdown();
        db.awaitCompactions();
        assertTrue("expected flushes", stat("flushes") > 10);
        assertTrue("expected compactions", stat("compactions") > 0);
        TreeMap<String, Integer> expected = new TreeMap<>();
        for (int w = 0; w < writers; w++) {
            for (int i = 0; i < keys; i++) {
                if (i % 4 != 0) {
                    expected.put(String.format("w%d-%05d", w, i), rounds - 1);
                }
            }
        }
        TreeMap<String, Integer> actual = new TreeMap<>();
        try (RangeIterator it = db.range(null, null)) {
            while (it.hasNext()) {
                Entry e = it.next();
                String v = s(e.value());
                actual.put(s(e.key()), Integer.parseInt(v.substring(v.indexOf('@') + 1, v.indexOf('#'))));
            }
        }
        assertEquals(expected, actual);
        assertTrue("runs should stay bounded, got " + stat("sorted_runs"),
                stat("sorted_runs") < CompactionPolicy.MAX_RUNS + 2);
    }

    @Test
    public void tombstonesArePurgedOnceTheOldestRunIsCompacted() throws Exception {
        open(temp.dir("db"), opts("compaction-threads", "1"));
        for (int i = 0; i < 2000; i++) {
            db.put(b(String.format("k%05d", i)), new byte[100]);
        }
        db.flush();
        for (int i = 0; i < 2000; i++) {
            db.delete(b(String.format("k%05d", i)));
        }
        db.flush();
        // newer runs pile up until the policy merges everything down into the oldest run
        for (int round = 0; round < 30 && stat("tombstones_purged") == 0; round++) {
            for (int i = 0; i < 50; i++) {
                db.put(b("filler" + round + "-" + i), new byte[1000]);
            }
            db.flush();
            db.awaitCompactions();
        }
        assertTrue("no tombstone purged", stat("tombstones_purged") >= 2000);
        for (int i = 0; i < 2000; i += 97) {
            assertNull(db.get(b(String.format("k%05d", i))));
        }
        long entries = 0;
        for (SortedRun r : db.state().version.runs) {
            entries += r.entries;
        }
        assertTrue("purged data still on disk: " + entries + " entries", entries < 2000);
    }

    @Test
    public void writesStallInsteadOfGrowingWithoutBound() throws Exception {
        open(temp.dir("db"), opts("memtable-size", "64k", "max-immutable", "1", "compaction-threads", "0"));
        byte[] v = new byte[1000];
        for (int i = 0; i < 3000; i++) { // ~3 MB through 64 KB memtables
            db.put(b("k" + i), v);
            assertTrue(db.state().immutables.size() <= 1);
        }
        assertTrue(stat("flushes") > 20);
        assertTrue("expected at least one stall with a single immutable slot", stat("write_stalls") > 0);
    }

    @Test
    public void logIsReplayedAfterACrash() throws Exception {
        Path dir = temp.dir("db");
        open(dir, opts("memtable-size", "4m"));
        for (int i = 0; i < 1000; i++) {
            db.put(b("k" + i), b("v" + i));
        }
        db.delete(b("k5"));
        db.crashForTest();
        db = null;
        assertEquals(1, files(dir, "*.wal").size());
        open(dir, opts("memtable-size", "4m"));
        for (int i = 0; i < 1000; i++) {
            assertEquals(i == 5 ? null : "v" + i, s(db.get(b("k" + i))));
        }
    }

    @Test
    public void aTornTailIsDroppedAndEverythingBeforeItKept() throws Exception {
        Path dir = temp.dir("db");
        open(dir, opts("memtable-size", "4m"));
        for (int i = 0; i < 100; i++) {
            db.put(b("k" + i), b("v" + i));
        }
        db.crashForTest();
        db = null;
        Path wal = files(dir, "*.wal").get(0);
        int end = endOfRecords(wal);
        try (RandomAccessFile f = new RandomAccessFile(wal.toFile(), "rw")) {
            // an append cut short: length says 40 bytes, only part of the payload made it
            f.seek(end);
            f.writeInt(40);
            f.writeInt(0x12345678);
            f.write(new byte[]{1, 3, 'x', 'y'});
        }
        open(dir, opts("memtable-size", "4m"));
        for (int i = 0; i < 100; i++) {
            assertEquals("v" + i, s(db.get(b("k" + i))));
        }
        assertEquals(100, count(db.range(null, null)));
    }

    @Test
    public void aTruncatedLogKeepsItsCompleteRecords() throws Exception {
        Path dir = temp.dir("db");
        open(dir, opts("memtable-size", "4m"));
        for (int i = 0; i < 100; i++) {
            db.put(b("k" + i), b("value-" + i));
        }
        db.crashForTest();
        db = null;
        Path wal = files(dir, "*.wal").get(0);
        int end = endOfRecords(wal);
        try (RandomAccessFile f = new RandomAccessFile(wal.toFile(), "rw")) {
            f.setLength(end - 5); // the last record loses its tail
        }
        open(dir, opts("memtable-size", "4m"));
        for (int i = 0; i < 99; i++) {
            assertEquals("value-" + i, s(db.get(b("k" + i))));
        }
        assertNull(db.get(b("k99")));
    }

    @Test
    public void corruptionInTheMiddleOfALogRefusesToStart() throws Exception {
        Path dir = temp.dir("db");
        open(dir, opts("memtable-size", "4m"));
        for (int i = 0; i < 100; i++) {
            db.put(b("k" + i), b("value-" + i));
        }
        db.crashForTest();
        db = null;
        Path wal = files(dir, "*.wal").get(0);
        try (RandomAccessFile f = new RandomAccessFile(wal.toFile(), "rw")) {
            f.seek(WalFormat.HEADER + 12); // inside the first record's payload
            f.write('#');
        }
        try {
            open(dir, opts("memtable-size", "4m"));
            fail("opened a log with a corrupted record followed by valid ones");
        } catch (CorruptionException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(wal.toString()));
            assertTrue(e.getMessage(), e.getMessage().contains("checksum mismatch"));
        }
        db = null;
        assertTrue("the log must be left in place", Files.exists(wal));
    }

    private static int endOfRecords(Path wal) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(wal.toFile(), "r")) {
            int pos = WalFormat.HEADER;
            while (true) {
                f.seek(pos);
                int len = f.readInt();
                if (len == 0) {
                    return pos;
                }
                pos += WalFormat.RECORD_HEADER + len;
            }
        }
    }

    @Test
    public void aCorruptedDataBlockIsReportedWithTheFileName() throws Exception {
        Path dir = temp.dir("db");
        open(dir, opts("compaction-threads", "0"));
        for (int i = 0; i < 1000; i++) {
            db.put(b(String.format("k%04d", i)), b("value-" + i));
        }
        db.close();
        db = null;
        Path table = files(dir, "*.sst").get(0);
        try (RandomAccessFile f = new RandomAccessFile(table.toFile(), "rw")) {
            f.seek(10); // first data block
            int c = f.read();
            f.seek(10);
            f.write(c ^ 0x40);
        }
        open(dir, opts("compaction-threads", "0"));
        try {
            db.get(b("k0000"));
            fail("read a corrupted block without noticing");
        } catch (CorruptionException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(table.toString()));
        }
        try (RangeIterator it = db.range(null, null)) {
            it.hasNext();
            it.next();
            fail("iterated over a corrupted block without noticing");
        } catch (java.io.UncheckedIOException | IllegalStateException e) {
            assertTrue(String.valueOf(e.getMessage()), String.valueOf(e.getMessage()).contains("checksum"));
        } catch (CorruptionException e) {
            assertTrue(e.getMessage().contains(table.toString()));
        }
        assertEquals("value-999", s(db.get(b("k0999")))); // other blocks are fine
    }

    @Test
    public void aCorruptedIndexRefusesToStartNamingTheFile() throws Exception {
        Path dir = temp.dir("db");
        open(dir, opts("compaction-threads", "0"));
        for (int i = 0; i < 1000; i++) {
            db.put(b(String.format("k%04d", i)), b("value-" + i));
        }
        db.close();
        db = null;
        Path table = files(dir, "*.sst").get(0);
        long size = Files.size(table);
        long indexOffset;
        try (RandomAccessFile f = new RandomAccessFile(table.toFile(), "rw")) {
            f.seek(size - TableFormat.FOOTER_SIZE);
            indexOffset = f.readLong();
            f.seek(indexOffset + 6);
            int c = f.read();
            f.seek(indexOffset + 6);
            f.write(c ^ 1);
        }
        try {
            open(dir, opts());
            fail("opened a table with a corrupted index");
        } catch (CorruptionException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("corrupted SSTable " + table));
            assertTrue(e.getMessage(), e.getMessage().contains("index"));
        }
        db = null;
        assertTrue(Files.exists(table));
    }

    @Test
    public void aMissingManifestWithTablesRefusesToStart() throws Exception {
        Path dir = temp.dir("db");
        open(dir, opts());
        db.put(b("a"), b("b"));
        db.close();
        db = null;
        Files.delete(dir.resolve(FileNames.MANIFEST));
        try {
            open(dir, opts());
            fail("started without knowing which tables are live");
        } catch (CorruptionException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("MANIFEST"));
        }
        db = null;
    }

    @Test
    public void unpublishedTablesAndTempFilesAreRemovedAtOpen() throws Exception {
        Path dir = temp.dir("db");
        open(dir, opts());
        db.put(b("a"), b("b"));
        db.close();
        db = null;
        Path live = files(dir, "*.sst").get(0);
        Path orphan = dir.resolve("999999.sst");
        Files.copy(live, orphan);
        Files.write(dir.resolve("000777.sst.tmp"), new byte[10]);
        open(dir, opts());
        assertEquals("b", s(db.get(b("a"))));
        assertTrue(Files.exists(live));
        assertTrue(!Files.exists(orphan) && !Files.exists(dir.resolve("000777.sst.tmp")));
    }

    @Test
    public void valuesLargerThanTheMemtableAndTheLogSegment() throws Exception {
        Path dir = temp.dir("db");
        open(dir, opts("memtable-size", "64k"));
        byte[] big = new byte[3 << 20];
        new Random(1).nextBytes(big);
        db.put(b("big"), big);
        db.put(b("small"), b("x"));
        assertArrayEquals(big, db.get(b("big")));
        db.close();
        open(dir, opts("memtable-size", "64k"));
        assertArrayEquals(big, db.get(b("big")));
        assertEquals("x", s(db.get(b("small"))));
    }

    @Test
    public void alwaysPolicySyncsTheLogForEveryAcknowledgedWrite() throws Exception {
        open(temp.dir("db"), opts("wal", "always"));
        for (int i = 0; i < 50; i++) {
            db.put(b("k" + i), b("v"));
        }
        assertTrue(stat("wal_syncs") >= 1);
        assertTrue(stat("wal_bytes") > 50 * 10);
    }

    @Test
    public void batchPolicySyncsInTheBackground() throws Exception {
        open(temp.dir("db"), opts("wal", "batch", "wal-batch-delay", "2ms"));
        db.put(b("k"), b("v"));
        long deadline = System.currentTimeMillis() + 30_000; // the 2 ms is the policy's; a busy machine may take longer
        while (stat("wal_syncs") == 0 && System.currentTimeMillis() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(stat("wal_syncs") > 0);
    }

    @Test
    public void bulkIngestBecomesTheNewestRun() throws Exception {
        Path dir = temp.dir("db");
        open(dir, opts());
        db.put(b("k1"), b("old"));
        db.put(b("k3"), b("kept"));
        List<Entry> sorted = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            sorted.add(new Entry(b("k" + i), b("bulk" + i)));
        }
        sorted.remove(3);
        db.ingestSorted(sorted.iterator(), sorted.size(), 100);
        db.put(b("k2"), b("after"));
        assertEquals("bulk1", s(db.get(b("k1"))));
        assertEquals("after", s(db.get(b("k2"))));
        assertEquals("kept", s(db.get(b("k3"))));
        db.close();
        open(dir, opts());
        assertEquals("bulk1", s(db.get(b("k1"))));
        assertEquals("after", s(db.get(b("k2"))));
        assertEquals("bulk4", s(db.get(b("k4"))));
    }

    @Test
    public void closedStorageRejectsWritesClearly() throws Exception {
        open(temp.dir("db"), opts());
        db.close();
        try {
            db.put(b("a"), b("b"));
            fail();
        } catch (StorageException e) {
            assertTrue(e.getMessage().contains("closed"));
        }
        db = null;
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
}
