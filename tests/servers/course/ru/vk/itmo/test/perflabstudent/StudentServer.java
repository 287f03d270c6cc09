package ru.vk.itmo.test.perflabstudent;

import one.nio.http.HttpServer;
import one.nio.http.HttpServerConfig;
import one.nio.http.HttpSession;
import one.nio.http.Request;
import one.nio.http.Response;
import one.nio.server.AcceptorConfig;
import ru.vk.itmo.ServiceConfig;
import ru.vk.itmo.dao.Dao;
import ru.vk.itmo.dao.Entry;
import ru.vk.itmo.test.perflabstudent.dao.StudentEntry;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP side, on one-nio's HttpServer as the course's servers are: requests run on a bounded worker pool
 * (503 when it is full), so a worker waiting for another node never blocks a selector.
 * <ul>
 * <li>{@code /v0/entity?id=}: GET 200/404, PUT 201, DELETE 202; a missing or empty id 400; other methods
 * 405. With a cluster of several nodes a key lives on one node, chosen by {@link Rendezvous}; any other node
 * proxies the request to it (java.net.http). {@code ack} and {@code from} are accepted and ignored: one copy.
 * <li>{@code /v0/entities?start=&end=}: this node's own keys in [start, end) (no end: to the last key), a
 * chunk {@code <key>\n<value>} each, built in memory (fine for a test server).
 * <li>anything else: 400. No /v0/status, no /v0/stats, as in many course servers.
 * </ul>
 */
final class StudentServer extends HttpServer {
    /** Marks a proxied request: its receiver answers it itself, whatever its own list says. */
    private static final String PROXIED = "X-Perflab-Student-Proxied";
    /** Generous for a test server: a first request on a loaded 2-core machine took over a second. */
    private static final Duration PROXY_TIMEOUT = Duration.ofSeconds(5);

    private final Dao<byte[], Entry<byte[]>> dao;
    private final String self;
    private final List<String> nodes;
    private final HttpClient client;
    private final ThreadPoolExecutor workers;

    StudentServer(ServiceConfig config, Dao<byte[], Entry<byte[]>> dao, boolean clustered) throws IOException {
        super(httpConfig(config.selfPort()));
        this.dao = dao;
        this.self = config.selfUrl();
        this.nodes = clustered ? new ArrayList<>(config.clusterUrls()) : List.of(config.selfUrl());
        this.client = nodes.size() > 1
                ? HttpClient.newBuilder().connectTimeout(PROXY_TIMEOUT).build() : null;
        int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
        this.workers = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(512));
    }

    private static HttpServerConfig httpConfig(int port) {
        AcceptorConfig acceptor = new AcceptorConfig();
        acceptor.port = port;
        acceptor.reusePort = true;
        HttpServerConfig config = new HttpServerConfig();
        config.acceptors = new AcceptorConfig[]{acceptor};
        config.closeSessions = true;
        return config;
    }

    @Override
    public void handleRequest(Request request, HttpSession session) throws IOException {
        try {
            workers.execute(() -> answer(request, session));
        } catch (RejectedExecutionException e) {
            session.sendResponse(new Response(Response.SERVICE_UNAVAILABLE, Response.EMPTY));
        }
    }

    @Override
    public synchronized void stop() {
        super.stop();
        workers.shutdown();
        try {
            workers.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void answer(Request request, HttpSession session) {
        try {
            session.sendResponse(route(request));
        } catch (Exception e) {
            try {
                session.sendError(Response.INTERNAL_ERROR, e.toString());
            } catch (IOException closed) {
                session.scheduleClose();
            }
        }
    }

    private Response route(Request request) throws IOException, InterruptedException {
        switch (request.getPath()) {
            case "/v0/entity":
                return entity(request);
            case "/v0/entities":
                return range(request);
            default:
                return text(Response.BAD_REQUEST, "unknown path " + request.getPath());
        }
    }

    private Response entity(Request request) throws IOException, InterruptedException {
        int method = request.getMethod();
        if (method != Request.METHOD_GET && method != Request.METHOD_PUT && method != Request.METHOD_DELETE) {
            return text(Response.METHOD_NOT_ALLOWED, "GET, PUT or DELETE");
        }
        String id = request.getParameter("id=");
        if (id == null || id.isEmpty()) {
            return text(Response.BAD_REQUEST, "missing or empty id");
        }
        byte[] key = id.getBytes(StandardCharsets.UTF_8);
        if (nodes.size() > 1 && request.getHeader(PROXIED + ":") == null) {
            String owner = Rendezvous.owner(nodes, key);
            if (!owner.equals(self)) {
                return proxy(owner, request);
            }
        }
        switch (method) {
            case Request.METHOD_GET:
                Entry<byte[]> e = dao.get(key);
                return e == null ? new Response(Response.NOT_FOUND, Response.EMPTY) : new Response(Response.OK, e.value());
            case Request.METHOD_PUT:
                dao.upsert(new StudentEntry(key, request.getBody() == null ? new byte[0] : request.getBody()));
                return new Response(Response.CREATED, Response.EMPTY);
            default:
                dao.upsert(new StudentEntry(key, null));
                return new Response(Response.ACCEPTED, Response.EMPTY);
        }
    }

    /** The owner's answer, relayed; 504 when it cannot be reached or does not answer in time. */
    private Response proxy(String owner, Request request) throws InterruptedException {
        byte[] body = request.getBody() == null ? new byte[0] : request.getBody();
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(owner + request.getURI()))
                .timeout(PROXY_TIMEOUT).header(PROXIED, "1");
        b.method(request.getMethodName(), request.getMethod() == Request.METHOD_PUT
                ? HttpRequest.BodyPublishers.ofByteArray(body) : HttpRequest.BodyPublishers.noBody());
        try {
            HttpResponse<byte[]> r = client.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            return new Response(statusLine(r.statusCode()), r.body());
        } catch (IOException e) {
            return text(Response.GATEWAY_TIMEOUT, "owner " + owner + " did not answer: " + e);
        }
    }

    private Response range(Request request) throws IOException {
        if (request.getMethod() != Request.METHOD_GET) {
            return text(Response.METHOD_NOT_ALLOWED, "GET");
        }
        String start = request.getParameter("start=");
        if (start == null || start.isEmpty()) {
            return text(Response.BAD_REQUEST, "missing or empty start");
        }
        String end = request.getParameter("end=");
        Iterator<Entry<byte[]>> it = dao.get(start.getBytes(StandardCharsets.UTF_8),
                end == null || end.isEmpty() ? null : end.getBytes(StandardCharsets.UTF_8));
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (it.hasNext()) {
            Entry<byte[]> e = it.next();
            int size = e.key().length + 1 + e.value().length;
            body.write((Integer.toHexString(size) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            body.write(e.key());
            body.write('\n');
            body.write(e.value());
            body.write(new byte[]{'\r', '\n'});
        }
        body.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        Response response = new Response(Response.OK);
        response.addHeader("Transfer-Encoding: chunked");
        response.setBody(body.toByteArray());
        return response;
    }

    private static Response text(String status, String message) {
        return new Response(status, message.getBytes(StandardCharsets.UTF_8));
    }

    private static String statusLine(int code) {
        switch (code) {
            case 200:
                return Response.OK;
            case 201:
                return Response.CREATED;
            case 202:
                return Response.ACCEPTED;
            case 400:
                return Response.BAD_REQUEST;
            case 404:
                return Response.NOT_FOUND;
            case 405:
                return Response.METHOD_NOT_ALLOWED;
            case 503:
                return Response.SERVICE_UNAVAILABLE;
            default:
                return code + " Status " + code;
        }
    }
}
