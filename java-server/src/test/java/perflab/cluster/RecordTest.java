package perflab.cluster;

import org.junit.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/** The stored record encoding and the write clock. */
public class RecordTest {
    @Test
    public void valuesAndTombstonesRoundTrip() {
        byte[] v = "hello".getBytes(StandardCharsets.UTF_8);
        byte[] stored = Record.value(0x0102030405060708L, v).encode();
        assertArrayEquals(new byte[]{(byte) 0xC1, 1, 2, 3, 4, 5, 6, 7, 8, 'h', 'e', 'l', 'l', 'o'}, stored);
        Record r = Record.decode(stored);
        assertTrue(r.isLive());
        assertEquals(0x0102030405060708L, r.timestamp);
        assertArrayEquals(v, r.valueCopy());
        assertEquals(5, r.valueLength());
        assertSame(stored, r.valueArray()); // the read path answers from the stored bytes, uncopied

        Record empty = Record.decode(Record.value(-1L, new byte[0]).encode());
        assertTrue(empty.isLive());
        assertEquals(0, empty.valueCopy().length);
        assertEquals(-1L, empty.timestamp); // the top bit is data: timestamps are unsigned

        byte[] t = Record.tombstone(42).encode();
        assertArrayEquals(new byte[]{(byte) 0xC0, 0, 0, 0, 0, 0, 0, 0, 42}, t);
        Record dead = Record.decode(t);
        assertFalse(dead.isLive());
        assertNull(dead.valueCopy());
        assertEquals(42, dead.timestamp);
    }

    @Test
    public void plainValuesAreNotMistakenForRecords() {
        for (byte[] plain : new byte[][]{new byte[0], "hello world".getBytes(StandardCharsets.UTF_8),
                {(byte) 0xC0, 0, 0, 0, 0, 0, 0, 0, 1, 'x'}, {(byte) 0xC1, 0, 0}}) {
            try {
                Record.decode(plain);
                fail("decoded " + plain.length + " plain bytes");
            } catch (IllegalStateException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("without --cluster"));
            }
        }
    }

    @Test
    public void newestComparesTimestampsUnsigned() {
        Record a = Record.value(1, new byte[0]);
        Record b = Record.tombstone(2);
        Record high = Record.value(0x8000000000000000L, new byte[0]);
        assertSame(b, Record.newest(a, b));
        assertSame(b, Record.newest(b, a));
        assertSame(high, Record.newest(b, high));
        assertSame(a, Record.newest(null, a));
        assertSame(a, Record.newest(a, null));
        assertNull(Record.newest(null, null));
    }

    @Test
    public void theWriteClockIsStrictlyIncreasingAndNamesItsNode() {
        AtomicLong wall = new AtomicLong(1_700_000_000_000L);
        WriteClock clock = new WriteClock(5, wall::get);
        long first = clock.next();
        assertEquals(1_700_000_000_000L, WriteClock.millisOf(first));
        assertEquals(5, first & 0xff);
        long prev = first;
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 10_000; i++) { // many in one millisecond, and a clock that steps back
            if (i == 5000) {
                wall.addAndGet(-1000);
            }
            long ts = clock.next();
            assertTrue(Long.compareUnsigned(ts, prev) > 0);
            assertEquals(5, ts & 0xff);
            assertTrue(seen.add(ts));
            prev = ts;
        }
        wall.set(1_800_000_000_000L);
        assertEquals(1_800_000_000_000L, WriteClock.millisOf(clock.next()));
        // a timestamp seen from another node moves the clock past it, even one from the future
        long foreign = (1_900_000_000_000L << 20) | (7 << 8) | 3;
        clock.observe(foreign);
        long after = clock.next();
        assertTrue(Long.compareUnsigned(after, foreign) > 0);
        assertEquals(5, after & 0xff);
        clock.observe(1); // an old one changes nothing
        assertTrue(Long.compareUnsigned(clock.next(), after) > 0);
        // two coordinators in the same millisecond never produce the same timestamp
        assertTrue(new WriteClock(1, wall::get).next() != new WriteClock(2, wall::get).next());
    }
}
