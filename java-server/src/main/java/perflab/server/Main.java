package perflab.server;

import perflab.events.EventSink;
import perflab.events.EventWriter;
import perflab.events.GcEvents;
import perflab.spec.HelpText;
import perflab.spec.SpecJson;
import perflab.storage.InvalidOptionException;
import perflab.storage.Storage;
import perflab.storage.StorageException;
import perflab.storage.StorageFactory;
import perflab.util.Json;

import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.util.concurrent.CountDownLatch;

/**
 * Entry point: flags → config line → storage → listening → ready line; SIGTERM/SIGINT → graceful stop
 * (memtables flushed) → stopped line. stdout carries only those JSON lines; diagnostics go to stderr.
 * Exit status 2 for bad configuration, 1 for a start-up failure.
 */
public final class Main {
    private static final PrintStream OUT = System.out;

    private Main() {
    }

    public static void main(String[] args) {
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) {
                System.err.print(HelpText.render());
                System.exit(0);
            }
            if (a.equals("--options-json")) {
                emit(SpecJson.render());
                System.exit(0);
            }
        }
        Settings settings;
        try {
            settings = Settings.parse(args);
        } catch (ConfigException e) {
            fail(2, e.getMessage());
            return;
        }
        if (settings.mode == Mode.VIRTUAL && VirtualDispatcher.unsupportedReason() != null) {
            fail(2, VirtualDispatcher.unsupportedReason());
            return;
        }
        emit(settings.toJson());

        // started before the storage, so that flushes of replayed logs have their events too
        EventWriter events = settings.events ? new EventWriter(OUT) : null;
        GcEvents gc = events != null ? GcEvents.start(settings.gcEvents, events) : null;
        Storage storage;
        try {
            storage = StorageFactory.open(settings.backend, settings.dataDir, settings.storage,
                    events != null ? events : EventSink.NONE);
        } catch (InvalidOptionException e) {
            stopEvents(events, gc);
            fail(2, "--" + e.getMessage());
            return;
        } catch (StorageException e) {
            stopEvents(events, gc);
            fail(1, e.getMessage());
            return;
        } catch (RuntimeException e) {
            stopEvents(events, gc);
            fail(1, "cannot open " + settings.backend + " storage in " + settings.dataDir + ": " + e);
            return;
        }

        if (gc != null) {
            // JFR's start retransforms JDK classes, which throws away ~1200 compiled methods (measured with
            // -XX:+PrintCompilation): let that happen before the first request, not in the lab's window
            try {
                gc.awaitStarted(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        RunningServer server;
        try {
            server = RunningServer.start(settings, storage, events, gc);
        } catch (BindException e) {
            closeQuietly(storage);
            stopEvents(events, gc);
            fail(1, "port " + settings.port + " on " + settings.host + " is already in use");
            return;
        } catch (IOException | RuntimeException e) {
            closeQuietly(storage);
            stopEvents(events, gc);
            fail(1, "cannot listen on " + settings.host + ":" + settings.port + ": " + e);
            return;
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Runnable stop = () -> {
            String line = server.stop(); // null when it already happened
            if (line != null) {
                emit(line);
            }
            stopped.countDown();
        };
        // SIGTERM/SIGINT: a graceful stop that exits 0; the hook covers every other way out (System.exit)
        GracefulSignals.install(() -> {
            stop.run();
            System.exit(0);
        });
        Runtime.getRuntime().addShutdownHook(new Thread(stop, "shutdown"));

        emit(new Json().beginObject()
                .field("event", "ready")
                .field("host", settings.host)
                .field("port", server.port())
                .field("pid", ProcessHandle.current().pid())
                .field("java_version", System.getProperty("java.version"))
                .endObject().toString());
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void stopEvents(EventWriter events, GcEvents gc) {
        if (gc != null) {
            gc.close();
        }
        if (events != null) {
            events.close();
        }
    }

    private static void closeQuietly(Storage storage) {
        try {
            storage.close();
        } catch (IOException | RuntimeException e) {
            System.err.println("error: closing storage failed: " + e);
        }
    }

    private static void emit(String line) {
        synchronized (OUT) {
            OUT.println(line);
            OUT.flush();
        }
    }

    private static void fail(int status, String message) {
        System.err.println("error: " + message);
        System.err.flush();
        System.exit(status);
    }
}
