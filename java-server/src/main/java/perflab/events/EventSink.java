package perflab.events;

/** Where event sources put events. Must never block: implementations drop rather than wait. */
public interface EventSink {
    /** Discards everything (events off, or an engine opened in-process without a server). */
    EventSink NONE = new EventSink() {
        @Override
        public void emit(Event event) {
        }

        @Override
        public boolean enabled() {
            return false;
        }
    };

    void emit(Event event);

    /** False when emitting would be wasted work (sources may skip measuring). */
    boolean enabled();
}
