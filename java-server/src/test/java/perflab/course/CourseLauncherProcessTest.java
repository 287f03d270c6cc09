package perflab.course;

import org.junit.Assume;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import perflab.testing.FreePorts;
import perflab.testing.MiniJson;
import perflab.testing.ServerProcess;
import perflab.testing.TempDir;

import java.io.File;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/** The launcher as a process on a stand-in course service: the ready line, SIGTERM, exit statuses. */
public class CourseLauncherProcessTest {
    @ClassRule
    public static final TempDir TEMP = new TempDir();

    private static final List<String> JVM = Collections.singletonList("-Xmx64m");

    /** start() listens on selfPort and records its config; stop() writes a marker, as a DAO flush would. */
    private static final Map<String, String> STAND_IN = StandIns.sources(
            "ru.vk.itmo.test.standin.StandInService", "package ru.vk.itmo.test.standin;\n"
                    + "import java.nio.file.*;\n"
                    + "import java.util.concurrent.CompletableFuture;\n"
                    + "public class StandInService implements ru.vk.itmo.Service {\n"
                    + "    private final ru.vk.itmo.ServiceConfig config;\n"
                    + "    private java.net.ServerSocket socket;\n"
                    + "    StandInService(ru.vk.itmo.ServiceConfig config) { this.config = config; }\n"
                    + "    public CompletableFuture<Void> start() throws java.io.IOException {\n"
                    + "        System.out.println(\"stand-in: starting\");\n"
                    + "        socket = new java.net.ServerSocket(config.selfPort(), 50,\n"
                    + "                java.net.InetAddress.getByName(\"127.0.0.1\"));\n"
                    + "        Files.writeString(config.workingDir().resolve(\"config\"), config.toString());\n"
                    + "        return CompletableFuture.completedFuture(null);\n"
                    + "    }\n"
                    + "    public CompletableFuture<Void> stop() throws java.io.IOException {\n"
                    + "        socket.close();\n"
                    + "        Files.writeString(config.workingDir().resolve(\"stopped\"), \"flushed\");\n"
                    + "        return CompletableFuture.completedFuture(null);\n"
                    + "    }\n"
                    + "}\n",
            "ru.vk.itmo.test.standin.StandInFactory", StandIns.factory("ru.vk.itmo.test.standin.StandInFactory", 3,
                    "new StandInService(config)"),
            "ru.vk.itmo.test.standin.BrokenFactory", StandIns.factory("ru.vk.itmo.test.standin.BrokenFactory", 2,
                    "new ru.vk.itmo.Service() {\n"
                            + "            public CompletableFuture<Void> start() {\n"
                            + "                return CompletableFuture.failedFuture(new java.io.IOException(\"disk on fire\",\n"
                            + "                        new IllegalStateException(\"root cause\")));\n"
                            + "            }\n"
                            + "            public CompletableFuture<Void> stop() { return null; }\n"
                            + "        }").replace("package ru.vk.itmo.test.standin;",
                    "package ru.vk.itmo.test.standin;\nimport java.util.concurrent.CompletableFuture;"),
            "ru.vk.itmo.test.standin.SlowFactory", StandIns.factory("ru.vk.itmo.test.standin.SlowFactory", 1,
                    "new ru.vk.itmo.Service() {\n"
                            + "            public java.util.concurrent.CompletableFuture<Void> start() {\n"
                            + "                return new java.util.concurrent.CompletableFuture<>();\n"
                            + "            }\n"
                            + "            public java.util.concurrent.CompletableFuture<Void> stop() { return null; }\n"
                            + "        }"),
            "ru.vk.itmo.test.standin.dao.StandInDao", "package ru.vk.itmo.test.standin.dao;\n"
                    + "public class StandInDao implements ru.vk.itmo.dao.Dao<String> {\n"
                    + "    public void close() {}\n"
                    + "}\n");

    private static Path api;
    private static Path standIn;

    @BeforeClass
    public static void compileStandIns() throws Exception {
        api = StandIns.compile(Files.createDirectories(TEMP.dir("api")), StandIns.API);
        standIn = StandIns.compile(Files.createDirectories(TEMP.dir("standin")), STAND_IN, api);
    }

    /** The launcher's own classes (build/classes/java/course under Gradle) and the given entries. */
    private static String classpath(Path... entries) throws Exception {
        StringBuilder cp = new StringBuilder(Paths.get(
                CourseLauncher.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        for (Path p : entries) {
            cp.append(File.pathSeparator).append(p);
        }
        return cp.toString();
    }

    private static ServerProcess launch(Path javaHome, String classpath, String... args) throws Exception {
        return ServerProcess.launch(javaHome, JVM, classpath, "perflab.course.CourseLauncher", args);
    }

    @Test
    public void readyThenSigtermStopsTheServiceAndPrintsStopped() throws Exception {
        runsAndStops(ServerProcess.javaHome());
    }

    @Test
    public void runsOnANewerJdk() throws Exception {
        Path jdk = Paths.get(System.getProperty("perflab.test.jdk21", "/usr/lib/jvm/temurin-25-jdk-amd64"));
        Assume.assumeTrue("no JDK 21+ at " + jdk, Files.isExecutable(jdk.resolve("bin/java")));
        runsAndStops(jdk);
    }

    private static void runsAndStops(Path javaHome) throws Exception {
        int port = FreePorts.pick(1)[0];
        Path data = TEMP.dir("data-" + javaHome.getFileName()).resolve("not/yet");
        String self = "http://127.0.0.1:" + port;
        try (ServerProcess p = launch(javaHome, classpath(api, standIn), "--port", String.valueOf(port),
                "--data-dir", data.toString(), "--cluster", "http://127.0.0.1:1," + self)) {
            Map<String, Object> ready = p.awaitReady();
            assertEquals(Arrays.asList("event", "launcher", "factory", "stage", "host", "port", "url", "cluster",
                    "data_dir", "pid", "java_version", "start_ms", "dao_classes", "packages"),
                    Arrays.asList(ready.keySet().toArray()));
            assertEquals("course", ready.get("launcher"));
            assertEquals("ru.vk.itmo.test.standin.StandInFactory", ready.get("factory"));
            assertEquals(3L, ready.get("stage"));
            assertEquals((long) port, ready.get("port"));
            assertEquals(self, ready.get("url"));
            assertEquals(Arrays.asList("http://127.0.0.1:1", self), ready.get("cluster"));
            assertEquals(data.toString(), ready.get("data_dir"));
            assertEquals(p.pid(), MiniJson.number(ready.get("pid")));
            assertTrue(ready.toString(), ready.get("java_version").toString().matches("\\d+.*"));
            assertEquals(Collections.singletonList("ru.vk.itmo.test.standin.dao.StandInDao"), ready.get("dao_classes"));
            assertEquals(Arrays.asList("ru.vk.itmo.test.standin", "ru.vk.itmo.test.standin.dao"), ready.get("packages"));
            assertEquals("ServiceConfig[selfPort=" + port + ", selfUrl=" + self + ", clusterUrls=[http://127.0.0.1:1, "
                    + self + "], workingDir=" + data + "]", Files.readString(data.resolve("config")));
            new Socket("127.0.0.1", port).close();
            assertEquals("a clean stop exits 0; stderr: " + p.stderr(), 0, p.terminate());
            assertEquals("flushed", Files.readString(data.resolve("stopped")));
            List<String> lines = p.stdoutLines();
            assertEquals("stdout is the protocol alone: " + lines, 2, lines.size());
            Map<String, Object> stopped = MiniJson.object(lines.get(1));
            assertEquals(Arrays.asList("event", "uptime_ms", "stop_ms", "error"), Arrays.asList(stopped.keySet().toArray()));
            assertEquals("stopped", stopped.get("event"));
            assertEquals(null, stopped.get("error"));
            assertTrue("the service's System.out goes to stderr: " + p.stderr(), p.stderr().contains("stand-in: starting"));
        }
    }

    @Test
    public void badFlagsExit2AndStartFailuresExit1NamingTheCause() throws Exception {
        int port = FreePorts.pick(1)[0];
        String cp = classpath(api, standIn);
        String dir = TEMP.dir("failures").toString();
        fails(2, "error: --port is required", launch(ServerProcess.javaHome(), cp, "--data-dir", dir));
        fails(1, "error: ru.vk.itmo.test.standin.BrokenFactory$1.start() failed: java.io.IOException: disk on fire;"
                        + " caused by java.lang.IllegalStateException: root cause",
                launch(ServerProcess.javaHome(), cp, "--port", String.valueOf(port), "--data-dir", dir, "--stage", "2"));
        fails(1, "error: ru.vk.itmo.test.standin.SlowFactory$1.start() did not complete within 1000 ms"
                        + " (--start-timeout)", launch(ServerProcess.javaHome(), cp, "--port", String.valueOf(port),
                "--data-dir", dir, "--factory", "ru.vk.itmo.test.standin.SlowFactory", "--start-timeout", "1s"));
        fails(1, "error: no class annotated with @ru.vk.itmo.test.ServiceFactory that implements its Factory is on"
                + " the classpath (scanned 5 classes)", launch(ServerProcess.javaHome(), classpath(api),
                "--port", String.valueOf(port), "--data-dir", dir));
        fails(1, "error: the course API class ru.vk.itmo.Service is not on the classpath",
                launch(ServerProcess.javaHome(), classpath(), "--port", String.valueOf(port)));
    }

    @Test
    public void helpGoesToStdoutAndExits0() throws Exception {
        try (ServerProcess p = launch(ServerProcess.javaHome(), classpath(), "--help")) {
            assertEquals(0, p.waitFor(30_000));
            assertTrue(p.stdoutLines().toString(), String.join("\n", p.stdoutLines()).contains("--start-timeout"));
        }
    }

    private static void fails(int status, String stderr, ServerProcess p) throws Exception {
        try (p) {
            assertEquals("stderr: " + p.stderr(), status, p.waitFor(30_000));
            assertTrue("stderr was: " + p.stderr(), p.stderr().contains(stderr));
            assertEquals("nothing on stdout", Collections.emptyList(), p.stdoutLines());
            assertFalse(p.isAlive());
        }
    }
}
