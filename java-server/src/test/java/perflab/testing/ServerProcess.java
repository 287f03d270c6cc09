package perflab.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A real server JVM started with the test classpath. Collects stdout lines (the JSON protocol) and stderr.
 * Always used in try-with-resources: close() kills the process if a test failed half-way, and a
 * shutdown hook catches anything left when the test JVM exits.
 */
public final class ServerProcess implements AutoCloseable {
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (Process p : LIVE) {
                p.destroyForcibly();
            }
        }));
    }

    private final Process process;
    private final LinkedBlockingQueue<String> stdout = new LinkedBlockingQueue<>();
    private final List<String> stdoutAll = Collections.synchronizedList(new ArrayList<>());
    private final StringBuffer stderr = new StringBuffer();
    private final Thread outReader;
    private final Thread errReader;
    private int port = -1;

    private ServerProcess(Process process) {
        this.process = process;
        LIVE.add(process);
        outReader = pump(process.getInputStream(), line -> {
            stdoutAll.add(line);
            stdout.add(line);
        });
        errReader = pump(process.getErrorStream(), line -> stderr.append(line).append('\n'));
    }

    public static Path javaHome() {
        return Paths.get(System.getProperty("java.home"));
    }

    /** Starts {@code mainClass} (default the server) on the given JVM with JVM options and arguments. */
    public static ServerProcess start(Path javaHome, List<String> jvmOptions, String mainClass, String... args)
            throws IOException {
        return launch(javaHome, jvmOptions, classpath(), mainClass, args);
    }

    /** Starts {@code mainClass} with a classpath of its own (the course launcher's tests). */
    public static ServerProcess launch(Path javaHome, List<String> jvmOptions, String classpath, String mainClass,
                                      String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaHome.resolve("bin").resolve("java").toString());
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(classpath);
        cmd.add(mainClass);
        cmd.addAll(Arrays.asList(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        return new ServerProcess(pb.start());
    }

    public static ServerProcess server(List<String> jvmOptions, String... args) throws IOException {
        return start(javaHome(), jvmOptions, "perflab.server.Main", args);
    }

    public static String classpath() {
        String cp = System.getProperty("perflab.test.classpath");
        return cp != null && !cp.isEmpty() ? cp : System.getProperty("java.class.path");
    }

    private interface LineSink {
        void accept(String line);
    }

    private static Thread pump(java.io.InputStream in, LineSink sink) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    sink.accept(line);
                }
            } catch (IOException ignored) {
                // process gone
            }
        }, "server-output");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Waits for the next stdout line that is a JSON event with this name. */
    public Map<String, Object> awaitEvent(String event, long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            long left = deadline - System.currentTimeMillis();
            String line = left > 0 ? stdout.poll(left, TimeUnit.MILLISECONDS) : null;
            if (line == null) {
                throw new AssertionError("no '" + event + "' event within " + timeoutMs + " ms; alive="
                        + process.isAlive() + " stdout=" + stdoutAll + " stderr=" + stderr);
            }
            Map<String, Object> m = MiniJson.object(line);
            if (event.equals(m.get("event"))) {
                if (event.equals("ready")) {
                    port = (int) MiniJson.number(m.get("port"));
                }
                return m;
            }
        }
    }

    public Map<String, Object> awaitReady() throws InterruptedException {
        return awaitEvent("ready", 30_000);
    }

    public int port() {
        if (port < 0) {
            throw new IllegalStateException("server not ready");
        }
        return port;
    }

    /** Waits for exit; returns the status. */
    public int waitFor(long timeoutMs) throws InterruptedException {
        if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
            throw new AssertionError("process still running after " + timeoutMs + " ms; stderr=" + stderr);
        }
        outReader.join(2000);
        errReader.join(2000);
        LIVE.remove(process);
        return process.exitValue();
    }

    /**
     * SIGTERM: a graceful stop. Sent through ProcessHandle because Process.destroy() also closes our end
     * of the pipes, which would lose the "stopped" line.
     */
    public int terminate() throws InterruptedException {
        process.toHandle().destroy();
        return waitFor(60_000);
    }

    /** SIGKILL: no shutdown hooks, no flush. */
    public void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
        LIVE.remove(process);
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public List<String> stdoutLines() {
        synchronized (stdoutAll) {
            return new ArrayList<>(stdoutAll);
        }
    }

    public String stderr() {
        return stderr.toString();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        LIVE.remove(process);
    }
}
