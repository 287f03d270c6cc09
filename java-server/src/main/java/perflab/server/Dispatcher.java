package perflab.server;

import one.nio.http.Request;
import perflab.util.Json;

/** Decides which thread runs a parsed request: the selector (sync), a bounded pool (async) or a virtual thread. */
interface Dispatcher {
    void dispatch(Request request, KvSession session);

    /** The "executor" object of /v0/stats (without the enclosing braces' key). */
    void writeStats(Json json);

    void shutdown();
}
