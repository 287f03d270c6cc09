package perflab.cluster;

import perflab.spec.OptionException;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * The nodes of a cluster (the --cluster list, the same on every node) and which of them this one is.
 * Routing is rendezvous hashing: a key's nodes in descending order of {@link ClusterHash#score} (unsigned,
 * ties by URL bytes), so a smaller replica set is always a prefix of a larger one, and adding a node moves
 * only the keys the new node wins. The order of the list does not matter; its digest (sent with every
 * internal request) is taken over the sorted URLs.
 */
public final class Topology {
    /** Node indexes go into the low byte of write timestamps (see {@link WriteClock}). */
    public static final int MAX_NODES = 256;

    private final List<String> urls;
    private final int self;
    private final String digest;
    private final long[] seeds;
    private final byte[][] urlBytes;

    private Topology(List<String> urls, int self) {
        this.urls = Collections.unmodifiableList(new ArrayList<>(urls));
        this.self = self;
        this.seeds = new long[urls.size()];
        this.urlBytes = new byte[urls.size()][];
        for (int i = 0; i < urls.size(); i++) {
            seeds[i] = ClusterHash.nodeSeed(urls.get(i));
            urlBytes[i] = urls.get(i).getBytes(StandardCharsets.UTF_8);
        }
        this.digest = digestOf(urls);
    }

    /**
     * @param clusterList comma-separated URLs (--cluster)
     * @param selfUrl     this node's URL (--self-url), one of them; null only for routing-only uses (tools)
     * @throws OptionException naming the option ("cluster" or "self-url") and the problem
     */
    public static Topology parse(String clusterList, String selfUrl) {
        List<String> urls = new ArrayList<>();
        for (String part : clusterList.split(",", -1)) {
            String url;
            try {
                url = normalise(part);
            } catch (IllegalArgumentException e) {
                throw new OptionException("cluster", e.getMessage());
            }
            if (urls.contains(url)) {
                throw new OptionException("cluster", "duplicate URL " + url);
            }
            urls.add(url);
        }
        if (urls.size() > MAX_NODES) {
            throw new OptionException("cluster", "at most " + MAX_NODES + " nodes, got " + urls.size());
        }
        int self = -1;
        if (selfUrl != null) {
            String me;
            try {
                me = normalise(selfUrl);
            } catch (IllegalArgumentException e) {
                throw new OptionException("self-url", e.getMessage());
            }
            self = urls.indexOf(me);
            if (self < 0) {
                throw new OptionException("self-url", me + " is not in --cluster (" + String.join(",", urls) + ")");
            }
        }
        return new Topology(urls, self);
    }

    /**
     * The canonical form the hash is taken over: {@code http://host:port}, scheme and host in lower case,
     * explicit port, no trailing slash. Anything else (a path, a query, user info, another scheme) is an error.
     */
    public static String normalise(String raw) {
        String s = raw.trim();
        if (s.isEmpty()) {
            throw new IllegalArgumentException("empty URL in the list (expected http://host:port,http://host:port,...)");
        }
        URI uri;
        try {
            uri = new URI(s);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("'" + s + "' is not a URL (expected http://host:port)");
        }
        String path = uri.getRawPath();
        if (!"http".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 0
                || uri.getRawUserInfo() != null || uri.getRawQuery() != null || uri.getRawFragment() != null
                || path != null && !path.isEmpty() && !path.equals("/")) {
            throw new IllegalArgumentException("'" + s + "' is not of the form http://host:port");
        }
        if (uri.getPort() == 0 || uri.getPort() > 65535) {
            throw new IllegalArgumentException("'" + s + "': port must be between 1 and 65535");
        }
        return "http://" + uri.getHost().toLowerCase(Locale.ROOT) + ":" + uri.getPort();
    }

    /** fmix64(fnv1a64(the sorted normalised URLs joined by '\n')) as 16 hex digits. */
    static String digestOf(List<String> urls) {
        List<String> sorted = new ArrayList<>(urls);
        Collections.sort(sorted);
        return ClusterHash.hex(ClusterHash.hash(String.join("\n", sorted).getBytes(StandardCharsets.UTF_8)));
    }

    public int size() {
        return urls.size();
    }

    public List<String> urls() {
        return urls;
    }

    public String url(int node) {
        return urls.get(node);
    }

    /** This node's index in the --cluster list; -1 for a routing-only topology. */
    public int self() {
        return self;
    }

    public String digest() {
        return digest;
    }

    /** Every node, in the key's rendezvous order (best first). */
    public int[] order(byte[] key) {
        return replicas(key, urls.size());
    }

    /** The first {@code from} nodes of the key's rendezvous order: its replica set. */
    public int[] replicas(byte[] key, int from) {
        int n = urls.size();
        long[] scores = new long[n];
        Integer[] idx = new Integer[n];
        for (int i = 0; i < n; i++) {
            scores[i] = ClusterHash.score(seeds[i], key);
            idx[i] = i;
        }
        Arrays.sort(idx, (a, b) -> {
            int c = Long.compareUnsigned(scores[b], scores[a]);
            return c != 0 ? c : Arrays.compareUnsigned(urlBytes[a], urlBytes[b]);
        });
        int[] out = new int[from];
        for (int i = 0; i < from; i++) {
            out[i] = idx[i];
        }
        return out;
    }

    /** The key's first node (its owner when from = 1); no allocation beyond the scores. */
    public int owner(byte[] key) {
        int best = 0;
        long bestScore = ClusterHash.score(seeds[0], key);
        for (int i = 1; i < urls.size(); i++) {
            long s = ClusterHash.score(seeds[i], key);
            int c = Long.compareUnsigned(s, bestScore);
            if (c > 0 || c == 0 && Arrays.compareUnsigned(urlBytes[i], urlBytes[best]) < 0) {
                best = i;
                bestScore = s;
            }
        }
        return best;
    }

    /** The default ack for a replica set of {@code from}: a majority. */
    public static int quorum(int from) {
        return from / 2 + 1;
    }
}
