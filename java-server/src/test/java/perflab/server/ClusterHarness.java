package perflab.server;

import perflab.cluster.Record;
import perflab.cluster.Topology;
import perflab.events.EventWriter;
import perflab.storage.Storage;
import perflab.storage.StorageFactory;
import perflab.testing.FreePorts;
import perflab.testing.MiniJson;
import perflab.testing.RawHttp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Several cluster nodes in this JVM, each a RunningServer on its own port with its own storage and its
 * own captured event stream. A node can be stopped and started again on the same port and data
 * directory (lsm), which is how the "missed write" invariants are exercised in-process.
 */
final class ClusterHarness implements AutoCloseable {
    private final int[] ports;
    private final String list;
    /** Null: memory backend (a restarted node comes back empty). */
    private final Path root;
    private final String[] flags;
    private final RunningServer[] nodes;
    private final ByteArrayOutputStream[] eventOut;

    private ClusterHarness(int n, Path root, String[] flags) throws IOException {
        this.ports = FreePorts.pick(n);
        this.list = FreePorts.clusterList(ports);
        this.root = root;
        this.flags = flags;
        this.nodes = new RunningServer[n];
        this.eventOut = new ByteArrayOutputStream[n];
        for (int i = 0; i < n; i++) {
            eventOut[i] = new ByteArrayOutputStream();
        }
    }

    /** @param root data directories root (lsm backend), null for the memory backend */
    static ClusterHarness start(int n, Path root, String... flags) throws Exception {
        ClusterHarness h = new ClusterHarness(n, root, flags);
        try {
            for (int i = 0; i < n; i++) {
                h.start(i);
            }
        } catch (Exception | Error e) {
            h.close();
            throw e;
        }
        return h;
    }

    int size() {
        return nodes.length;
    }

    String url(int i) {
        return "http://127.0.0.1:" + ports[i];
    }

    String list() {
        return list;
    }

    Topology topology() {
        return Topology.parse(list, null);
    }

    /** Starts node i (again): same port, same data directory. */
    void start(int i) throws Exception {
        startWith(i);
    }

    /** Starts node i (again) with flags of its own after the harness's. */
    void startWith(int i, String... own) throws Exception {
        List<String> args = new ArrayList<>(Arrays.asList("--port", Integer.toString(ports[i]), "--cluster", list,
                "--self-url", url(i), "--cluster-timeout", "10s", "--selectors", "2"));
        if (root != null) {
            args.addAll(Arrays.asList("--backend", "lsm", "--data-dir", root.resolve("node" + i).toString()));
        } else {
            args.addAll(Arrays.asList("--backend", "memory"));
        }
        args.addAll(Arrays.asList(flags));
        args.addAll(Arrays.asList(own));
        Settings s = Settings.parse(args.toArray(new String[0]));
        long deadline = System.currentTimeMillis() + 15_000;
        while (true) {
            Storage storage = StorageFactory.open(s.backend, s.dataDir, s.storage);
            EventWriter events = new EventWriter(new PrintStream(eventOut[i], true, "UTF-8"));
            try {
                nodes[i] = RunningServer.start(s, storage, events);
                return;
            } catch (BindException e) { // the port of a node just stopped may linger briefly
                storage.close();
                events.close();
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    void stop(int i) {
        if (nodes[i] != null) {
            nodes[i].stop();
            nodes[i] = null;
        }
    }

    RawHttp http(int i) throws IOException {
        return new RawHttp(ports[i]);
    }

    Storage storage(int i) {
        return nodes[i].storage();
    }

    /** What node i holds for the key in its own storage (null: nothing); the node must be running. */
    Record local(int i, String key) throws IOException {
        byte[] stored = nodes[i].storage().get(key.getBytes(StandardCharsets.UTF_8));
        return stored == null ? null : Record.decode(stored);
    }

    /** The nodes whose storage holds a record (value or tombstone) for the key. */
    List<Integer> holders(String key) throws IOException {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < nodes.length; i++) {
            if (local(i, key) != null) {
                out.add(i);
            }
        }
        return out;
    }

    /**
     * The holders of a key once they are {@code expected} (within 30 s): a write is answered after ack
     * replicas, the others' copies may still be on their way.
     */
    List<Integer> awaitHolders(String key, List<Integer> expected) throws Exception {
        long deadline = System.currentTimeMillis() + 30_000;
        List<Integer> found = holders(key);
        while (!found.equals(expected) && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
            found = holders(key);
        }
        return found;
    }

    Map<String, Object> stats(int i) throws IOException {
        try (RawHttp http = http(i)) {
            return MiniJson.object(http.call("GET", "/v0/stats").text());
        }
    }

    /** Node i's timed events of one kind so far (the writer delivers five times a second). */
    List<Map<String, Object>> events(int i, String kind) {
        List<Map<String, Object>> out = new ArrayList<>();
        String text = new String(eventOut[i].toByteArray(), StandardCharsets.UTF_8);
        for (String line : text.split("\n")) {
            if (!line.isEmpty()) {
                Map<String, Object> e = MiniJson.object(line);
                if (kind.equals(e.get("event"))) {
                    out.add(e);
                }
            }
        }
        return out;
    }

    /** Waits (up to 30 s) until node i has written at least {@code count} events of this kind. */
    List<Map<String, Object>> awaitEvents(int i, String kind, int count) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 30_000;
        List<Map<String, Object>> found = events(i, kind);
        while (found.size() < count && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
            found = events(i, kind);
        }
        if (found.size() < count) {
            throw new AssertionError("node " + i + " wrote " + found.size() + " '" + kind + "' events, expected "
                    + count + ": " + new String(eventOut[i].toByteArray(), StandardCharsets.UTF_8));
        }
        return found;
    }

    @Override
    public void close() {
        for (int i = 0; i < nodes.length; i++) {
            stop(i);
        }
    }
}
