package perflab.server;

/** The async executor's bounded work queue. */
enum QueueKind {
    ARRAY, LINKED, LIFO;

    String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
