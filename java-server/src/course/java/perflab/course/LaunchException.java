package perflab.course;

/** A reason the launcher stops, with its exit status: 2 for a bad flag or value, 1 for a start-up failure. */
final class LaunchException extends Exception {
    static final int BAD_FLAG = 2;
    static final int START_FAILED = 1;

    final int exitStatus;

    LaunchException(int exitStatus, String message) {
        this(exitStatus, message, null);
    }

    LaunchException(int exitStatus, String message, Throwable cause) {
        super(message, cause);
        this.exitStatus = exitStatus;
    }

    static LaunchException badFlag(String message) {
        return new LaunchException(BAD_FLAG, message);
    }

    static LaunchException startFailed(String message) {
        return new LaunchException(START_FAILED, message);
    }
}
