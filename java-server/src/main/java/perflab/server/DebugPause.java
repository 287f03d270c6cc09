package perflab.server;

import java.util.concurrent.locks.LockSupport;

/**
 * POST /v0/debug/pause?ms=N: /v0/entity and /v0/status requests that arrive in the next N ms wait until
 * the window ends, a latency spike of known time and length for checking that server events and the load
 * generator's intervals line up. Costs one volatile read per request when no pause is set.
 */
final class DebugPause {
    /** End of the window (System.nanoTime), 0 before the first pause. */
    private volatile long until;

    void start(long startNanos, long durationNanos) {
        until = startNanos + durationNanos;
    }

    /** Parks the calling request thread until the current window, if any, has ended. */
    void awaitEnd() {
        long end = until;
        if (end == 0) {
            return;
        }
        for (long left = end - System.nanoTime(); left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }
}
