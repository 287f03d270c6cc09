package perflab.cluster;

/**
 * One replica's answer to one operation: a success (for GET with the record it holds, null when it never
 * saw the key) or a failure with its reason (for the 504 text and the logs).
 */
public final class ReplicaAnswer {
    public enum Failure {
        /** No answer within --cluster-timeout (connect included). */
        TIMEOUT,
        /** Refused connection, reset, an unexpected status or answer, a local storage error. */
        ERROR,
        /** The peer was started with a different --cluster list (or without one). */
        MISMATCH
    }

    public final Record record;
    public final Failure failure;
    public final String reason;

    private ReplicaAnswer(Record record, Failure failure, String reason) {
        this.record = record;
        this.failure = failure;
        this.reason = reason;
    }

    public static ReplicaAnswer ok(Record record) {
        return new ReplicaAnswer(record, null, null);
    }

    public static ReplicaAnswer failed(Failure failure, String reason) {
        return new ReplicaAnswer(null, failure, reason);
    }

    public boolean ok() {
        return failure == null;
    }
}
