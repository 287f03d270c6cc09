package perflab.server;

import java.util.concurrent.atomic.AtomicLong;

/** stderr reports of request failures, at most one per second so a failing disk cannot flood the console. */
final class ErrorLog {
    private final AtomicLong lastPrint = new AtomicLong();
    private final AtomicLong suppressed = new AtomicLong();

    void report(String what, Throwable e) {
        line(what + ": " + e);
    }

    /** Prints "error: " + message unless another line was printed less than a second ago. */
    void line(String message) {
        long now = System.currentTimeMillis();
        long last = lastPrint.get();
        if (now - last < 1000 || !lastPrint.compareAndSet(last, now)) {
            suppressed.incrementAndGet();
            return;
        }
        long skipped = suppressed.getAndSet(0);
        System.err.println("error: " + message
                + (skipped > 0 ? " (" + skipped + " similar errors suppressed)" : ""));
    }
}
