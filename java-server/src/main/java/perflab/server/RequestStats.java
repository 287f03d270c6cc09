package perflab.server;

import one.nio.http.Request;
import perflab.util.Json;

import perflab.util.StripedCounters;

/** Responses counted by request method and status, in per-thread stripes so threads never contend. */
final class RequestStats {
    private static final String[] METHODS = {"GET", "PUT", "DELETE", "POST", "HEAD", "OTHER"};
    private static final int[] STATUSES = {200, 201, 202, 400, 404, 405, 413, 421, 500, 503, 504};
    private static final int COLUMNS = STATUSES.length + 1;

    private final StripedCounters counts = new StripedCounters(METHODS.length * COLUMNS);

    /** @param method one-nio's Request.METHOD_* */
    void count(int method, int status) {
        counts.increment(methodIndex(method) * COLUMNS + statusIndex(status));
    }

    long total() {
        long t = 0;
        for (int i = 0; i < counts.size(); i++) {
            t += counts.sum(i);
        }
        return t;
    }

    private static int methodIndex(int method) {
        switch (method) {
            case Request.METHOD_GET: return 0;
            case Request.METHOD_PUT: return 1;
            case Request.METHOD_DELETE: return 2;
            case Request.METHOD_POST: return 3;
            case Request.METHOD_HEAD: return 4;
            default: return 5;
        }
    }

    private static int statusIndex(int status) {
        for (int i = 0; i < STATUSES.length; i++) {
            if (STATUSES[i] == status) {
                return i;
            }
        }
        return STATUSES.length;
    }

    /** {"GET": {"200": 10, "404": 1}, ...}: only non-zero cells, like the documented example. */
    void writeTo(Json json) {
        json.beginObject();
        for (int m = 0; m < METHODS.length; m++) {
            boolean opened = false;
            for (int s = 0; s <= STATUSES.length; s++) {
                long n = counts.sum(m * COLUMNS + s);
                if (n == 0) {
                    continue;
                }
                if (!opened) {
                    json.key(METHODS[m]).beginObject();
                    opened = true;
                }
                json.field(s < STATUSES.length ? Integer.toString(STATUSES[s]) : "other", n);
            }
            if (opened) {
                json.endObject();
            }
        }
        json.endObject();
    }
}
