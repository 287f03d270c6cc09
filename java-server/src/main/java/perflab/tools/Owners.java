package perflab.tools;

import perflab.cluster.Topology;
import perflab.spec.OptionException;
import perflab.util.Json;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The cluster's key routing from outside a server, so the lab (or a student) can compute keys per node
 * without reimplementing the hash: which nodes hold a key (its first {@code from} nodes in rendezvous
 * order, owner first), or how many of the keys prefix0..prefix(N-1) each node holds.
 *
 * <pre>
 * java -cp 'lib/*' perflab.tools.Owners --cluster URL,URL,... [--from N] &lt; keys.txt      # key TAB url,url...
 * java -cp 'lib/*' perflab.tools.Owners --cluster URL,URL,... [--from N] --keys N [--key-prefix key]  # JSON counts
 * </pre>
 */
public final class Owners {
    private Owners() {
    }

    /** The key's replica set for {@code from} (owner first), as URLs in the cluster's normalised form. */
    public static List<String> replicas(String cluster, byte[] key, int from) {
        Topology t = topology(cluster);
        checkFrom(from, t);
        return replicas(t, key, from);
    }

    private static List<String> replicas(Topology t, byte[] key, int from) {
        List<String> out = new ArrayList<>();
        for (int node : t.replicas(key, from)) {
            out.add(t.url(node));
        }
        return out;
    }

    /**
     * JSON: {"cluster": [urls], "from": F, "keys": N, "key_prefix": P, "nodes": {"url": copies, ...}}, where
     * copies counts the keys among prefix0..prefix(N-1) (Prefill's and the workload scripts' keys) whose
     * replica set contains the node.
     */
    public static String count(String cluster, int from, long keys, String keyPrefix) {
        Topology t = topology(cluster);
        checkFrom(from, t);
        long[] copies = new long[t.size()];
        for (long i = 0; i < keys; i++) {
            byte[] key = (keyPrefix + i).getBytes(StandardCharsets.UTF_8);
            if (from == 1) {
                copies[t.owner(key)]++;
            } else {
                for (int node : t.replicas(key, from)) {
                    copies[node]++;
                }
            }
        }
        Json j = new Json().beginObject().key("cluster").beginArray();
        for (String u : t.urls()) {
            j.value(u);
        }
        j.endArray().field("from", from).field("keys", keys).field("key_prefix", keyPrefix).key("nodes").beginObject();
        for (int i = 0; i < t.size(); i++) {
            j.field(t.url(i), copies[i]);
        }
        return j.endObject().endObject().toString();
    }

    private static Topology topology(String cluster) {
        try {
            return Topology.parse(cluster, null);
        } catch (OptionException e) {
            throw new IllegalArgumentException("--" + e.getMessage(), e);
        }
    }

    private static void checkFrom(int from, Topology t) {
        if (from < 1 || from > t.size()) {
            throw new IllegalArgumentException("--from: must be between 1 and the cluster size " + t.size() + ", got "
                    + from);
        }
    }

    public static void main(String[] args) throws IOException {
        Map<String, String> flags = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.err.println("usage: perflab.tools.Owners --cluster URL,URL,... [--from N (default 1)]"
                        + " [--keys N [--key-prefix key]]\n  without --keys: reads keys from stdin, one per line,"
                        + " and prints key<TAB>url,url... (owner first)\n  with --keys: prints how many of"
                        + " key-prefix0..N-1 each node holds, as JSON");
                System.exit(0);
            }
            int eq = a.indexOf('=');
            if (!a.startsWith("--") || eq < 0 && i + 1 >= args.length) {
                fail("expected --flag value, got '" + a + "'");
            }
            String name = eq > 0 ? a.substring(2, eq) : a.substring(2);
            if (!name.equals("cluster") && !name.equals("from") && !name.equals("keys") && !name.equals("key-prefix")) {
                fail("unknown flag --" + name + " (see --help)");
            }
            flags.put(name, eq > 0 ? a.substring(eq + 1) : args[++i]);
        }
        String cluster = flags.get("cluster");
        if (cluster == null) {
            fail("--cluster: required");
        }
        try {
            int from = Integer.parseInt(flags.getOrDefault("from", "1"));
            PrintStream out = new PrintStream(System.out, false, "UTF-8");
            if (flags.containsKey("keys")) {
                out.println(count(cluster, from, Long.parseLong(flags.get("keys")), flags.getOrDefault("key-prefix",
                        "key")));
            } else {
                Topology t = topology(cluster);
                checkFrom(from, t);
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                String line;
                while ((line = in.readLine()) != null) {
                    out.println(line + "\t" + String.join(",", replicas(t, line.getBytes(StandardCharsets.UTF_8),
                            from)));
                }
            }
            out.flush();
        } catch (NumberFormatException e) {
            fail("--from and --keys take integers: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            fail(e.getMessage());
        }
    }

    private static void fail(String message) {
        System.err.println("error: " + message);
        System.exit(2);
    }
}
