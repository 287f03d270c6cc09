package perflab.server;

import perflab.events.Event;
import perflab.events.EventSink;
import perflab.events.EventWriter;
import perflab.spec.EventList;

/**
 * Groups 503 rejections into queue_full episodes: an episode starts at the first rejection and ends at the
 * first request accepted after the last rejection; it is written once no rejection has come for
 * {@link #QUIET_NANOS} (checked by the event writer at least once a second, every 50 ms while an
 * episode is open; under overload, accepts and rejects alternate every few microseconds, and one
 * event per alternation would flood the stream). The request path pays one volatile read per accepted
 * request; rejections (already the slow path) take a lock.
 */
final class QueueFullEpisodes implements EventWriter.Ticker {
    static final long QUIET_NANOS = 100_000_000L;

    private final EventSink sink;
    /** Start of the open episode (System.nanoTime), 0 when none; written under the lock. */
    private volatile long firstRejection;
    private volatile long lastRejection;
    /** First acceptance after the last rejection, 0 while none. */
    private volatile long acceptedAgain;
    private long rejected; // guarded by this

    QueueFullEpisodes(EventSink sink) {
        this.sink = sink;
    }

    /** Called by the dispatcher after a request was queued. */
    void accepted() {
        if (firstRejection != 0 && acceptedAgain == 0) {
            acceptedAgain = System.nanoTime();
        }
    }

    /** Called by the dispatcher when it answers 503. */
    synchronized void rejected() {
        long now = System.nanoTime();
        if (firstRejection == 0) {
            firstRejection = now;
        }
        rejected++;
        lastRejection = now;
        acceptedAgain = 0;
    }

    @Override
    public synchronized boolean tick(long now, boolean closing) {
        long first = firstRejection;
        if (first == 0) {
            return false;
        }
        if (!closing && now - lastRejection < QUIET_NANOS) {
            return true;
        }
        long end = acceptedAgain != 0 ? acceptedAgain : lastRejection;
        sink.emit(Event.of(EventList.QUEUE_FULL, first, end - first, rejected));
        firstRejection = 0;
        acceptedAgain = 0;
        rejected = 0;
        return false;
    }
}
