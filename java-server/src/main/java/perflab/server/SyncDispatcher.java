package perflab.server;

import one.nio.http.Request;

import java.util.Map;

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
    public void stats(Map<String, Object> into) {
        into.put("mode", "sync");
        into.put("pool_size", (long) selectors);
        into.put("active_workers", 0L);
        into.put("queue_depth", 0L);
        into.put("queue_capacity", 0L);
        into.put("rejected", 0L);
        into.put("completed", completed.sum());
    }

    @Override
    public void shutdown() {
    }
}
