package perflab.server;

import perflab.cluster.ClusterNode;
import perflab.events.EventSink;
import perflab.events.EventWriter;
import perflab.events.GcEvents;
import perflab.storage.Storage;
import perflab.util.Json;

import java.io.IOException;

/**
 * A started server: storage, HTTP listener, dispatcher and (for a server process) the event writer and gc
 * event source, stopped together. Used by Main and by tests.
 */
final class RunningServer {
    private final Settings settings;
    private final Storage storage;
    private final KvServer server;
    private final Dispatcher dispatcher;
    private final RequestStats requests;
    private final StatsReport stats;
    private final EventWriter events;
    private final GcEvents gc;
    /** Null for a single node. */
    private final ClusterNode cluster;
    private boolean stopped;

    private RunningServer(Settings settings, Storage storage, KvServer server, Dispatcher dispatcher,
                          RequestStats requests, StatsReport stats, EventWriter events, GcEvents gc,
                          ClusterNode cluster) {
        this.cluster = cluster;
        this.settings = settings;
        this.storage = storage;
        this.server = server;
        this.dispatcher = dispatcher;
        this.requests = requests;
        this.stats = stats;
        this.events = events;
        this.gc = gc;
    }

    /** A server without events (in-process tests). */
    static RunningServer start(Settings settings, Storage storage) throws IOException {
        return start(settings, storage, null, null);
    }

    /** A server whose timed events go to {@code events} (in-process tests of events); no gc events. */
    static RunningServer start(Settings settings, Storage storage, EventWriter events) throws IOException {
        return start(settings, storage, events, null);
    }

    /**
     * Binds and starts serving {@code storage}, which the server then owns (closed on stop), as it owns
     * {@code events} and {@code gc} (null when events are off).
     */
    static RunningServer start(Settings settings, Storage storage, EventWriter events, GcEvents gc)
            throws IOException {
        KvServer server = KvServer.bind(settings.host, settings.port, settings.selectors);
        EventSink sink = events != null ? events : EventSink.NONE;
        RequestStats requests = new RequestStats();
        ClusterNode cluster = settings.cluster == null ? null
                : new ClusterNode(settings.cluster, storage, settings.clusterTimeoutMillis, sink);
        StatsReport stats = new StatsReport(requests, storage, events, cluster);
        DebugPause pause = settings.debugEndpoints ? new DebugPause() : null;
        DebugEndpoints debug = settings.debugEndpoints ? new DebugEndpoints(pause, sink, gc) : null;
        ApiHandler handler = new ApiHandler(storage, requests, stats, settings.debugDelayNanos,
                settings.debugWorkNanos, debug, pause, cluster == null ? null : new ClusterHandler(cluster, requests));
        QueueFullEpisodes episodes = null;
        if (events != null && settings.mode != Mode.SYNC) {
            episodes = new QueueFullEpisodes(events);
            events.addTicker(episodes);
        }
        Dispatcher dispatcher = newDispatcher(settings, handler, episodes);
        stats.setDispatcher(dispatcher);
        server.setDispatcher(dispatcher, handler, settings.debugEndpoints);
        server.start();
        return new RunningServer(settings, storage, server, dispatcher, requests, stats, events, gc, cluster);
    }

    private static Dispatcher newDispatcher(Settings s, ApiHandler handler, QueueFullEpisodes episodes) {
        switch (s.mode) {
            case ASYNC:
                return new PoolDispatcher(handler, s.workers, s.queue, s.queueKind, episodes);
            case VIRTUAL:
                return new VirtualDispatcher(handler, s.queue, episodes);
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

    /**
     * Stops accepting, drains the executor, closes (flushes) storage, then writes the remaining events
     * (the final flushes included). Returns the "stopped" event line, which must come after them.
     */
    synchronized String stop() {
        if (stopped) {
            return null;
        }
        stopped = true;
        long t0 = System.nanoTime();
        // the JFR stream needs up to a second to deliver its last pauses: let it overlap the storage close
        Thread gcStop = gc == null ? null : new Thread(gc::close, "gc-events-stop");
        if (gcStop != null) {
            gcStop.start();
        }
        server.stop();
        dispatcher.shutdown();
        if (cluster != null) {
            cluster.close();
        }
        String error = null;
        try {
            storage.close();
        } catch (IOException | RuntimeException e) {
            error = String.valueOf(e.getMessage());
            System.err.println("error: closing storage failed: " + e);
        }
        if (gcStop != null) {
            try {
                gcStop.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (events != null) {
            events.close();
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
