package perflab.server;

import perflab.storage.Storage;
import perflab.util.Json;

import java.io.IOException;

/** A started server: storage, HTTP listener and dispatcher, stopped together. Used by Main and by tests. */
final class RunningServer {
    private final Settings settings;
    private final Storage storage;
    private final KvServer server;
    private final Dispatcher dispatcher;
    private final RequestStats requests;
    private final StatsReport stats;
    private boolean stopped;

    private RunningServer(Settings settings, Storage storage, KvServer server, Dispatcher dispatcher,
                          RequestStats requests, StatsReport stats) {
        this.settings = settings;
        this.storage = storage;
        this.server = server;
        this.dispatcher = dispatcher;
        this.requests = requests;
        this.stats = stats;
    }

    /** Binds and starts serving {@code storage}, which the server then owns (closed on stop). */
    static RunningServer start(Settings settings, Storage storage) throws IOException {
        KvServer server = KvServer.bind(settings.host, settings.port, settings.selectors);
        RequestStats requests = new RequestStats();
        StatsReport stats = new StatsReport(requests, storage);
        ApiHandler handler = new ApiHandler(storage, requests, stats, settings.debugDelayNanos);
        Dispatcher dispatcher = newDispatcher(settings, handler);
        stats.setDispatcher(dispatcher);
        server.setDispatcher(dispatcher, handler);
        server.start();
        return new RunningServer(settings, storage, server, dispatcher, requests, stats);
    }

    private static Dispatcher newDispatcher(Settings s, ApiHandler handler) {
        switch (s.mode) {
            case ASYNC:
                return new PoolDispatcher(handler, s.workers, s.queue, s.queueKind);
            case VIRTUAL:
                return new VirtualDispatcher(handler, s.queue);
            default:
                return new SyncDispatcher(handler, s.selectors);
        }
    }

    int port() {
        return server.boundPort();
    }

    String host() {
        return settings.host;
    }

    Storage storage() {
        return storage;
    }

    /** Stops accepting, drains the executor, closes (flushes) storage. Returns the "stopped" event line. */
    synchronized String stop() {
        if (stopped) {
            return null;
        }
        stopped = true;
        long t0 = System.nanoTime();
        server.stop();
        dispatcher.shutdown();
        String error = null;
        try {
            storage.close();
        } catch (IOException | RuntimeException e) {
            error = String.valueOf(e.getMessage());
            System.err.println("error: closing storage failed: " + e);
        }
        return new Json().beginObject()
                .field("event", "stopped")
                .field("uptime_ms", stats.uptimeMillis())
                .field("requests", requests.total())
                .field("shutdown_ms", (System.nanoTime() - t0) / 1_000_000)
                .field("flushed", error == null)
                .field("error", error)
                .endObject().toString();
    }
}
