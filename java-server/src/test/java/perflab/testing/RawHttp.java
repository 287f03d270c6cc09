package perflab.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A minimal HTTP/1.1 client over a raw socket: exact control of what is sent (pipelining, odd methods)
 * and exact view of what comes back (chunk boundaries). One keep-alive connection per instance.
 */
public final class RawHttp implements AutoCloseable {
    /** A parsed response; for chunked bodies {@link #chunks} keeps each chunk's bytes. */
    public static final class Response {
        public int status;
        public final Map<String, String> headers = new LinkedHashMap<>();
        public byte[] body;
        public java.util.List<byte[]> chunks;

        public String header(String name) {
            for (Map.Entry<String, String> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue();
                }
            }
            return null;
        }

        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** Receives chunks one by one (for streams too large to keep). */
    public interface ChunkSink {
        void chunk(byte[] data);
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    public RawHttp(int port) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        socket.setSoTimeout(60_000);
        socket.setTcpNoDelay(true);
        in = new java.io.BufferedInputStream(socket.getInputStream(), 65536);
        out = socket.getOutputStream();
    }

    public static byte[] request(String method, String target, byte[] body) {
        return request(method, target, body, new String[0]);
    }

    /** @param headers extra header lines, "Name: value" each */
    public static byte[] request(String method, String target, byte[] body, String... headers) {
        StringBuilder sb = new StringBuilder();
        sb.append(method).append(' ').append(target).append(" HTTP/1.1\r\nHost: localhost\r\n");
        for (String h : headers) {
            sb.append(h).append("\r\n");
        }
        if (body != null) {
            sb.append("Content-Length: ").append(body.length).append("\r\n");
        }
        sb.append("\r\n");
        byte[] head = sb.toString().getBytes(StandardCharsets.ISO_8859_1);
        if (body == null) {
            return head;
        }
        byte[] all = new byte[head.length + body.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        return all;
    }

    public void send(byte[] raw) throws IOException {
        out.write(raw);
        out.flush();
    }

    public Response call(String method, String target, byte[] body) throws IOException {
        send(request(method, target, body));
        return read(null);
    }

    /** A request with extra header lines ("Name: value"). */
    public Response call(String method, String target, byte[] body, String... headers) throws IOException {
        send(request(method, target, body, headers));
        return read(null);
    }

    public Response call(String method, String target) throws IOException {
        return call(method, target, null);
    }

    /** Reads one response; chunks go to {@code sink} when given, else are collected. */
    public Response read(ChunkSink sink) throws IOException {
        Response r = new Response();
        String status = line();
        if (status == null) {
            throw new IOException("connection closed before a response");
        }
        r.status = Integer.parseInt(status.split(" ")[1]);
        String h;
        while (!(h = line()).isEmpty()) {
            int c = h.indexOf(':');
            r.headers.put(h.substring(0, c).trim(), h.substring(c + 1).trim());
        }
        if ("chunked".equalsIgnoreCase(r.header("Transfer-Encoding"))) {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            r.chunks = sink == null ? new java.util.ArrayList<>() : null;
            while (true) {
                String size = line();
                int n = Integer.parseInt(size.trim(), 16);
                if (n == 0) {
                    if (!line().isEmpty()) {
                        throw new IOException("missing CRLF after the last chunk");
                    }
                    break;
                }
                byte[] chunk = readFully(n);
                if (!line().isEmpty()) {
                    throw new IOException("chunk not followed by CRLF");
                }
                if (sink != null) {
                    sink.chunk(chunk);
                } else {
                    r.chunks.add(chunk);
                    all.write(chunk);
                }
            }
            r.body = all.toByteArray();
        } else {
            String length = r.header("Content-Length");
            r.body = readFully(length == null ? 0 : Integer.parseInt(length));
        }
        return r;
    }

    private byte[] readFully(int n) throws IOException {
        byte[] b = new byte[n];
        int off = 0;
        while (off < n) {
            int k = in.read(b, off, n - off);
            if (k < 0) {
                throw new IOException("connection closed after " + off + " of " + n + " bytes");
            }
            off += k;
        }
        return b;
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                byte[] bytes = b.toByteArray();
                int len = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
                return new String(bytes, 0, len, StandardCharsets.ISO_8859_1);
            }
            b.write(c);
        }
        return b.size() == 0 ? null : b.toString("ISO-8859-1");
    }

    /** True when the server closed the connection (read returns EOF). */
    public boolean closedByPeer() throws IOException {
        try {
            return in.read() < 0;
        } catch (java.net.SocketException e) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
