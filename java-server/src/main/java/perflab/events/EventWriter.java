package perflab.events;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Writes events as JSON lines on one background thread. Sources only offer to a bounded queue, so a slow
 * reader of stdout (a full pipe) stalls this thread, never a request or a flush: when the queue is full
 * the event is dropped and counted. The thread also runs periodic {@link Ticker}s (closing queue_full
 * episodes) and renews the clock anchor.
 */
public final class EventWriter implements EventSink, AutoCloseable {
    /** Room for bursts (a GC storm, many flushes) while stdout is slow; each event is ~200 bytes. */
    static final int CAPACITY = 4096;
    private static final long TICK_NANOS = 50_000_000L;
    private static final long REANCHOR_NANOS = 1_000_000_000L;

    /** Periodic work on the writer thread. */
    public interface Ticker {
        /** @param closing true on the last call, at shutdown: finish whatever is open */
        void tick(long nowNanos, boolean closing);
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

    private void run() {
        List<Event> batch = new ArrayList<>();
        long lastTick = System.nanoTime();
        long lastAnchor = lastTick;
        while (!closing) {
            try {
                Event first = queue.poll(TICK_NANOS, TimeUnit.NANOSECONDS);
                if (first != null) {
                    batch.add(first);
                    queue.drainTo(batch);
                    write(batch);
                }
            } catch (InterruptedException e) {
                continue; // close() interrupts to finish early; the loop condition decides
            } catch (RuntimeException e) {
                System.err.println("events: writing failed: " + e);
            }
            long now = System.nanoTime();
            if (now - lastTick >= TICK_NANOS) {
                lastTick = now;
                tick(now, false);
            }
            if (now - lastAnchor >= REANCHOR_NANOS) {
                lastAnchor = now;
                EventClock.reanchor();
            }
        }
    }

    private void tick(long now, boolean last) {
        for (Ticker t : tickers) {
            try {
                t.tick(now, last);
            } catch (RuntimeException e) {
                System.err.println("events: " + t + " failed: " + e);
            }
        }
    }

    private void write(List<Event> batch) {
        for (Event e : batch) {
            out.println(e.toJson());
        }
        out.flush();
        written.add(batch.size());
        batch.clear();
    }

    /**
     * Closes open episodes, writes what is queued and stops the thread; later events are dropped. Called
     * after the storage is closed (so its last flush events are written) and before the "stopped" line.
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
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<Event> rest = new ArrayList<>();
        queue.drainTo(rest);
        if (!rest.isEmpty()) {
            write(rest);
        }
    }
}
