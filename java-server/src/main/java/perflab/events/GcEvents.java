package perflab.events;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Starts the gc event source chosen by --gc-events. JFR takes ~0.5 s of class loading to start, so it
 * starts on its own thread while the storage opens; the server waits for it (awaitStarted) before it
 * listens, because JFR's start also throws away compiled code that then has to be compiled again.
 */
public final class GcEvents implements AutoCloseable {
    private final CountDownLatch started = new CountDownLatch(1);
    private volatile AutoCloseable source;
    private volatile String active = "off";
    private volatile boolean closed;

    private GcEvents() {
    }

    /** @param mode jfr, mxbean or off */
    public static GcEvents start(String mode, EventSink sink) {
        GcEvents g = new GcEvents();
        if (mode.equals("off") || !sink.enabled()) {
            g.started.countDown();
        } else if (mode.equals("mxbean")) {
            g.install(new MxBeanGcEvents(sink), "mxbean");
        } else {
            Thread t = new Thread(() -> {
                try {
                    g.install(new JfrGcEvents(sink), "jfr");
                } catch (Throwable e) { // e.g. a runtime without the jdk.jfr module, or JFR disabled
                    System.err.println("events: JFR unavailable (" + e + "); gc events come from the MXBeans,"
                            + " with millisecond times");
                    g.install(new MxBeanGcEvents(sink), "mxbean");
                }
            }, "gc-events-start");
            t.setDaemon(true);
            t.start();
        }
        return g;
    }

    private synchronized void install(AutoCloseable s, String name) {
        if (closed) {
            closeQuietly(s);
        } else {
            source = s;
            active = name;
        }
        started.countDown();
    }

    /** Blocks until the source listens (at most {@code millis}); returns jfr, mxbean or off. */
    public String awaitStarted(long millis) throws InterruptedException {
        started.await(millis, TimeUnit.MILLISECONDS);
        return active;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (source != null) {
            closeQuietly(source);
            source = null;
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            System.err.println("events: closing the gc source failed: " + e);
        }
    }
}
