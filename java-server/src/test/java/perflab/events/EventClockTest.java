package perflab.events;

import org.junit.Test;

import java.time.Instant;

import static org.junit.Assert.assertTrue;

public class EventClockTest {
    /** ts_us must be CLOCK_REALTIME: what Instant.now() reads, bracketed by two reads of it. */
    @Test
    public void anchoredMonotonicTimeIsTheWallClock() {
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 1000; i++) {
                long before = EventClock.micros(Instant.now());
                long ours = EventClock.nowMicros();
                long after = EventClock.micros(Instant.now());
                assertTrue(before + " <= " + ours + " <= " + after + " (1 ms slack)",
                        ours >= before - 1000 && ours <= after + 1000);
            }
            EventClock.reanchor();
        }
    }

    @Test
    public void aStartTimeIsConvertedNotResampled() {
        long start = System.nanoTime();
        long ts = EventClock.epochMicros(start);
        long later = EventClock.epochMicros(start + 2_500_000L);
        assertTrue("2.5 ms later on the same scale: " + (later - ts), later - ts == 2500);
    }
}
