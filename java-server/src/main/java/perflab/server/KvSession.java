package perflab.server;

import one.nio.http.HttpServer;
import one.nio.http.HttpSession;
import one.nio.http.Request;
import one.nio.net.Socket;

import java.io.IOException;

/**
 * one-nio's HttpSession plus two ways to answer: a prebuilt byte array (the hot path) and a lazily
 * produced stream ({@link ChunkedRangeStream}). Both keep one-nio's pipelining contract: the response
 * to the request being handled is queued, then the next pipelined request is dispatched.
 */
final class KvSession extends HttpSession {
    /** PUT bodies above this are refused with 413 (one-nio buffers a body whole before dispatch). */
    static final int MAX_BODY = 16 << 20;

    KvSession(Socket socket, HttpServer server) {
        super(socket, server);
    }

    @Override
    protected int getMaxRequestBodyLength() {
        return MAX_BODY;
    }

    static boolean keepAlive(Request request) {
        String connection = request.getHeader("Connection:");
        return request.isHttp11() ? !"close".equalsIgnoreCase(connection) : "Keep-Alive".equalsIgnoreCase(connection);
    }

    /** Sends a complete response built by {@link HttpResponses}. */
    synchronized void send(byte[] response, boolean keepAlive) throws IOException {
        Request current = handling;
        if (current == null) {
            throw new IOException("Out of order response");
        }
        server.incRequestsProcessed();
        write(response, 0, response.length);
        next(keepAlive);
    }

    /** Queues a streamed body; one-nio drives it as the socket drains (see ChunkedRangeStream). */
    synchronized void sendStream(QueueItem stream, boolean keepAlive) throws IOException {
        if (handling == null) {
            stream.release();
            throw new IOException("Out of order response");
        }
        server.incRequestsProcessed();
        write(stream);
        next(keepAlive);
    }

    private void next(boolean keepAlive) throws IOException {
        if (!keepAlive) {
            scheduleClose();
        }
        Request next = pipeline.pollFirst();
        handling = next;
        if (next != null) {
            if (next == FIN) {
                scheduleClose();
            } else {
                server.handleRequest(next, this);
            }
        }
    }
}
