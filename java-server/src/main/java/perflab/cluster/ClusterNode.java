package perflab.cluster;

import perflab.events.EventSink;
import perflab.storage.Entry;
import perflab.storage.RangeIterator;
import perflab.storage.Storage;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * This node's part of the cluster: coordinates client requests (asks the key's replicas in parallel,
 * answers after ack of them) and serves internal requests from its own storage, where every value is a
 * timestamped {@link Record}. The HTTP side (perflab.server.ClusterHandler) only parses and answers.
 */
public final class ClusterNode implements AutoCloseable {
    /** Conditional writes of one key are serialised by one of these (ReentrantLock: virtual-thread friendly). */
    private static final int STRIPES = 1024;

    private final Topology topology;
    private final Storage storage;
    private final WriteClock clock;
    private final InternalClient client;
    /** Indexed like the topology; null at this node's own index. */
    private final Peer[] peers;
    private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];
    private final LongAdder coordinated = new LongAdder();
    private final LongAdder replicasAsked = new LongAdder();
    private final LongAdder replicasAnswered = new LongAdder();
    private final LongAdder replicasFailed = new LongAdder();
    private final LongAdder gatewayTimeouts = new LongAdder();
    private final LongAdder internalServed = new LongAdder();
    private final LongAdder mismatches = new LongAdder();

    public ClusterNode(Topology topology, Storage storage, long timeoutMillis, EventSink events) {
        if (topology.self() < 0) {
            throw new IllegalArgumentException("a cluster node needs its own URL in the topology");
        }
        this.topology = topology;
        this.storage = storage;
        this.clock = new WriteClock(topology.self());
        this.client = new InternalClient(topology, timeoutMillis);
        this.peers = new Peer[topology.size()];
        for (int i = 0; i < peers.length; i++) {
            if (i != topology.self()) {
                peers[i] = new Peer(i, topology.url(i), events);
            }
        }
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ReentrantLock();
        }
    }

    public Topology topology() {
        return topology;
    }

    /**
     * A client request: the key's first {@code count.from} nodes are asked in parallel (peers over HTTP
     * first, then this node's storage on the calling thread); {@code done} gets the outcome once, on
     * whichever thread settles it.
     */
    public void coordinate(Op op, byte[] key, byte[] value, ReplicaCount count, Consumer<Outcome> done) {
        coordinated.increment();
        int[] replicas = topology.replicas(key, count.from);
        long timestamp = op == Op.GET ? 0 : clock.next();
        Coordination c = new Coordination(op, count.ack, count.from, outcome -> {
            if (outcome.status == Outcome.GATEWAY_TIMEOUT) {
                gatewayTimeouts.increment();
            }
            done.accept(outcome);
        });
        replicasAsked.add(replicas.length);
        boolean local = false;
        for (int node : replicas) {
            if (node == topology.self()) {
                local = true;
                continue;
            }
            Peer peer = peers[node];
            client.send(peer, op, key, timestamp, value).thenAccept(answer -> settle(c, peer.url, answer));
        }
        if (local) {
            settle(c, topology.url(topology.self()), local(op, key, timestamp, value));
        }
    }

    private void settle(Coordination c, String replica, ReplicaAnswer answer) {
        (answer.ok() ? replicasAnswered : replicasFailed).increment();
        c.onAnswer(replica, answer);
    }

    /** An internal request from another node: this node's own storage, never passed on. */
    public ReplicaAnswer serveInternal(Op op, byte[] key, long timestamp, byte[] value) {
        internalServed.increment();
        if (op != Op.GET) {
            clock.observe(timestamp);
        }
        return local(op, key, timestamp, value);
    }

    /** Counts an internal request refused for another cluster digest (the caller answers 421 and logs). */
    public void mismatch() {
        mismatches.increment();
    }

    /**
     * This node's replica of the key. A write is stored only when it is newer than what the node holds: an
     * older write arriving late (a slow or retried internal request) must not replace a newer one.
     */
    ReplicaAnswer local(Op op, byte[] key, long timestamp, byte[] value) {
        try {
            if (op == Op.GET) {
                byte[] stored = storage.get(key);
                return ReplicaAnswer.ok(stored == null ? null : Record.decode(stored));
            }
            Record record = op == Op.PUT ? Record.value(timestamp, value) : Record.tombstone(timestamp);
            ReentrantLock lock = stripes[(int) (ClusterHash.hash(key) & (STRIPES - 1))];
            lock.lock();
            try {
                byte[] stored = storage.get(key);
                if (stored == null || Long.compareUnsigned(Record.decode(stored).timestamp, timestamp) < 0) {
                    storage.put(key, record.encode());
                }
            } finally {
                lock.unlock();
            }
            return ReplicaAnswer.ok(null);
        } catch (IOException | RuntimeException e) {
            return ReplicaAnswer.failed(ReplicaAnswer.Failure.ERROR, "storage error: " + e.getMessage());
        }
    }

    /** This node's live entries (values decoded, tombstones hidden): /v0/entities on a cluster node. */
    public RangeIterator liveRange(byte[] from, byte[] to) throws IOException {
        RangeIterator raw = storage.range(from, to);
        return new RangeIterator() {
            private Entry next;

            @Override
            public boolean hasNext() {
                while (next == null && raw.hasNext()) {
                    Entry e = raw.next();
                    Record r = Record.decode(e.value());
                    if (r.isLive()) {
                        next = new Entry(e.key(), r.valueCopy());
                    }
                }
                return next != null;
            }

            @Override
            public Entry next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Entry e = next;
                next = null;
                return e;
            }

            @Override
            public void close() {
                raw.close();
            }
        };
    }

    /** The "cluster" leaves of /v0/stats; {@code peers} gets one map per other node, by its index. */
    public void stats(Map<String, Object> into, TreeMap<Integer, Map<String, Object>> peerStats) {
        into.put("nodes", (long) topology.size());
        into.put("self", (long) topology.self());
        into.put("coordinated", coordinated.sum());
        into.put("replicas_asked", replicasAsked.sum());
        into.put("replicas_answered", replicasAnswered.sum());
        into.put("replicas_failed", replicasFailed.sum());
        into.put("gateway_timeouts", gatewayTimeouts.sum());
        into.put("internal_served", internalServed.sum());
        into.put("mismatches", mismatches.sum());
        for (Peer p : peers) {
            if (p != null) {
                Map<String, Object> m = new HashMap<>();
                p.stats(m);
                peerStats.put(p.index, m);
            }
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
