package perflab.events;

import java.time.Instant;

/**
 * The events' clock. {@code ts_us} is CLOCK_REALTIME in epoch microseconds (what {@code Instant.now()}
 * reads on Linux, the clock the load generator's interval log is anchored to); {@code dur_us} comes from
 * {@code System.nanoTime()} (CLOCK_MONOTONIC).
 * <p>
 * Start times are captured as {@code System.nanoTime()} and converted with an anchor, a (realtime,
 * monotonic) pair read back to back: the code being timed reads one cheap clock once, decides afterwards
 * whether the span is worth an event (e.g. a slow sync), and ts_us + dur_us is the end on the same scale.
 * The two clocks differ only by steps of the wall clock (NTP slewing moves both), so the anchor is renewed
 * every second by the event writer thread, which bounds how long a step goes unnoticed.
 */
public final class EventClock {
    private static volatile Anchor anchor = measure();

    private EventClock() {
    }

    private static final class Anchor {
        final long epochMicros;
        final long nanos;

        Anchor(long epochMicros, long nanos) {
            this.epochMicros = epochMicros;
            this.nanos = nanos;
        }
    }

    /** Epoch microseconds (CLOCK_REALTIME) at the moment {@code System.nanoTime()} returned {@code nanoTime}. */
    public static long epochMicros(long nanoTime) {
        Anchor a = anchor;
        return a.epochMicros + Math.floorDiv(nanoTime - a.nanos, 1000L);
    }

    public static long nowMicros() {
        return epochMicros(System.nanoTime());
    }

    public static long micros(Instant t) {
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1000);
    }

    /** Re-reads the pair (called every second by the event writer). */
    public static void reanchor() {
        anchor = measure();
    }

    /** The tightest of a few back-to-back reads, so a preemption between the two clocks cannot skew it. */
    private static Anchor measure() {
        long bestWidth = Long.MAX_VALUE;
        Anchor best = null;
        for (int i = 0; i < 5; i++) {
            long before = System.nanoTime();
            Instant wall = Instant.now();
            long after = System.nanoTime();
            if (after - before < bestWidth) {
                bestWidth = after - before;
                best = new Anchor(micros(wall), before + (after - before) / 2);
            }
        }
        return best;
    }
}
