package perflab.server;

import one.nio.http.Request;
import java.util.Map;

/** Decides which thread runs a parsed request: the selector (sync), a bounded pool (async) or a virtual thread. */
interface Dispatcher {
    void dispatch(Request request, KvSession session);

    /** Puts the "executor" values of /v0/stats (leaf names of MetricList's executor.* specs). */
    void stats(Map<String, Object> into);

    void shutdown();
}
