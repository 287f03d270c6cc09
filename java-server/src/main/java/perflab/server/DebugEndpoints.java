package perflab.server;

import perflab.events.Event;
import perflab.events.EventSink;
import perflab.events.GcEvents;
import perflab.spec.EventList;
import perflab.util.Json;

/** The test aids behind --debug-endpoints on: a GC on demand and a request pause, each leaving an event. */
final class DebugEndpoints {
    static final long MAX_PAUSE_MS = 60_000;

    private final DebugPause pause;
    private final EventSink events;
    private final GcEvents gc;

    /** @param gc null when the server has no gc event source (in-process test servers) */
    DebugEndpoints(DebugPause pause, EventSink events, GcEvents gc) {
        this.pause = pause;
        this.events = events;
        this.gc = gc;
    }

    /** Runs System.gc() once the gc event source listens; returns a JSON body. */
    String gc() throws InterruptedException {
        String source = gc == null ? "off" : gc.awaitStarted(30_000);
        long start = System.nanoTime();
        System.gc();
        return new Json().beginObject()
                .field("gc_events", source)
                .field("ms", (System.nanoTime() - start) / 1_000_000)
                .endObject().toString();
    }

    /**
     * Starts a pause of {@code msText} milliseconds now and emits its debug_pause event (also the
     * response body). Throws IllegalArgumentException with the reason for a bad value.
     */
    String pause(String msText) {
        long ms;
        try {
            ms = Long.parseLong(msText == null ? "" : msText.trim());
        } catch (NumberFormatException e) {
            ms = -1;
        }
        if (ms < 1 || ms > MAX_PAUSE_MS) {
            throw new IllegalArgumentException("ms: expected an integer between 1 and " + MAX_PAUSE_MS + ", got "
                    + (msText == null ? "nothing" : "'" + msText + "'"));
        }
        long start = System.nanoTime();
        long duration = ms * 1_000_000L;
        pause.start(start, duration);
        Event event = Event.of(EventList.DEBUG_PAUSE, start, duration);
        events.emit(event);
        return event.toJson();
    }
}
