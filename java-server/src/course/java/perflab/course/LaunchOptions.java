package perflab.course;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The launcher's flags, parsed and checked once; every bad value is named (exit status 2). */
final class LaunchOptions {
    static final String USAGE = String.join("\n",
            "usage: java -cp 'perflab-course.jar:<student classes or jars>:lib/*' perflab.course.CourseLauncher",
            "           --port N [flags]",
            "Starts a highload-dht course service (ru.vk.itmo.Service from a @ServiceFactory factory) on a port.",
            "  --port N               the service's port, ServiceConfig.selfPort (required)",
            "  --host H               host of the default --self-url (default 127.0.0.1); where the service",
            "                         binds is its own choice",
            "  --data-dir PATH        ServiceConfig.workingDir, created if missing (default: a new temporary",
            "                         directory, named in the ready line)",
            "  --cluster URL,...      ServiceConfig.clusterUrls, http://host:port each (default: --self-url alone)",
            "  --self-url URL         ServiceConfig.selfUrl, one of --cluster, port --port",
            "                         (default http://<host>:<port>)",
            "  --factory CLASS        the factory class to use (fully qualified)",
            "  --stage N              use the factory annotated with @ServiceFactory(stage = N)",
            "                         (neither: the factory with the highest stage on the classpath)",
            "  --start-timeout T      how long start() and the first connection may take (default 30s)",
            "  --stop-timeout T       how long stop() may take on SIGTERM/SIGINT (default 30s)",
            "Durations take a unit: ms, s or m. stdout carries JSON lines only (ready, stopped); the",
            "service's own System.out goes to stderr. Exit status: 0 after a clean stop, 1 when start-up",
            "or stop() failed, 2 for a bad flag.");

    private static final List<String> KEYS = Arrays.asList("port", "host", "data-dir", "cluster", "self-url",
            "factory", "stage", "start-timeout", "stop-timeout");

    final int port;
    final String host;
    /** null: a new temporary directory. */
    final Path dataDir;
    final List<String> cluster;
    final String selfUrl;
    /** null: chosen by stage or found on the classpath. */
    final String factory;
    /** 0: not given. */
    final int stage;
    final long startTimeoutMs;
    final long stopTimeoutMs;

    private LaunchOptions(Map<String, String> v) throws LaunchException {
        if (!v.containsKey("port")) {
            throw LaunchException.badFlag("--port is required (the port the service listens on)");
        }
        port = (int) integer(v, "port", 1, 65535);
        host = v.getOrDefault("host", "127.0.0.1");
        if (host.isEmpty() || host.contains("/")) {
            throw LaunchException.badFlag("--host: expected a host name or IP address, got '" + host + "'");
        }
        dataDir = v.containsKey("data-dir") ? path(v.get("data-dir")) : null;
        selfUrl = v.containsKey("self-url") ? url("--self-url", v.get("self-url"))
                : "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        int selfPort = URI.create(selfUrl).getPort();
        if (selfPort != port) {
            throw LaunchException.badFlag("--self-url: its port " + selfPort + " is not --port " + port);
        }
        cluster = v.containsKey("cluster") ? urls(v.get("cluster")) : Collections.singletonList(selfUrl);
        if (!cluster.contains(selfUrl)) {
            throw LaunchException.badFlag("--self-url " + selfUrl + " is not in --cluster " + cluster
                    + " (write it exactly as in the list)");
        }
        factory = v.get("factory");
        if (factory != null && !factory.matches("[\\p{L}_$][\\p{L}\\p{N}_$]*(\\.[\\p{L}_$][\\p{L}\\p{N}_$]*)*")) {
            throw LaunchException.badFlag("--factory: expected a fully qualified class name, got '" + factory + "'");
        }
        stage = v.containsKey("stage") ? (int) integer(v, "stage", 1, Integer.MAX_VALUE) : 0;
        if (factory != null && stage != 0) {
            throw LaunchException.badFlag("--factory and --stage exclude each other: give the class, or the stage"
                    + " whose factory to use");
        }
        startTimeoutMs = duration(v, "start-timeout", "30s");
        stopTimeoutMs = duration(v, "stop-timeout", "30s");
    }

    /** Flags are {@code --key value} or {@code --key=value}, each at most once. */
    static LaunchOptions parse(String... args) throws LaunchException {
        Map<String, String> values = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                throw LaunchException.badFlag("unexpected argument '" + arg + "' (flags are --key value; see --help)");
            }
            int eq = arg.indexOf('=');
            String key = arg.substring(2, eq < 0 ? arg.length() : eq);
            if (!KEYS.contains(key)) {
                throw LaunchException.badFlag("unknown flag --" + key + " (see --help)");
            }
            String value;
            if (eq >= 0) {
                value = arg.substring(eq + 1);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw LaunchException.badFlag("--" + key + " needs a value");
            }
            if (values.put(key, value) != null) {
                throw LaunchException.badFlag("--" + key + " is given twice");
            }
        }
        return new LaunchOptions(values);
    }

    static boolean wantsHelp(String... args) {
        return Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h");
    }

    private static long integer(Map<String, String> v, String key, long min, long max) throws LaunchException {
        String text = v.get(key);
        long n;
        try {
            n = Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw LaunchException.badFlag("--" + key + ": expected an integer, got '" + text + "'");
        }
        if (n < min || n > max) {
            throw LaunchException.badFlag("--" + key + ": must be between " + min + " and " + max + ", got '"
                    + text + "'");
        }
        return n;
    }

    private static long duration(Map<String, String> v, String key, String defaultText) throws LaunchException {
        String text = v.getOrDefault(key, defaultText).trim().toLowerCase(Locale.ROOT);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d{1,9})(ms|s|m)").matcher(text);
        if (!m.matches()) {
            throw LaunchException.badFlag("--" + key + ": expected a duration with a unit (500ms, 30s, 2m), got '"
                    + v.get(key) + "'");
        }
        long n = Long.parseLong(m.group(1));
        long ms = m.group(2).equals("ms") ? n : m.group(2).equals("s") ? n * 1000 : n * 60_000;
        if (ms <= 0) {
            throw LaunchException.badFlag("--" + key + ": must be more than 0, got '" + v.get(key) + "'");
        }
        return ms;
    }

    private static Path path(String text) throws LaunchException {
        try {
            if (text.isEmpty()) {
                throw new InvalidPathException(text, "empty");
            }
            return Paths.get(text).toAbsolutePath().normalize();
        } catch (InvalidPathException e) {
            throw LaunchException.badFlag("--data-dir: not a path: '" + text + "' (" + e.getReason() + ")");
        }
    }

    /** A node URL as the course writes them: http://host:port, no path. */
    private static String url(String flag, String text) throws LaunchException {
        String problem;
        try {
            URI u = new URI(text);
            boolean pathless = u.getRawPath() == null || u.getRawPath().isEmpty();
            problem = !"http".equals(u.getScheme()) ? "not an http:// URL"
                    : u.getHost() == null ? "no host"
                    : u.getPort() < 1 ? "no port"
                    : !pathless || u.getRawQuery() != null || u.getRawFragment() != null ? "a path or query after the port"
                    : null;
        } catch (URISyntaxException e) {
            problem = e.getReason();
        }
        if (problem != null) {
            throw LaunchException.badFlag(flag + ": '" + text + "' is not a node URL like http://127.0.0.1:8080 ("
                    + problem + ")");
        }
        return text;
    }

    private static List<String> urls(String text) throws LaunchException {
        List<String> out = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            String u = url("--cluster", part.trim());
            if (out.contains(u)) {
                throw LaunchException.badFlag("--cluster: " + u + " is listed twice");
            }
            out.add(u);
        }
        return Collections.unmodifiableList(out);
    }
}
