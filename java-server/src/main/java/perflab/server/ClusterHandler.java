package perflab.server;

import one.nio.http.Request;
import perflab.cluster.ClusterNode;
import perflab.cluster.Op;
import perflab.cluster.Outcome;
import perflab.cluster.Protocol;
import perflab.cluster.Record;
import perflab.cluster.ReplicaAnswer;
import perflab.cluster.ReplicaCount;
import perflab.storage.RangeIterator;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * /v0/entity on a cluster node (--cluster): a client request is coordinated by {@link ClusterNode} and
 * answered from whichever thread settles it; an internal request (X-Perflab-Internal) is checked against
 * this node's cluster digest and served from local storage, never passed on.
 */
final class ClusterHandler {
    private static final String INTERNAL = Protocol.INTERNAL + ":";
    private static final String CLUSTER = Protocol.CLUSTER + ":";
    private static final String TIMESTAMP = Protocol.TIMESTAMP + ":";

    private final ClusterNode node;
    private final RequestStats requests;
    private final ErrorLog errors = new ErrorLog();
    /** Mismatch lines get their own rate limit, so that other errors cannot hide them. */
    private final ErrorLog mismatchLog = new ErrorLog();
    /** Every answer to an internal request names this node's digest, so the sender can check it too. */
    private final String digestHeader;

    ClusterHandler(ClusterNode node, RequestStats requests) {
        this.node = node;
        this.requests = requests;
        this.digestHeader = Protocol.CLUSTER + ": " + node.topology().digest() + "\r\n";
    }

    RangeIterator liveRange(byte[] start, byte[] end) throws IOException {
        return node.liveRange(start, end);
    }

    /** @param id the decoded, non-empty id */
    void entity(Request request, KvSession session, String uri, byte[] id) throws IOException {
        Op op = op(request.getMethod());
        String sender = request.getHeader(INTERNAL);
        if (sender != null) {
            internal(request, session, op, id, sender);
            return;
        }
        ReplicaCount count;
        try {
            count = ReplicaCount.parse(param(uri, "ack"), param(uri, "from"), param(uri, "replicas"),
                    node.topology().size());
        } catch (IllegalArgumentException | QueryParams.BadEncodingException e) {
            send(request, session, HttpResponses.BAD_REQUEST,
                    HttpResponses.build(HttpResponses.BAD_REQUEST, e.getMessage(), KvSession.keepAlive(request)));
            return;
        }
        byte[] body = op == Op.PUT ? (request.getBody() == null ? new byte[0] : request.getBody()) : null;
        node.coordinate(op, id, body, count, outcome -> answer(request, session, outcome));
    }

    private static Op op(int method) {
        switch (method) {
            case Request.METHOD_GET:
                return Op.GET;
            case Request.METHOD_PUT:
                return Op.PUT;
            default:
                return Op.DELETE;
        }
    }

    private static String param(String uri, String name) throws QueryParams.BadEncodingException {
        byte[] v = QueryParams.get(uri, name);
        return v == null ? null : new String(v, StandardCharsets.UTF_8);
    }

    /** The client's answer; runs on the thread that settled the outcome, often an HTTP client thread. */
    private void answer(Request request, KvSession session, Outcome outcome) {
        boolean keepAlive = KvSession.keepAlive(request);
        byte[] response;
        if (outcome.status == HttpResponses.GATEWAY_TIMEOUT) {
            response = HttpResponses.build(outcome.status, outcome.message, keepAlive);
        } else if (outcome.record != null) {
            Record r = outcome.record;
            response = HttpResponses.build(outcome.status, r.valueArray(), r.valueOffset(), r.valueLength(), keepAlive);
        } else {
            response = HttpResponses.build(outcome.status, (byte[]) null, keepAlive);
        }
        try {
            send(request, session, outcome.status, response);
        } catch (IOException | RuntimeException e) {
            session.close(); // the client went away while the replicas were asked
        }
    }

    private void internal(Request request, KvSession session, Op op, byte[] id, String sender) throws IOException {
        boolean keepAlive = KvSession.keepAlive(request);
        String digest = request.getHeader(CLUSTER);
        String ours = node.topology().digest();
        if (!ours.equals(digest)) {
            node.mismatch();
            String why = "cluster mismatch: " + sender + " sent an internal request with cluster digest " + digest
                    + ", but this node (" + node.topology().url(node.topology().self()) + ") has " + ours + " for --cluster "
                    + String.join(",", node.topology().urls()) + "; start every node with the same --cluster list";
            mismatchLog.line(why);
            byte[] text = why.getBytes(StandardCharsets.UTF_8);
            send(request, session, HttpResponses.MISDIRECTED, HttpResponses.buildWithHeaders(HttpResponses.MISDIRECTED,
                    digestHeader, text, 0, text.length, keepAlive));
            return;
        }
        long timestamp = 0;
        if (op != Op.GET) {
            String ts = request.getHeader(TIMESTAMP);
            try {
                timestamp = Long.parseUnsignedLong(ts == null ? "" : ts);
            } catch (NumberFormatException e) {
                internalText(request, session, HttpResponses.BAD_REQUEST, "internal " + op.method + " needs "
                        + Protocol.TIMESTAMP + " (unsigned decimal), got " + (ts == null ? "none" : "'" + ts + "'"));
                return;
            }
        }
        byte[] body = op == Op.PUT ? (request.getBody() == null ? new byte[0] : request.getBody()) : null;
        ReplicaAnswer answer = node.serveInternal(op, id, timestamp, body);
        if (!answer.ok()) {
            errors.line("internal " + op.method + " from " + sender + ": " + answer.reason);
            internalText(request, session, HttpResponses.INTERNAL_ERROR, answer.reason);
            return;
        }
        Record r = answer.record;
        if (op != Op.GET) {
            send(request, session, op.okStatus, HttpResponses.buildWithHeaders(op.okStatus, digestHeader, null, 0, 0,
                    keepAlive));
        } else if (r == null) { // never written here: 404 without a timestamp
            send(request, session, HttpResponses.NOT_FOUND, HttpResponses.buildWithHeaders(HttpResponses.NOT_FOUND,
                    digestHeader, null, 0, 0, keepAlive));
        } else {
            int status = r.isLive() ? HttpResponses.OK : HttpResponses.NOT_FOUND;
            String headers = digestHeader + Protocol.TIMESTAMP + ": " + Long.toUnsignedString(r.timestamp) + "\r\n";
            send(request, session, status, HttpResponses.buildWithHeaders(status, headers, r.valueArray(),
                    r.valueOffset(), r.valueLength(), keepAlive));
        }
    }

    private void internalText(Request request, KvSession session, int status, String text) throws IOException {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        send(request, session, status, HttpResponses.buildWithHeaders(status, digestHeader, b, 0, b.length,
                KvSession.keepAlive(request)));
    }

    private void send(Request request, KvSession session, int status, byte[] response) throws IOException {
        requests.count(request.getMethod(), status);
        session.send(response, KvSession.keepAlive(request));
    }
}
