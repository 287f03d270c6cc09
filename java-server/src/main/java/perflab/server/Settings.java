package perflab.server;

import perflab.cluster.Topology;
import perflab.spec.OptionException;
import perflab.spec.OptionKind;
import perflab.spec.OptionList;
import perflab.spec.OptionSpec;
import perflab.spec.OptionValues;
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
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * The server's effective configuration: flags over an optional properties file over defaults, every key
 * parsed by its spec in {@link OptionList}. This class only adds what no single spec can say (a host
 * must resolve, a data directory is required for some backends) and typed fields for the server.
 */
final class Settings {
    final OptionValues values;
    final String host;
    final int port;
    final Path dataDir;
    final String backend;
    final Mode mode;
    final int selectors;
    final int workers;
    final int queue;
    final QueueKind queueKind;
    final boolean events;
    final String gcEvents;
    final boolean debugEndpoints;
    /** Test aid: every /v0/entity and /v0/status request parks this long before answering. */
    final long debugDelayNanos;
    /** Test aid: every /v0/entity and /v0/status request burns this much CPU time before answering. */
    final long debugWorkNanos;
    final Path configFile;
    final StorageOptions storage;
    /** Null for a single node (no --cluster). */
    final Topology cluster;
    final long clusterTimeoutMillis;

    private Settings(OptionValues v) throws ConfigException {
        this.values = v;
        this.host = v.getString(OptionList.HOST);
        try {
            InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw ConfigException.forFlag("host", "cannot resolve '" + host + "'");
        }
        this.port = v.getInt(OptionList.PORT);
        this.dataDir = path(v, OptionList.DATA_DIR);
        this.backend = v.getString(OptionList.BACKEND);
        this.mode = Mode.valueOf(v.getString(OptionList.MODE).toUpperCase(Locale.ROOT));
        this.selectors = v.getInt(OptionList.SELECTORS);
        this.workers = v.getInt(OptionList.WORKERS);
        this.queue = v.getInt(OptionList.QUEUE);
        this.queueKind = QueueKind.valueOf(v.getString(OptionList.QUEUE_KIND).toUpperCase(Locale.ROOT));
        this.events = v.isOn(OptionList.EVENTS);
        this.gcEvents = v.getString(OptionList.GC_EVENTS);
        this.debugEndpoints = v.isOn(OptionList.DEBUG_ENDPOINTS);
        this.debugDelayNanos = v.getLong(OptionList.DEBUG_DELAY) * 1_000_000L;
        this.debugWorkNanos = v.getLong(OptionList.DEBUG_WORK_NS);
        this.configFile = path(v, OptionList.CONFIG);
        this.storage = StorageOptions.from(v);
        if (dataDir == null && !backend.equals("memory")) {
            throw ConfigException.forFlag("data-dir", "required for --backend " + backend);
        }
        this.cluster = cluster(v, port);
        this.clusterTimeoutMillis = v.getLong(OptionList.CLUSTER_TIMEOUT);
    }

    /** --cluster and --self-url: a list of distinct http://host:port URLs that contains this node's. */
    private static Topology cluster(OptionValues v, int port) throws ConfigException {
        String list = v.getString(OptionList.CLUSTER);
        String self = v.getString(OptionList.SELF_URL);
        if (list == null) {
            if (self != null) {
                throw ConfigException.forFlag("self-url", "only meaningful with --cluster");
            }
            return null;
        }
        if (self == null) {
            throw ConfigException.forFlag("self-url", "required with --cluster (this node's URL in that list)");
        }
        Topology t;
        try {
            t = Topology.parse(list, self);
        } catch (OptionException e) {
            throw ConfigException.forFlag(e.key(), e.detail());
        }
        int selfPort = java.net.URI.create(t.url(t.self())).getPort();
        if (port != selfPort) {
            // other nodes will call this node at the URL's port: a different one would be a dead replica
            throw ConfigException.forFlag("port", port + " differs from the port of --self-url " + t.url(t.self())
                    + (port == 0 ? " (a cluster node needs the fixed port the others call it at)" : ""));
        }
        return t;
    }

    private static Path path(OptionValues v, OptionSpec spec) {
        String p = v.getString(spec);
        return p == null ? null : Paths.get(p);
    }

    /** Parses {@code --key value} and {@code --key=value}; {@code --config FILE} supplies defaults. */
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
                throw ConfigException.forFlag(canonical(name), "missing value");
            }
            name = canonical(name);
            if (flags.containsKey(name)) {
                throw ConfigException.forFlag(name, "given twice");
            }
            flags.put(name, value);
        }
        Map<String, String> merged = new LinkedHashMap<>();
        if (flags.containsKey("config")) {
            merged.putAll(readProperties(Paths.get(flags.get("config"))));
        }
        merged.putAll(flags);
        try {
            return new Settings(OptionValues.parse(merged, OptionList.ALL));
        } catch (OptionException e) {
            throw ConfigException.forFlag(e.key(), e.detail());
        }
    }

    /** The option key a flag name stands for (itself, or the key of which it is the alias). */
    private static String canonical(String name) throws ConfigException {
        OptionSpec spec = OptionList.byFlag(name);
        if (spec == null) {
            throw new ConfigException("unknown flag --" + name + " (see --help)");
        }
        return spec.key;
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
            OptionSpec spec = OptionList.byFlag(key);
            if (key.equals("config") || spec == null) {
                throw ConfigException.forFlag("config", file + ": unknown key '" + key + "'");
            }
            if (m.containsKey(spec.key)) {
                throw ConfigException.forFlag("config", file + ": " + spec.key + " given twice (also as "
                        + spec.alias + ")");
            }
            m.put(spec.key, p.getProperty(key).trim());
        }
        return m;
    }

    /** The "config" event line: every option's effective value (bytes, ms), paths absolute, then the runtime. */
    String toJson() {
        Json j = new Json().beginObject().field("event", "config");
        for (Map.Entry<OptionSpec, Object> e : values.asMap().entrySet()) {
            Object value = e.getValue();
            if (e.getKey().kind == OptionKind.PATH && value != null) {
                value = Paths.get((String) value).toAbsolutePath().toString();
            }
            j.field(e.getKey().key, value);
        }
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
}
