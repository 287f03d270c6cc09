package ru.vk.itmo.test.perflablsm;

import one.nio.http.HttpServer;
import one.nio.http.HttpServerConfig;
import one.nio.http.HttpSession;
import one.nio.http.Request;
import one.nio.http.Response;
import one.nio.server.AcceptorConfig;
import ru.vk.itmo.test.perflablsm.dao.BaseEntry;
import ru.vk.itmo.test.perflablsm.dao.Dao;
import ru.vk.itmo.test.perflablsm.dao.Entry;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** {@code /v0/entity?id=}: GET 200/404, PUT 201, DELETE 202, a missing id 400; anything else 400. On the selectors. */
final class LsmServer extends HttpServer {
    private final Dao<byte[], Entry<byte[]>> dao;

    LsmServer(int port, Dao<byte[], Entry<byte[]>> dao) throws IOException {
        super(config(port));
        this.dao = dao;
    }

    private static HttpServerConfig config(int port) {
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
        session.sendResponse(answer(request));
    }

    private Response answer(Request request) {
        String id = request.getParameter("id=");
        if (!"/v0/entity".equals(request.getPath()) || id == null || id.isEmpty()) {
            return new Response(Response.BAD_REQUEST, Response.EMPTY);
        }
        byte[] key = id.getBytes(StandardCharsets.UTF_8);
        switch (request.getMethod()) {
            case Request.METHOD_GET:
                Entry<byte[]> e = dao.get(key);
                return e == null || e.value() == null ? new Response(Response.NOT_FOUND, Response.EMPTY)
                        : new Response(Response.OK, e.value());
            case Request.METHOD_PUT:
                dao.upsert(new BaseEntry<>(key, request.getBody()));
                return new Response(Response.CREATED, Response.EMPTY);
            case Request.METHOD_DELETE:
                dao.upsert(new BaseEntry<>(key, null));
                return new Response(Response.ACCEPTED, Response.EMPTY);
            default:
                return new Response(Response.METHOD_NOT_ALLOWED, Response.EMPTY);
        }
    }
}
