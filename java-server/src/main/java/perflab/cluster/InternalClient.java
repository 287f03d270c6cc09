package perflab.cluster;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sends internal requests to peers with the JDK's asynchronous HttpClient (HTTP/1.1, pooled keep-alive
 * connections). Every request is bounded by --cluster-timeout, connect included, and its future always
 * completes normally with a {@link ReplicaAnswer}: failures are answers too, counted on the {@link Peer}.
 */
final class InternalClient implements AutoCloseable {
    private final Topology topology;
    private final Duration timeout;
    private final ExecutorService executor;
    private final HttpClient http;

    InternalClient(Topology topology, long timeoutMillis) {
        this.topology = topology;
        this.timeout = Duration.ofMillis(timeoutMillis);
        AtomicInteger ids = new AtomicInteger();
        // completions (and the client answers sent from them) run here; daemon: never holds the JVM up
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "cluster-client-" + ids.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1) // one-nio speaks HTTP/1.1 only: no h2c upgrade attempt
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .executor(executor)
                .build();
    }

    /**
     * @param timestamp the write's timestamp (PUT, DELETE); ignored for GET
     */
    CompletableFuture<ReplicaAnswer> send(Peer peer, Op op, byte[] key, long timestamp, byte[] value) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(peer.url + "/v0/entity?id=" + Protocol.encodeKey(key)))
                .timeout(timeout)
                .header(Protocol.INTERNAL, topology.url(topology.self()))
                .header(Protocol.CLUSTER, topology.digest());
        switch (op) {
            case PUT:
                b.header(Protocol.TIMESTAMP, Long.toUnsignedString(timestamp))
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(value));
                break;
            case DELETE:
                b.header(Protocol.TIMESTAMP, Long.toUnsignedString(timestamp)).DELETE();
                break;
            default:
                b.GET();
        }
        peer.sent();
        long start = System.nanoTime();
        CompletableFuture<HttpResponse<byte[]>> response;
        try {
            response = http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (RuntimeException e) { // e.g. the client's executor is shut down: the server is stopping
            response = CompletableFuture.failedFuture(e);
        }
        return response.handle((r, error) -> {
            ReplicaAnswer answer = error != null ? failure(error) : interpret(op, r);
            long dur = System.nanoTime() - start;
            if (answer.ok()) {
                peer.answered(start, dur);
            } else {
                peer.failed(answer, start, dur);
            }
            return answer;
        });
    }

    private static ReplicaAnswer failure(Throwable error) {
        Throwable e = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (e instanceof HttpTimeoutException) {
            return ReplicaAnswer.failed(ReplicaAnswer.Failure.TIMEOUT, "no answer within the timeout (" + e.getMessage()
                    + ")");
        }
        if (e instanceof ConnectException) {
            return ReplicaAnswer.failed(ReplicaAnswer.Failure.ERROR, "cannot connect"
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()));
        }
        if (e instanceof IOException) {
            return ReplicaAnswer.failed(ReplicaAnswer.Failure.ERROR, e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()));
        }
        return ReplicaAnswer.failed(ReplicaAnswer.Failure.ERROR, String.valueOf(e));
    }

    /** What a peer's answer means; anything off-protocol is a failure that says what was wrong. */
    private ReplicaAnswer interpret(Op op, HttpResponse<byte[]> r) {
        int status = r.statusCode();
        if (status == Protocol.MISDIRECTED) {
            return ReplicaAnswer.failed(ReplicaAnswer.Failure.MISMATCH, new String(r.body(), StandardCharsets.UTF_8));
        }
        String digest = r.headers().firstValue(Protocol.CLUSTER).orElse(null);
        if (!topology.digest().equals(digest)) {
            // a node started without --cluster serves the request as a plain one: refuse to count it
            return ReplicaAnswer.failed(ReplicaAnswer.Failure.MISMATCH, digest == null
                    ? "its answer carries no " + Protocol.CLUSTER + " header: it was started without --cluster"
                    : "its cluster digest " + digest + " differs from ours " + topology.digest());
        }
        String ts = r.headers().firstValue(Protocol.TIMESTAMP).orElse(null);
        if (op == Op.GET && (status == 200 || status == 404)) {
            if (ts == null) {
                return status == 404 ? ReplicaAnswer.ok(null)
                        : ReplicaAnswer.failed(ReplicaAnswer.Failure.ERROR, "200 without " + Protocol.TIMESTAMP);
            }
            long timestamp;
            try {
                timestamp = Long.parseUnsignedLong(ts);
            } catch (NumberFormatException e) {
                return ReplicaAnswer.failed(ReplicaAnswer.Failure.ERROR, "bad " + Protocol.TIMESTAMP + " '" + ts + "'");
            }
            return ReplicaAnswer.ok(status == 200 ? Record.value(timestamp, r.body()) : Record.tombstone(timestamp));
        }
        if (status == op.okStatus) {
            return ReplicaAnswer.ok(null);
        }
        String body = new String(r.body(), StandardCharsets.UTF_8);
        return ReplicaAnswer.failed(ReplicaAnswer.Failure.ERROR, "status " + status
                + (body.isEmpty() ? "" : ": " + (body.length() > 200 ? body.substring(0, 200) : body)));
    }

    @Override
    public void close() {
        executor.shutdown(); // idle threads end; a late completion still runs (the JDK client falls back to its own pool)
    }
}
