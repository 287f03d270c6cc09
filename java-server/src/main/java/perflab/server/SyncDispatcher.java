package perflab.server;

import one.nio.http.Request;
import perflab.util.Json;

import java.util.concurrent.atomic.LongAdder;

/** one-nio's default: the selector thread that parsed the request also handles it. */
final class SyncDispatcher implements Dispatcher {
    private final ApiHandler handler;
    private final int selectors;
    private final LongAdder completed = new LongAdder();

    SyncDispatcher(ApiHandler handler, int selectors) {
        this.handler = handler;
        this.selectors = selectors;
    }

    @Override
    public void dispatch(Request request, KvSession session) {
        handler.handle(request, session);
        completed.increment();
    }

    @Override
    public void writeStats(Json json) {
        json.beginObject()
                .field("mode", "sync")
                .field("pool_size", selectors)
                .field("active_workers", 0)
                .field("queue_depth", 0)
                .field("queue_capacity", 0)
                .field("rejected", 0)
                .field("completed", completed.sum())
                .endObject();
    }

    @Override
    public void shutdown() {
    }
}
