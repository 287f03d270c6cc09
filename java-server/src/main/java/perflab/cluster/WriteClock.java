package perflab.cluster;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Write timestamps: {@code (epoch ms << 20) | (sequence << 8) | node index}, unsigned 64-bit. The sequence
 * (12 bits) orders writes of one coordinator within a millisecond and the node index breaks ties between
 * coordinators, so two different writes never carry the same timestamp and "newest wins" is a total order.
 * Strictly increasing per node even if the wall clock steps back (then it runs ahead until the clock
 * catches up), and ahead of every write this node has stored as a replica ({@link #observe}). Otherwise
 * the order across nodes is the wall clocks' order: last write wins, as precise as the clocks agree.
 */
public final class WriteClock {
    private static final int NODE_BITS = 8;
    private static final int SEQUENCE_BITS = 12;

    private final int node;
    private final LongSupplier millis;
    /** The last (ms << 12 | sequence) handed out. */
    private final AtomicLong last = new AtomicLong();

    public WriteClock(int node) {
        this(node, System::currentTimeMillis);
    }

    WriteClock(int node, LongSupplier millis) {
        if (node < 0 || node >= Topology.MAX_NODES) {
            throw new IllegalArgumentException("node index must be between 0 and 255, got " + node);
        }
        this.node = node;
        this.millis = millis;
    }

    public long next() {
        long now = millis.getAsLong() << SEQUENCE_BITS;
        long tick = last.accumulateAndGet(now, (prev, wall) -> Math.max(prev + 1, wall));
        return tick << NODE_BITS | node;
    }

    /**
     * Moves this clock past a timestamp seen from another node (a write this node stores as a replica), so
     * that a write coordinated here after it, in the same millisecond or with this node's clock slightly
     * behind, still gets a newer timestamp (a hybrid logical clock's receive rule).
     */
    public void observe(long timestamp) {
        long tick = timestamp >>> NODE_BITS;
        last.accumulateAndGet(tick, Math::max);
    }

    /** The wall-clock milliseconds of a timestamp. */
    public static long millisOf(long timestamp) {
        return timestamp >>> (NODE_BITS + SEQUENCE_BITS);
    }
}
