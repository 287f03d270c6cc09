package perflab.course;

import sun.misc.Signal;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs a highload-dht course service on a port: finds its {@code @ServiceFactory} factory on the classpath,
 * builds the ServiceConfig, starts it and stops it on SIGTERM/SIGINT (so its DAO flushes). Everything is
 * reached by reflection, so the jar (built for Java 17) runs any student's build on the student's JDK.
 * stdout carries one JSON line per event ({@code ready}, {@code stopped}); people read stderr.
 */
public final class CourseLauncher {
    private final LaunchOptions options;
    private final PrintStream protocol;
    private final CourseApi api;
    private final long startNanos = System.nanoTime();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final CompletableFuture<Integer> stopStatus = new CompletableFuture<>();
    private Object service;

    private CourseLauncher(LaunchOptions options, PrintStream protocol, CourseApi api) {
        this.options = options;
        this.protocol = protocol;
        this.api = api;
    }

    public static void main(String[] args) {
        if (LaunchOptions.wantsHelp(args)) {
            System.out.println(LaunchOptions.USAGE);
            return;
        }
        // stdout is the protocol; the student's System.out.println goes to stderr with the rest of its output
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        try {
            LaunchOptions options = LaunchOptions.parse(args);
            ClassLoader loader = CourseLauncher.class.getClassLoader();
            new CourseLauncher(options, protocol, CourseApi.load(loader)).run(loader);
        } catch (LaunchException e) {
            System.err.println("error: " + e.getMessage());
            if (e.getCause() != null) {
                e.getCause().printStackTrace();
            }
            System.exit(e.exitStatus);
        } catch (RuntimeException e) { // a launcher bug must not leave a half-started service running
            System.err.println("error: the launcher failed: " + e);
            e.printStackTrace();
            System.exit(LaunchException.START_FAILED);
        }
    }

    private void run(ClassLoader loader) throws LaunchException {
        CourseClasspath classpath = scan(loader);
        CourseClasspath.Factory factory = FactoryChoice.choose(options, classpath, loader, api);
        Path dataDir = dataDir();
        System.err.println("course launcher: " + factory + " on port " + options.port + ", data in " + dataDir);
        startService(factory, loader, dataDir);
        installStop();
        Map<String, Object> ready = new LinkedHashMap<>();
        ready.put("event", "ready");
        ready.put("launcher", "course");
        ready.put("factory", factory.name);
        ready.put("stage", factory.stage);
        ready.put("host", options.host);
        ready.put("port", options.port);
        ready.put("url", options.selfUrl);
        ready.put("cluster", options.cluster);
        ready.put("data_dir", dataDir.toString());
        ready.put("pid", ProcessHandle.current().pid());
        ready.put("java_version", System.getProperty("java.version"));
        ready.put("start_ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
        ready.put("dao_classes", classpath.daoClasses);
        ready.put("packages", classpath.packagesUnder(CourseClasspath.studentRoot(factory.name)));
        protocol.println(json(ready));
        try {
            new CountDownLatch(1).await(); // the service's threads may all be daemons: the JVM lives until a stop
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private CourseClasspath scan(ClassLoader loader) throws LaunchException {
        Path own;
        try {
            own = Paths.get(CourseLauncher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException | RuntimeException e) {
            throw LaunchException.startFailed("cannot tell where the launcher's own classes are: " + e);
        }
        List<Path> entries = CourseClasspath.studentEntries(System.getProperty("java.class.path"), own);
        CourseClasspath cp;
        try {
            cp = CourseClasspath.scan(entries, loader, api);
        } catch (IOException e) {
            throw LaunchException.startFailed("cannot read the classpath: " + e);
        }
        if (!cp.loadFailures.isEmpty()) {
            System.err.println("course launcher: " + cp.loadFailures.size() + " of " + cp.classNames.size()
                    + " classes on the classpath cannot be loaded and were skipped (first: "
                    + cp.loadFailures.get(0) + ")");
        }
        return cp;
    }

    private Path dataDir() throws LaunchException {
        try {
            if (options.dataDir == null) {
                return Files.createTempDirectory("perflab-course-" + options.port + "-");
            }
            return Files.createDirectories(options.dataDir);
        } catch (IOException e) {
            throw LaunchException.startFailed("cannot create data directory "
                    + (options.dataDir == null ? "in " + System.getProperty("java.io.tmpdir") : options.dataDir)
                    + ": " + e);
        }
    }

    /** create() and start() with --start-timeout, then the first connection to --port within what is left. */
    private void startService(CourseClasspath.Factory factory, ClassLoader loader, Path dataDir)
            throws LaunchException {
        long deadline = startNanos + TimeUnit.MILLISECONDS.toNanos(options.startTimeoutMs);
        String what = factory.name + ".create(ServiceConfig) and start()";
        try {
            Class<?> factoryClass = Class.forName(factory.name, false, loader);
            Object config = api.newConfig(options.port, options.selfUrl, new ArrayList<>(options.cluster), dataDir);
            service = api.createService(factoryClass, config);
            what = service.getClass().getName() + ".start()";
            Future<?> started = api.start(service);
            if (started != null) {
                started.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } catch (TimeoutException e) {
            throw LaunchException.startFailed(what + " did not complete within " + options.startTimeoutMs
                    + " ms (--start-timeout)");
        } catch (ExecutionException e) {
            throw new LaunchException(LaunchException.START_FAILED, what + " failed: " + causes(e.getCause()),
                    e.getCause());
        } catch (Throwable e) {
            throw new LaunchException(LaunchException.START_FAILED, what + " failed: " + causes(e), e);
        }
        awaitListening(deadline);
    }

    /** A service whose start() returns before it listens: wait, so "ready" means it accepts connections. */
    private void awaitListening(long deadline) throws LaunchException {
        IOException last;
        do {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(options.host, options.port), 1000);
                return;
            } catch (IOException e) {
                last = e;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        } while (System.nanoTime() < deadline);
        throw LaunchException.startFailed("start() completed but nothing accepts connections on " + options.host
                + ":" + options.port + " within " + options.startTimeoutMs + " ms (--start-timeout; last: " + last
                + "): the service must listen on ServiceConfig.selfPort()");
    }

    /**
     * SIGTERM/SIGINT stop the service and exit 0 (1 when stop() failed); with a shutdown hook alone the JVM
     * would exit 143/130. The hook still stops it on any other way out (System.exit from the service).
     */
    private void installStop() {
        for (String name : new String[]{"TERM", "INT"}) {
            try {
                Signal.handle(new Signal(name), sig -> new Thread(() -> System.exit(stopOnce()),
                        "course-stop-" + sig.getName()).start());
            } catch (IllegalArgumentException e) { // reserved (e.g. -Xrs): the hook still stops the service
                System.err.println("course launcher: cannot handle SIG" + name + ": " + e.getMessage());
            }
        }
        Runtime.getRuntime().addShutdownHook(new Thread(this::stopOnce, "course-shutdown"));
    }

    /** Stops the service once, prints the stopped line, returns the exit status; later callers wait for it. */
    private int stopOnce() {
        if (!stopping.compareAndSet(false, true)) {
            try {
                return stopStatus.get(options.stopTimeoutMs + 5000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException | ExecutionException | TimeoutException e) {
                return 1;
            }
        }
        long t0 = System.nanoTime();
        String error = null;
        // on a thread of its own: a stop() that blocks before returning its future is bounded too
        CompletableFuture<Object> done = new CompletableFuture<>();
        Thread stopper = new Thread(() -> {
            try {
                Future<?> f = api.stop(service);
                done.complete(f == null ? null : f.get());
            } catch (ExecutionException e) {
                done.completeExceptionally(e.getCause());
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }, "course-service-stop");
        stopper.setDaemon(true);
        stopper.start();
        try {
            done.get(options.stopTimeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            error = "stop() did not complete within " + options.stopTimeoutMs + " ms (--stop-timeout)";
        } catch (InterruptedException e) {
            error = "interrupted while waiting for stop()";
        } catch (ExecutionException e) {
            error = "stop() failed: " + causes(e.getCause());
            System.err.println("error: " + error);
            e.getCause().printStackTrace();
        }
        if (error != null && !error.startsWith("stop() failed")) {
            System.err.println("error: " + error);
        }
        Map<String, Object> stopped = new LinkedHashMap<>();
        stopped.put("event", "stopped");
        stopped.put("uptime_ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
        stopped.put("stop_ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        stopped.put("error", error);
        protocol.println(json(stopped));
        protocol.flush();
        int status = error == null ? 0 : 1;
        stopStatus.complete(status);
        return status;
    }

    /** "a: x; caused by b: y" for a throwable and its causes. */
    static String causes(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (int depth = 0; t != null && depth < 10; t = t.getCause(), depth++) {
            sb.append(depth == 0 ? "" : "; caused by ").append(t);
        }
        return sb.toString();
    }

    /** One JSON object: strings, numbers, null and lists of those. */
    static String json(Map<String, ?> fields) {
        StringBuilder sb = new StringBuilder("{");
        for (Map.Entry<String, ?> e : fields.entrySet()) {
            sb.append(sb.length() > 1 ? "," : "");
            value(sb, e.getKey());
            sb.append(':');
            value(sb, e.getValue());
        }
        return sb.append('}').toString();
    }

    private static void value(StringBuilder sb, Object v) {
        if (v == null || v instanceof Number || v instanceof Boolean) {
            sb.append(v);
        } else if (v instanceof List) {
            String separator = "";
            sb.append('[');
            for (Object item : (List<?>) v) {
                sb.append(separator);
                value(sb, item);
                separator = ",";
            }
            sb.append(']');
        } else {
            sb.append('"');
            for (char c : v.toString().toCharArray()) {
                if (c == '"' || c == '\\') {
                    sb.append('\\').append(c);
                } else if (c < 0x20) {
                    sb.append(String.format("\\u%04x", (int) c));
                } else {
                    sb.append(c);
                }
            }
            sb.append('"');
        }
    }
}
