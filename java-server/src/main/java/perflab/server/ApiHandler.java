package perflab.server;

import one.nio.http.Request;
import perflab.storage.RangeIterator;
import perflab.storage.Storage;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.locks.LockSupport;

/**
 * The HTTP API: routes a request, runs the storage operation and answers. Runs on whichever thread the
 * dispatcher chose. Paths are matched on the raw URI without substring copies.
 */
final class ApiHandler {
    private static final String ENTITY = "/v0/entity";
    private static final String ENTITIES = "/v0/entities";
    private static final String STATUS = "/v0/status";
    private static final String STATS = "/v0/stats";
    private static final String DEBUG_GC = "/v0/debug/gc";
    private static final String DEBUG_PAUSE = "/v0/debug/pause";
    private static final byte[] STATUS_BODY = HttpResponses.ascii("OK");

    private final Storage storage;
    private final RequestStats requests;
    private final StatsReport stats;
    private final ErrorLog errors = new ErrorLog();
    private final long debugDelayNanos;
    private final long debugWorkNanos;
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    /** Sink of the spin's arithmetic, so the JIT cannot drop the loop. */
    private volatile long workSink;
    /** Both null unless --debug-endpoints on. */
    private final DebugEndpoints debug;
    private final DebugPause pause;
    /** Null for a single node; otherwise /v0/entity goes through the cluster and ranges decode records. */
    private final ClusterHandler cluster;

    ApiHandler(Storage storage, RequestStats requests, StatsReport stats, long debugDelayNanos, long debugWorkNanos,
               DebugEndpoints debug, DebugPause pause, ClusterHandler cluster) {
        this.cluster = cluster;
        this.storage = storage;
        this.requests = requests;
        this.stats = stats;
        this.debugDelayNanos = debugDelayNanos;
        this.debugWorkNanos = debugWorkNanos;
        this.debug = debug;
        this.pause = pause;
    }

    /**
     * --debug-delay (a server of known capacity), --debug-work-ns (a known CPU cost per request) and a
     * /v0/debug/pause window, when enabled.
     */
    private void debugDelay() {
        if (pause != null) {
            pause.awaitEnd();
        }
        if (debugDelayNanos > 0) {
            long deadline = System.nanoTime() + debugDelayNanos;
            for (long left = debugDelayNanos; left > 0; left = deadline - System.nanoTime()) {
                LockSupport.parkNanos(left);
            }
        }
        if (debugWorkNanos > 0) {
            burn(debugWorkNanos);
        }
    }

    /**
     * Spins until this thread has used {@code nanos} of CPU time: its own CPU clock, so a slow phase of the
     * machine costs the same CPU time, not the same wall time. A virtual thread has no CPU clock of its own
     * (-1): it spins for wall time instead.
     */
    private void burn(long nanos) {
        long start = threads.getCurrentThreadCpuTime();
        boolean cpu = start >= 0;
        if (!cpu) {
            start = System.nanoTime();
        }
        long x = workSink;
        while ((cpu ? threads.getCurrentThreadCpuTime() : System.nanoTime()) - start < nanos) {
            for (int i = 0; i < 64; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        workSink = x;
    }

    void handle(Request request, KvSession session) {
        try {
            route(request, session);
        } catch (IOException | RuntimeException e) {
            errors.report(request.getMethodName() + " " + request.getURI(), e);
            try {
                respond(request, session, HttpResponses.INTERNAL_ERROR, String.valueOf(e.getMessage()));
            } catch (IOException | RuntimeException sendFailure) {
                session.close();
            }
        }
    }

    /** Answers 503 without touching storage (called on the selector thread when the executor is full). */
    void reject(Request request, KvSession session, String why) {
        try {
            respond(request, session, HttpResponses.SERVICE_UNAVAILABLE, why);
        } catch (IOException e) {
            session.close();
        }
    }

    private void route(Request request, KvSession session) throws IOException {
        String uri = request.getURI();
        int q = uri.indexOf('?');
        int pathEnd = q < 0 ? uri.length() : q;
        if (is(uri, pathEnd, ENTITY)) {
            debugDelay();
            entity(request, session, uri);
        } else if (is(uri, pathEnd, ENTITIES)) {
            entities(request, session, uri);
        } else if (is(uri, pathEnd, STATUS)) {
            debugDelay();
            if (request.getMethod() != Request.METHOD_GET) {
                respond(request, session, HttpResponses.METHOD_NOT_ALLOWED, "use GET");
            } else {
                boolean keepAlive = KvSession.keepAlive(request);
                send(request, session, 200, HttpResponses.build(HttpResponses.TEXT_OK, STATUS_BODY, keepAlive),
                        keepAlive);
            }
        } else if (is(uri, pathEnd, STATS)) {
            if (request.getMethod() != Request.METHOD_GET) {
                respond(request, session, HttpResponses.METHOD_NOT_ALLOWED, "use GET");
            } else {
                boolean keepAlive = KvSession.keepAlive(request);
                send(request, session, 200, HttpResponses.build(HttpResponses.JSON_OK, stats.json(), keepAlive),
                        keepAlive);
            }
        } else if (debug != null && is(uri, pathEnd, DEBUG_GC)) {
            if (request.getMethod() != Request.METHOD_POST) {
                respond(request, session, HttpResponses.METHOD_NOT_ALLOWED, "use POST");
            } else {
                String body;
                try {
                    body = debug.gc();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while waiting for the gc event source", e);
                }
                json(request, session, body);
            }
        } else if (debug != null && is(uri, pathEnd, DEBUG_PAUSE)) {
            if (request.getMethod() != Request.METHOD_POST) {
                respond(request, session, HttpResponses.METHOD_NOT_ALLOWED, "use POST");
                return;
            }
            String body;
            try {
                byte[] ms = QueryParams.get(uri, "ms");
                body = debug.pause(ms == null ? null : new String(ms, java.nio.charset.StandardCharsets.UTF_8));
            } catch (QueryParams.BadEncodingException | IllegalArgumentException e) {
                respond(request, session, HttpResponses.BAD_REQUEST, e.getMessage());
                return;
            }
            json(request, session, body);
        } else {
            respond(request, session, HttpResponses.BAD_REQUEST, "unknown path");
        }
    }

    private void json(Request request, KvSession session, String body) throws IOException {
        boolean keepAlive = KvSession.keepAlive(request);
        send(request, session, 200, HttpResponses.build(HttpResponses.JSON_OK,
                body.getBytes(java.nio.charset.StandardCharsets.UTF_8), keepAlive), keepAlive);
    }

    private static boolean is(String uri, int pathEnd, String path) {
        return pathEnd == path.length() && uri.startsWith(path);
    }

    private void entity(Request request, KvSession session, String uri) throws IOException {
        int method = request.getMethod();
        if (method != Request.METHOD_GET && method != Request.METHOD_PUT && method != Request.METHOD_DELETE) {
            respond(request, session, HttpResponses.METHOD_NOT_ALLOWED, "use GET, PUT or DELETE");
            return;
        }
        byte[] id;
        try {
            id = QueryParams.get(uri, "id");
        } catch (QueryParams.BadEncodingException e) {
            respond(request, session, HttpResponses.BAD_REQUEST, "id: " + e.getMessage());
            return;
        }
        if (id == null || id.length == 0) {
            respond(request, session, HttpResponses.BAD_REQUEST, id == null ? "missing id" : "empty id");
            return;
        }
        if (cluster != null) {
            cluster.entity(request, session, uri, id);
            return;
        }
        switch (method) {
            case Request.METHOD_GET: {
                byte[] value = storage.get(id);
                if (value == null) {
                    respond(request, session, HttpResponses.NOT_FOUND, (byte[]) null);
                } else {
                    respond(request, session, HttpResponses.OK, value);
                }
                break;
            }
            case Request.METHOD_PUT: {
                byte[] body = request.getBody();
                storage.put(id, body == null ? new byte[0] : body);
                respond(request, session, HttpResponses.CREATED, (byte[]) null);
                break;
            }
            default: {
                storage.delete(id);
                respond(request, session, HttpResponses.ACCEPTED, (byte[]) null);
            }
        }
    }

    private void entities(Request request, KvSession session, String uri) throws IOException {
        if (request.getMethod() != Request.METHOD_GET) {
            respond(request, session, HttpResponses.METHOD_NOT_ALLOWED, "use GET");
            return;
        }
        byte[] start;
        byte[] end;
        try {
            start = QueryParams.get(uri, "start");
            end = QueryParams.get(uri, "end");
        } catch (QueryParams.BadEncodingException e) {
            respond(request, session, HttpResponses.BAD_REQUEST, e.getMessage());
            return;
        }
        if (start == null || start.length == 0) {
            respond(request, session, HttpResponses.BAD_REQUEST, start == null ? "missing start" : "empty start");
            return;
        }
        if (end != null && end.length == 0) {
            end = null; // "&end=" means no upper bound
        }
        boolean keepAlive = KvSession.keepAlive(request);
        // a cluster node's range is its own live records (a range over the whole cluster is not implemented)
        RangeIterator range = cluster != null ? cluster.liveRange(start, end) : storage.range(start, end);
        byte[] head = keepAlive ? HttpResponses.CHUNKED_OK_KEEP_ALIVE : HttpResponses.CHUNKED_OK_CLOSE;
        String what = "GET " + uri;
        ChunkedRangeStream stream = new ChunkedRangeStream(head, range,
                () -> errors.report(what, new IOException("range iteration failed; connection closed")));
        requests.count(request.getMethod(), 200);
        session.sendStream(stream, keepAlive);
    }

    private void respond(Request request, KvSession session, int status, byte[] body) throws IOException {
        boolean keepAlive = KvSession.keepAlive(request);
        send(request, session, status, HttpResponses.build(status, body, keepAlive), keepAlive);
    }

    private void respond(Request request, KvSession session, int status, String text) throws IOException {
        boolean keepAlive = KvSession.keepAlive(request);
        send(request, session, status, HttpResponses.build(status, text, keepAlive), keepAlive);
    }

    private void send(Request request, KvSession session, int status, byte[] response, boolean keepAlive)
            throws IOException {
        requests.count(request.getMethod(), status);
        session.send(response, keepAlive);
    }
}
