package perflab.tools;

import org.junit.Rule;
import org.junit.Test;
import perflab.storage.Storage;
import perflab.storage.StorageFactory;
import perflab.testing.MiniJson;
import perflab.testing.TempDir;
import perflab.util.Bytes;

import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

public class PrefillInspectTest {
    @Rule
    public final TempDir temp = new TempDir();

    private void prefillThenRead(String backend) throws Exception {
        Path dir = temp.dir(backend);
        Map<String, Object> summary = MiniJson.object(Prefill.run(dir, backend, 20_000, 64, 7, "user"));
        assertEquals(20_000L, summary.get("keys"));
        assertEquals(backend, summary.get("backend"));
        assertTrue(MiniJson.number(summary.get("sstables")) >= 1);
        try (Storage s = StorageFactory.open(backend, dir, Collections.emptyMap())) {
            for (long i = 0; i < 20_000; i += 37) {
                assertArrayEquals(Prefill.value(7, i, 64), s.get(Bytes.utf8("user" + i)));
            }
            assertNull(s.get(Bytes.utf8("user20000")));
        }
        Map<String, Object> d = MiniJson.object(Inspect.describe(dir));
        assertEquals(backend, d.get("backend"));
        assertEquals(20_000L, MiniJson.object(d.get("totals")).get("entries"));
        List<?> tables = (List<?>) d.get("sstables");
        Map<String, Object> first = MiniJson.object(tables.get(0));
        for (String k : new String[]{"file", "entries", "bytes", "first_key", "last_key", "level"}) {
            assertTrue("missing " + k, first.containsKey(k));
        }
        assertEquals("user0", first.get("first_key"));
    }

    @Test
    public void lsm() throws Exception {
        prefillThenRead("lsm");
    }

    @Test
    public void rocksdb() throws Exception {
        prefillThenRead("rocksdb");
    }

    @Test
    public void valuesAreDeterministicAndPrintable() {
        assertArrayEquals(Prefill.value(1, 5, 100), Prefill.value(1, 5, 100));
        assertTrue(!java.util.Arrays.equals(Prefill.value(1, 5, 100), Prefill.value(2, 5, 100)));
        for (byte c : Prefill.value(3, 9, 1000)) {
            assertTrue(Character.isLetterOrDigit(c) || c == '-' || c == '_');
        }
    }

    @Test
    public void severalRunsAndSmallTables() throws Exception {
        Path dir = temp.dir("runs");
        Map<String, String> opts = new HashMap<>();
        opts.put("table-size", "1m");
        Map<String, Object> summary = MiniJson.object(Prefill.run(dir, "lsm", 50_000, 100, 1, "key", 3, opts));
        assertEquals(3L, summary.get("runs"));
        Map<String, Object> d = MiniJson.object(Inspect.describe(dir));
        assertEquals(3L, MiniJson.object(d.get("totals")).get("runs"));
        assertTrue(MiniJson.number(MiniJson.object(d.get("totals")).get("sstables")) > 3);
        try (Storage s = StorageFactory.open("lsm", dir, Collections.emptyMap())) {
            for (long i = 0; i < 50_000; i += 101) {
                assertArrayEquals(Prefill.value(1, i, 100), s.get(Bytes.utf8("key" + i)));
            }
        }
    }

    @Test
    public void memoryBackendIsRefused() throws Exception {
        try {
            Prefill.run(temp.dir("m"), "memory", 10, 10, 1, "k");
            fail();
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage().contains("persistent"));
        }
    }
}
