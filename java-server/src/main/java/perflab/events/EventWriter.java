package perflab.events;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.LongAdder;

/**
 * Writes events as JSON lines on one background thread, five times a second. Sources only offer to a
 * bounded queue that nobody waits on (an offer never wakes a thread), so a slow reader of stdout (a full
 * pipe) stalls this thread, never a request or a flush: when the queue is full the event is dropped and
 * counted. The thread also runs periodic {@link Ticker}s (closing queue_full episodes) and renews the
 * clock anchor.
 */
public final class EventWriter implements EventSink, AutoCloseable {
    /** Room for bursts (a GC storm, many flushes) while stdout is slow; each event is ~200 bytes. */
    static final int CAPACITY = 4096;
    /** Queued events are written this often (so a line appears at most ~0.2 s after its event ended). */
    private static final long WRITE_EVERY_NANOS = 200_000_000L;
    /** How often tickers run while one of them has something open (e.g. a queue_full episode). */
    private static final long BUSY_TICK_NANOS = 50_000_000L;
    /** Otherwise once a second, which also renews the clock anchor. */
    private static final long IDLE_TICK_NANOS = 1_000_000_000L;

    /** Periodic work on the writer thread. */
    public interface Ticker {
        /**
         * @param closing true on the last call, at shutdown: finish whatever is open
         * @return whether something is still open (then the next call comes within ~50 ms, else ~1 s)
         */
        boolean tick(long nowNanos, boolean closing);
    }

    private final ArrayBlockingQueue<Event> queue = new ArrayBlockingQueue<>(CAPACITY);
    private final PrintStream out;
    private final LongAdder written = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final List<Ticker> tickers = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean closing;

    public EventWriter(PrintStream out) {
        this.out = out;
        this.thread = new Thread(this::run, "event-writer");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void emit(Event event) {
        if (closing || !queue.offer(event)) {
            dropped.increment();
        }
    }

    @Override
    public boolean enabled() {
        return true;
    }

    public void addTicker(Ticker ticker) {
        tickers.add(ticker);
    }

    public long written() {
        return written.sum();
    }

    public long dropped() {
        return dropped.sum();
    }

    /**
     * Wakes on a fixed cadence instead of per event: waking the thread for each event (a futex wake, a
     * context switch, a write) cost ~60 us per event under PUT load (measured with schedstat); on a
     * cadence one wake-up writes everything queued since the last one.
     */
    private void run() {
        List<Event> batch = new ArrayList<>();
        long lastTick = System.nanoTime();
        long lastAnchor = lastTick;
        long tickEvery = IDLE_TICK_NANOS;
        while (true) {
            boolean last = closing; // read first: whatever was queued before close() is still written
            try {
                if (queue.drainTo(batch) > 0) {
                    write(batch);
                }
            } catch (RuntimeException e) {
                batch.clear();
                System.err.println("events: writing failed: " + e);
            }
            if (last) {
                return;
            }
            long now = System.nanoTime();
            if (now - lastTick >= tickEvery) {
                lastTick = now;
                tickEvery = tick(now, false) ? BUSY_TICK_NANOS : IDLE_TICK_NANOS;
            }
            if (now - lastAnchor >= IDLE_TICK_NANOS) {
                lastAnchor = now;
                EventClock.reanchor();
            }
            LockSupport.parkNanos(this, Math.min(WRITE_EVERY_NANOS, Math.max(1, lastTick + tickEvery - now)));
        }
    }

    private boolean tick(long now, boolean last) {
        boolean open = false;
        for (Ticker t : tickers) {
            try {
                open |= t.tick(now, last);
            } catch (RuntimeException e) {
                System.err.println("events: " + t + " failed: " + e);
            }
        }
        return open;
    }

    /**
     * One write per batch, as bytes: the lines are rare, so this code mostly runs in the interpreter, where
     * PrintStream.println's character encoding layers cost ~0.3 ms a line (measured with schedstat under
     * PUT load); the JSON is ASCII except for text fields, and String.getBytes has a fast path for that.
     */
    private void write(List<Event> batch) {
        StringBuilder lines = new StringBuilder(200 * batch.size());
        for (Event e : batch) {
            lines.append(e.toJson()).append('\n');
        }
        byte[] bytes = lines.toString().getBytes(StandardCharsets.UTF_8);
        out.write(bytes, 0, bytes.length);
        out.flush();
        written.add(batch.size());
        batch.clear();
    }

    /**
     * Closes open episodes, lets the thread write what is queued and stops it; later events are dropped.
     * Called after the storage is closed (so its last flush events are written) and before the "stopped"
     * line. Waits at most 5 s: if nobody reads stdout the thread stays blocked and what is left counts as
     * dropped.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closing) {
                return;
            }
            tick(System.nanoTime(), true);
            closing = true;
        }
        LockSupport.unpark(thread);
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        dropped.add(queue.size()); // offered just before closing, or the thread is stuck on a full pipe
        queue.clear();
    }
}
