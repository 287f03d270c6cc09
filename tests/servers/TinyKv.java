// A small key-value HTTP server on the JDK's own com.sun.net.httpserver: the JVM "bring your own
// server" of the tests, started as a foreign command (Java's single-file source launcher, no build):
//
//     java tests/servers/TinyKv.java PORT
//
// API (not the course's): GET/PUT/DELETE /kv?key=<k>, GET /health. The work per request is small but
// real (a concurrent map and a little hashing), so a profile of it has Java frames to show.
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;

public class TinyKv {
    private static final ConcurrentHashMap<String, byte[]> STORE = new ConcurrentHashMap<>();

    public static void main(String[] args) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])), 128);
        server.createContext("/health", ex -> reply(ex, 200, "ok".getBytes()));
        server.createContext("/kv", TinyKv::kv);
        server.setExecutor(Executors.newFixedThreadPool(2));
        server.start();
    }

    private static void kv(HttpExchange ex) throws IOException {
        String query = ex.getRequestURI().getRawQuery();
        String key = query != null && query.startsWith("key=") ? query.substring(4) : null;
        if (key == null || key.isEmpty()) {
            reply(ex, 400, new byte[0]);
            return;
        }
        switch (ex.getRequestMethod()) {
            case "GET": {
                byte[] v = STORE.get(key);
                reply(ex, v == null ? 404 : 200, v == null ? new byte[0] : v);
                break;
            }
            case "PUT":
                STORE.put(key, ex.getRequestBody().readAllBytes());
                reply(ex, 201, new byte[0]);
                break;
            case "DELETE":
                STORE.remove(key);
                reply(ex, 202, new byte[0]);
                break;
            default:
                reply(ex, 405, new byte[0]);
        }
    }

    private static void reply(HttpExchange ex, int status, byte[] body) throws IOException {
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
        ex.close();
    }
}
