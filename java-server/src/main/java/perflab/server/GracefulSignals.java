package perflab.server;

import sun.misc.Signal;

/**
 * Turns SIGTERM and SIGINT into a graceful stop with exit status 0 (with only a shutdown hook the JVM
 * would exit 143/130, which callers read as a failure). Handlers run the stop on their own thread so
 * the JVM's signal dispatcher is not blocked while memtables flush.
 */
final class GracefulSignals {
    private GracefulSignals() {
    }

    static void install(Runnable gracefulExit) {
        for (String name : new String[]{"TERM", "INT"}) {
            try {
                Signal.handle(new Signal(name), sig -> {
                    Thread t = new Thread(gracefulExit, "graceful-stop-" + sig.getName());
                    t.start();
                });
            } catch (IllegalArgumentException e) {
                // the signal is reserved here (e.g. -Xrs): the shutdown hook still flushes, exit code 128+n
                System.err.println("warning: cannot handle SIG" + name + ": " + e.getMessage());
            }
        }
    }
}
