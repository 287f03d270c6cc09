package perflab.server;

import perflab.storage.InvalidOptionException;
import perflab.storage.StorageFactory;
import perflab.storage.StorageOptions;
import perflab.util.Json;

import java.io.IOException;
import java.io.Reader;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/** The server's effective configuration: flags over an optional properties file over defaults. */
final class Settings {
    static final List<String> SERVER_FLAGS = Collections.unmodifiableList(Arrays.asList(
            "host", "port", "data-dir", "backend", "mode", "selectors", "workers", "queue", "queue-kind", "config",
            "debug-delay"));

    final String host;
    final int port;
    final Path dataDir;
    final String backend;
    final Mode mode;
    final int selectors;
    final int workers;
    final int queue;
    final QueueKind queueKind;
    /** Test aid: every /v0/entity and /v0/status request parks this long before answering. */
    final long debugDelayNanos;
    final Path configFile;
    final Map<String, String> storageRaw;
    final StorageOptions storage;

    private Settings(Map<String, String> raw, Path configFile) throws ConfigException {
        int cpus = Runtime.getRuntime().availableProcessors();
        this.configFile = configFile;
        this.host = raw.getOrDefault("host", "127.0.0.1");
        try {
            InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw ConfigException.forFlag("host", "cannot resolve '" + host + "'");
        }
        this.port = intFlag(raw, "port", 8080, 0, 65535);
        String dir = raw.get("data-dir");
        this.dataDir = dir == null || dir.isEmpty() ? null : Paths.get(dir);
        this.backend = raw.getOrDefault("backend", "lsm");
        if (!StorageFactory.BACKENDS.contains(backend)) {
            throw ConfigException.forFlag("backend", "expected lsm, memory or rocksdb, got '" + backend + "'");
        }
        this.mode = enumFlag(raw, "mode", Mode.class, Mode.SYNC);
        this.selectors = intFlag(raw, "selectors", cpus, 1, 1024);
        this.workers = intFlag(raw, "workers", cpus, 1, 65536);
        this.queue = intFlag(raw, "queue", 1024, 1, 1 << 24);
        this.queueKind = enumFlag(raw, "queue-kind", QueueKind.class, QueueKind.ARRAY);
        this.debugDelayNanos = durationFlag(raw, "debug-delay") * 1_000_000L;
        Map<String, String> storageKeys = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : raw.entrySet()) {
            if (StorageOptions.KEYS.contains(e.getKey())) {
                storageKeys.put(e.getKey(), e.getValue());
            }
        }
        this.storageRaw = Collections.unmodifiableMap(storageKeys);
        try {
            this.storage = StorageOptions.parse(storageKeys, null);
        } catch (InvalidOptionException e) {
            throw ConfigException.forFlag(e.key(), e.detail());
        }
        if (dataDir == null && !backend.equals("memory")) {
            throw ConfigException.forFlag("data-dir", "required for --backend " + backend);
        }
    }

    /** Parses {@code --name value} and {@code --name=value}; {@code --config FILE} supplies defaults. */
    static Settings parse(String[] args) throws ConfigException {
        Map<String, String> flags = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--") || arg.length() == 2) {
                throw new ConfigException("unexpected argument '" + arg + "' (flags look like --name value)");
            }
            String name = arg.substring(2);
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                value = args[++i];
            } else {
                checkKnown(name, "--" + name);
                throw ConfigException.forFlag(name, "missing value");
            }
            checkKnown(name, "--" + name);
            if (flags.containsKey(name)) {
                throw ConfigException.forFlag(name, "given twice");
            }
            flags.put(name, value);
        }
        Map<String, String> merged = new LinkedHashMap<>();
        Path configFile = null;
        if (flags.containsKey("config")) {
            configFile = Paths.get(flags.get("config"));
            merged.putAll(readProperties(configFile));
        }
        merged.putAll(flags);
        merged.remove("config");
        return new Settings(merged, configFile);
    }

    private static void checkKnown(String name, String shown) throws ConfigException {
        if (!SERVER_FLAGS.contains(name) && !StorageOptions.KEYS.contains(name)) {
            throw new ConfigException("unknown flag " + shown + " (see --help)");
        }
    }

    private static Map<String, String> readProperties(Path file) throws ConfigException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (IOException e) {
            throw ConfigException.forFlag("config", "cannot read " + file + ": " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : " " + e.getMessage()));
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (String key : p.stringPropertyNames()) {
            if (key.equals("config") || (!SERVER_FLAGS.contains(key) && !StorageOptions.KEYS.contains(key))) {
                throw ConfigException.forFlag("config", file + ": unknown key '" + key + "'");
            }
            m.put(key, p.getProperty(key).trim());
        }
        return m;
    }

    private static int intFlag(Map<String, String> raw, String name, int def, int min, int max)
            throws ConfigException {
        String v = raw.get(name);
        if (v == null) {
            return def;
        }
        int n;
        try {
            n = Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw ConfigException.forFlag(name, "expected an integer, got '" + v + "'");
        }
        if (n < min) {
            throw ConfigException.forFlag(name, (min == 1 ? "must be > 0" : "must be >= " + min) + ", got " + n);
        }
        if (n > max) {
            throw ConfigException.forFlag(name, "must be <= " + max + ", got " + n);
        }
        return n;
    }

    private static long durationFlag(Map<String, String> raw, String name) throws ConfigException {
        String v = raw.get(name);
        if (v == null) {
            return 0;
        }
        long ms;
        try {
            ms = perflab.util.Units.parseMillis(v);
        } catch (IllegalArgumentException e) {
            throw ConfigException.forFlag(name, e.getMessage());
        }
        if (ms < 0 || ms > 60_000) {
            throw ConfigException.forFlag(name, "must be between 0ms and 60s, got " + v);
        }
        return ms;
    }

    private static <E extends Enum<E>> E enumFlag(Map<String, String> raw, String name, Class<E> type, E def)
            throws ConfigException {
        String v = raw.get(name);
        if (v == null) {
            return def;
        }
        try {
            return Enum.valueOf(type, v.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            StringBuilder allowed = new StringBuilder();
            for (E c : type.getEnumConstants()) {
                allowed.append(allowed.length() == 0 ? "" : ", ").append(c.name().toLowerCase(Locale.ROOT));
            }
            throw ConfigException.forFlag(name, "expected one of " + allowed + ", got '" + v + "'");
        }
    }

    /** The "config" event line. */
    String toJson() {
        Json j = new Json().beginObject()
                .field("event", "config")
                .field("host", host)
                .field("port", port)
                .field("data-dir", dataDir == null ? null : dataDir.toAbsolutePath().toString())
                .field("backend", backend)
                .field("mode", mode.label())
                .field("selectors", selectors)
                .field("workers", workers)
                .field("queue", queue)
                .field("queue-kind", queueKind.label())
                .field("debug-delay", debugDelayNanos / 1_000_000);
        for (Map.Entry<String, Object> e : storage.describe().entrySet()) {
            j.field(e.getKey(), e.getValue());
        }
        j.field("config", configFile == null ? null : configFile.toAbsolutePath().toString());
        j.field("java_version", System.getProperty("java.version"));
        // one-nio falls back to java.nio when its bundled native library cannot load (it needs glibc 2.38)
        j.field("one_nio_native", oneNioNative());
        j.field("cpus", Runtime.getRuntime().availableProcessors());
        j.field("heap_max", Runtime.getRuntime().maxMemory());
        return j.endObject().toString();
    }

    private static boolean oneNioNative() {
        try {
            return one.nio.os.NativeLibrary.IS_SUPPORTED;
        } catch (Throwable e) {
            return false;
        }
    }

    static String usage() {
        return String.join("\n",
                "usage: java -cp 'lib/*' perflab.server.Main [--flag value]...",
                "  --host ADDR            bind address (127.0.0.1)",
                "  --port N               port, 0 picks a free one (8080)",
                "  --data-dir DIR         storage directory, required for lsm/rocksdb",
                "  --backend NAME         lsm | memory | rocksdb (lsm)",
                "  --mode NAME            sync | async | virtual (sync)",
                "  --selectors N          one-nio selector threads (CPU count)",
                "  --workers N            async executor threads (CPU count)",
                "  --queue N              async queue capacity / virtual in-flight limit (1024)",
                "  --queue-kind NAME      array | linked | lifo (array)",
                "  --memtable-size SIZE   memtable byte threshold (4m)",
                "  --max-immutable N      immutable memtables before writes stall (2)",
                "  --flush-threads N      background flush threads (1)",
                "  --compaction-threads N background compaction threads, 0 disables compaction (1)",
                "  --wal POLICY           none | batch | always (batch)",
                "  --wal-batch-delay DUR  fsync interval for batch (5ms)",
                "  --table-size SIZE      SSTable file size target (64m)",
                "  --block-size SIZE      SSTable data block size (4k)",
                "  --bloom-bits N         bloom filter bits per key, 0 disables (10)",
                "  --background-nice N    lsm: nice value of flush/compaction threads, 0 = unchanged (10)",
                "  --debug-delay DUR      park each /v0/entity and /v0/status request this long (0 = off)",
                "  --config FILE          .properties with the same keys; flags override it",
                "");
    }
}
