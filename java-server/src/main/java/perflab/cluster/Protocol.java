package perflab.cluster;

/**
 * The internal protocol between nodes (docs/contracts/cluster.md section 7): the same /v0/entity requests a
 * client sends, marked by headers. A node serves a marked request from its own storage and never passes
 * it on, so a request crosses at most one hop and routing loops cannot happen.
 */
public final class Protocol {
    /** Marks an internal request; the value is the sender's URL (for logs). */
    public static final String INTERNAL = "X-Perflab-Internal";
    /** The sender's cluster digest on a request; the receiver's own on its answer (checked by both). */
    public static final String CLUSTER = "X-Perflab-Cluster";
    /**
     * Internal PUT/DELETE: the write's timestamp (unsigned decimal). Internal GET answer: the timestamp of
     * the record held (200: a value; 404: a tombstone); a 404 without it means never written.
     */
    public static final String TIMESTAMP = "X-Perflab-Timestamp";
    /** The status a node answers an internal request from a node with another cluster list. */
    public static final int MISDIRECTED = 421;

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private Protocol() {
    }

    /** A key as an id query value: unreserved characters as they are, every other byte %XX. */
    public static String encodeKey(byte[] key) {
        StringBuilder sb = new StringBuilder(key.length + 8);
        for (byte b : key) {
            int c = b & 0xff;
            if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
                    || c == '_' || c == '~') {
                sb.append((char) c);
            } else {
                sb.append('%').append(HEX[c >>> 4]).append(HEX[c & 15]);
            }
        }
        return sb.toString();
    }
}
