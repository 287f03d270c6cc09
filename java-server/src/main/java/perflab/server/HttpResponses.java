package perflab.server;

import java.nio.charset.StandardCharsets;

/**
 * Serialises a whole response into one array: status line and headers are precomputed per status, so a
 * response costs one allocation and one body copy (one-nio's Response would add a header list and a builder).
 */
final class HttpResponses {
    static final int OK = 200;
    static final int CREATED = 201;
    static final int ACCEPTED = 202;
    static final int BAD_REQUEST = 400;
    static final int NOT_FOUND = 404;
    static final int METHOD_NOT_ALLOWED = 405;
    static final int MISDIRECTED = 421;
    static final int INTERNAL_ERROR = 500;
    static final int SERVICE_UNAVAILABLE = 503;
    static final int GATEWAY_TIMEOUT = 504;

    private static final byte[] KEEP_ALIVE = ascii("\r\nConnection: Keep-Alive\r\n\r\n");
    private static final byte[] CLOSE = ascii("\r\nConnection: close\r\n\r\n");
    private static final byte[][] HEADS = new byte[600][];
    /** The status line and fixed headers of each status, for responses with extra headers. */
    private static final String[] HEAD_TEXTS = new String[600];

    static {
        head(OK, "OK", "Content-Type: application/octet-stream\r\n");
        head(CREATED, "Created", "");
        head(ACCEPTED, "Accepted", "");
        head(BAD_REQUEST, "Bad Request", "Content-Type: text/plain\r\n");
        head(NOT_FOUND, "Not Found", "");
        head(METHOD_NOT_ALLOWED, "Method Not Allowed", "Allow: GET, PUT, DELETE\r\nContent-Type: text/plain\r\n");
        head(413, "Request Entity Too Large", "Content-Type: text/plain\r\n");
        head(MISDIRECTED, "Misdirected Request", "Content-Type: text/plain\r\n");
        head(INTERNAL_ERROR, "Internal Server Error", "Content-Type: text/plain\r\n");
        head(SERVICE_UNAVAILABLE, "Service Unavailable", "Content-Type: text/plain\r\n");
        head(GATEWAY_TIMEOUT, "Gateway Timeout", "Content-Type: text/plain\r\n");
    }



    /** Header for a JSON 200 (stats) and a plain 200 (status). */
    static final byte[] JSON_OK = ascii("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ");
    static final byte[] TEXT_OK = ascii("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ");
    /** The head of a streamed range; chunks follow. */
    static final byte[] CHUNKED_OK_KEEP_ALIVE = ascii("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
            + "Transfer-Encoding: chunked\r\nConnection: Keep-Alive\r\n\r\n");
    static final byte[] CHUNKED_OK_CLOSE = ascii("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
            + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n");

    private HttpResponses() {
    }

    private static void head(int status, String reason, String headers) {
        HEAD_TEXTS[status] = "HTTP/1.1 " + status + " " + reason + "\r\n" + headers;
        HEADS[status] = ascii(HEAD_TEXTS[status] + "Content-Length: ");
    }

    static byte[] build(int status, byte[] body, boolean keepAlive) {
        return build(HEADS[status], body, keepAlive);
    }

    static byte[] build(int status, String text, boolean keepAlive) {
        return build(HEADS[status], text.getBytes(StandardCharsets.UTF_8), keepAlive);
    }

    static byte[] build(byte[] head, byte[] body, boolean keepAlive) {
        return build(head, body, 0, body == null ? 0 : body.length, keepAlive);
    }

    /**
     * A response with extra header lines (each "Name: value\r\n") before Content-Length: the answers to
     * internal cluster requests. Built per call.
     */
    static byte[] buildWithHeaders(int status, String headers, byte[] body, int offset, int length,
                                   boolean keepAlive) {
        return build(ascii(HEAD_TEXTS[status] + headers + "Content-Length: "), body, offset, length, keepAlive);
    }

    /** {@code length} bytes of {@code body} from {@code offset} as the body (a stored record's value, uncopied). */
    static byte[] build(int status, byte[] body, int offset, int length, boolean keepAlive) {
        return build(HEADS[status], body, offset, length, keepAlive);
    }

    static byte[] build(byte[] head, byte[] body, int offset, int bodyLength, boolean keepAlive) {
        byte[] tail = keepAlive ? KEEP_ALIVE : CLOSE;
        int digits = digits(bodyLength);
        byte[] out = new byte[head.length + digits + tail.length + bodyLength];
        System.arraycopy(head, 0, out, 0, head.length);
        int p = head.length + digits;
        for (int v = bodyLength, i = p - 1; i >= head.length; i--, v /= 10) {
            out[i] = (byte) ('0' + v % 10);
        }
        System.arraycopy(tail, 0, out, p, tail.length);
        if (bodyLength > 0) {
            System.arraycopy(body, offset, out, p + tail.length, bodyLength);
        }
        return out;
    }

    static boolean known(int status) {
        return status > 0 && status < HEADS.length && HEADS[status] != null;
    }

    private static int digits(int v) {
        int d = 1;
        while (v >= 10) {
            v /= 10;
            d++;
        }
        return d;
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
