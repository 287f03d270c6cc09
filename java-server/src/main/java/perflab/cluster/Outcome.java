package perflab.cluster;

/** What the coordinator answers the client: the status, for a GET the newest record, for a 504 why. */
public final class Outcome {
    public static final int GATEWAY_TIMEOUT = 504;

    public final int status;
    /** GET 200: the newest record (a live one); otherwise null. */
    public final Record record;
    /** 504: which replicas failed and why. */
    public final String message;

    Outcome(int status, Record record, String message) {
        this.status = status;
        this.record = record;
        this.message = message;
    }
}
