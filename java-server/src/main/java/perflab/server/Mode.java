package perflab.server;

/** Where request handling runs (the lab compares them). */
enum Mode {
    /** On one-nio's selector threads. */
    SYNC,
    /** On a bounded ThreadPoolExecutor; a full queue answers 503 at once. */
    ASYNC,
    /** One virtual thread per request (JDK 21+). */
    VIRTUAL;

    String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
