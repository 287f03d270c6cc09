package perflab.server;

import one.nio.http.HttpServer;
import one.nio.http.HttpServerConfig;
import one.nio.http.HttpSession;
import one.nio.http.Request;
import one.nio.net.Socket;
import one.nio.server.AcceptorConfig;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** one-nio's HttpServer with our session class and every parsed request handed to the dispatcher. */
final class KvServer extends HttpServer {
    private volatile Dispatcher dispatcher;
    private volatile ApiHandler monitor;
    private volatile boolean debugOnSelector;

    private KvServer(HttpServerConfig config) throws IOException {
        super(config);
    }

    /**
     * Binds (one-nio binds in the constructor) but does not start accepting. one-nio reports the configured
     * port, not the kernel's choice, so port 0 is resolved here: ask the kernel for a free port, bind that,
     * and retry with another if someone took it in between.
     */
    static KvServer bind(String host, int port, int selectors) throws IOException {
        if (port != 0) {
            return bind0(host, port, selectors);
        }
        BindException last = null;
        for (int attempt = 0; attempt < 20; attempt++) {
            int candidate;
            try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName(host))) {
                candidate = probe.getLocalPort();
            }
            try {
                return bind0(host, candidate, selectors);
            } catch (BindException e) {
                last = e;
            }
        }
        throw last;
    }

    private static KvServer bind0(String host, int port, int selectors) throws IOException {
        AcceptorConfig acceptor = new AcceptorConfig();
        acceptor.address = host;
        acceptor.port = port;
        acceptor.reusePort = false;
        acceptor.noDelay = true;
        HttpServerConfig config = new HttpServerConfig();
        config.acceptors = new AcceptorConfig[]{acceptor};
        config.selectors = selectors;
        config.closeSessions = true;
        return new KvServer(config);
    }

    /**
     * @param monitor        answers GET /v0/stats on the selector thread: the lab's sampling must keep working
     *                       while the executor it observes is saturated and rejecting
     * @param debugEndpoints /v0/debug/* also go to the monitor (a pause must not wait behind paused requests);
     *                       otherwise they reach the API like any unknown path
     */
    void setDispatcher(Dispatcher dispatcher, ApiHandler monitor, boolean debugEndpoints) {
        this.dispatcher = dispatcher;
        this.monitor = monitor;
        this.debugOnSelector = debugEndpoints;
    }

    int boundPort() {
        return port;
    }

    @Override
    public HttpSession createSession(Socket socket) {
        return new KvSession(socket, this);
    }

    @Override
    public void handleRequest(Request request, HttpSession session) {
        String uri = request.getURI();
        if (isStats(uri) || debugOnSelector && uri.startsWith("/v0/debug/")) {
            monitor.handle(request, (KvSession) session);
        } else {
            dispatcher.dispatch(request, (KvSession) session);
        }
    }

    private static boolean isStats(String uri) {
        return uri.startsWith("/v0/stats") && (uri.length() == 9 || uri.charAt(9) == '?');
    }
}
