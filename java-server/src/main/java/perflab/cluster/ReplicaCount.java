package perflab.cluster;

/**
 * How many replicas a request asks ({@code from}: the first {@code from} nodes of the key's rendezvous
 * order) and how many answers it needs ({@code ack}): {@code ?ack=2&from=3} or the older
 * {@code ?replicas=2/3}. Defaults: from = cluster size, ack = a majority of from.
 */
public final class ReplicaCount {
    public final int ack;
    public final int from;

    private ReplicaCount(int ack, int from) {
        this.ack = ack;
        this.from = from;
    }

    /**
     * @param ack, from, replicas the raw query parameters, null when absent
     * @throws IllegalArgumentException with the text of the 400 answer
     */
    public static ReplicaCount parse(String ack, String from, String replicas, int clusterSize) {
        Integer a = null;
        Integer f = null;
        if (replicas != null) {
            if (ack != null || from != null) {
                throw new IllegalArgumentException("give either replicas=ACK/FROM or ack=ACK&from=FROM, not both");
            }
            int slash = replicas.indexOf('/');
            if (slash < 0) {
                throw new IllegalArgumentException("replicas: expected ACK/FROM like 2/3, got '" + replicas + "'");
            }
            a = integer("replicas (ack)", replicas.substring(0, slash));
            f = integer("replicas (from)", replicas.substring(slash + 1));
        } else {
            if (ack != null) {
                a = integer("ack", ack);
            }
            if (from != null) {
                f = integer("from", from);
            }
        }
        int fromValue = f != null ? f : clusterSize;
        if (fromValue < 1 || fromValue > clusterSize) {
            throw new IllegalArgumentException("from must be between 1 and the cluster size " + clusterSize + ", got "
                    + fromValue);
        }
        int ackValue = a != null ? a : Topology.quorum(fromValue);
        if (ackValue < 1) {
            throw new IllegalArgumentException("ack must be at least 1, got " + ackValue);
        }
        if (ackValue > fromValue) {
            throw new IllegalArgumentException("ack must not exceed from: ack=" + ackValue + ", from=" + fromValue);
        }
        return new ReplicaCount(ackValue, fromValue);
    }

    private static int integer(String name, String text) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": expected an integer, got '" + text + "'");
        }
    }

    @Override
    public String toString() {
        return ack + "/" + from;
    }
}
