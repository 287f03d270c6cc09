package perflab.cluster;

import perflab.events.Event;
import perflab.events.EventSink;
import perflab.spec.EventList;

import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Another node as this one sees it: counters of the internal requests sent to it, and whether it is up.
 * The first failure after a success (or since start) is a {@code peer_down} event, the first success after
 * failures a {@code peer_up} event; both carry the request's own start and duration (EventClock).
 */
final class Peer {
    final int index;
    final String url;
    private final EventSink events;
    private final LongAdder requests = new LongAdder();
    private final LongAdder answered = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final LongAdder timeouts = new LongAdder();
    private final LongAdder latencyMicros = new LongAdder();
    private boolean down;
    private long downSinceNanos;
    private long failuresWhileDown;
    private long lastMismatchLog = Long.MIN_VALUE;

    Peer(int index, String url, EventSink events) {
        this.index = index;
        this.url = url;
        this.events = events;
    }

    void sent() {
        requests.increment();
    }

    void answered(long startNanos, long durNanos) {
        answered.increment();
        latencyMicros.add(durNanos / 1000);
        long downFor;
        long failures;
        synchronized (this) {
            if (!down) {
                return;
            }
            down = false;
            downFor = startNanos + durNanos - downSinceNanos;
            failures = failuresWhileDown;
        }
        events.emit(Event.of(EventList.PEER_UP, startNanos, durNanos, url, downFor / 1000, failures));
    }

    void failed(ReplicaAnswer answer, long startNanos, long durNanos) {
        if (answer.failure == ReplicaAnswer.Failure.TIMEOUT) {
            timeouts.increment();
        } else {
            errors.increment();
        }
        if (answer.failure == ReplicaAnswer.Failure.MISMATCH) {
            logMismatch(answer.reason);
        }
        synchronized (this) {
            failuresWhileDown++;
            if (down) {
                return;
            }
            down = true;
            downSinceNanos = startNanos;
            failuresWhileDown = 1;
        }
        events.emit(Event.of(EventList.PEER_DOWN, startNanos, durNanos, url,
                answer.failure.name().toLowerCase(java.util.Locale.ROOT), answer.reason));
    }

    /** A misconfigured cluster must be loud, but not one line per request: at most every 10 s per peer. */
    private void logMismatch(String reason) {
        long now = System.nanoTime();
        synchronized (this) {
            if (lastMismatchLog != Long.MIN_VALUE && now - lastMismatchLog < 10_000_000_000L) {
                return;
            }
            lastMismatchLog = now;
        }
        System.err.println("error: cluster: peer " + url + " refused an internal request: " + reason);
    }

    synchronized boolean isDown() {
        return down;
    }

    /** The leaves of cluster.peers.&lt;PEER&gt;.* in /v0/stats. */
    void stats(Map<String, Object> into) {
        into.put("url", url);
        into.put("up", isDown() ? 0L : 1L);
        into.put("requests", requests.sum());
        into.put("answered", answered.sum());
        into.put("errors", errors.sum());
        into.put("timeouts", timeouts.sum());
        into.put("latency_us", latencyMicros.sum());
    }
}
