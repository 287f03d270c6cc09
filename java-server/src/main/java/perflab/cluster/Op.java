package perflab.cluster;

/** The replicated operations and the status a replica (and the client) gets for each. */
public enum Op {
    GET("GET", 200),
    PUT("PUT", 201),
    DELETE("DELETE", 202);

    public final String method;
    /** The status of success (GET: 200, or 404 when the newest answer is a tombstone or nothing). */
    public final int okStatus;

    Op(String method, int okStatus) {
        this.method = method;
        this.okStatus = okStatus;
    }
}
