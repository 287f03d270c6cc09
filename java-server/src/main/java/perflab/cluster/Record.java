package perflab.cluster;

/**
 * What a cluster node stores for a key: a timestamped value or a timestamped tombstone. Encoded as the
 * storage value (cluster mode only; a single node stores plain values): one kind byte (0xC1 value,
 * 0xC0 tombstone), the timestamp as 8 bytes big-endian, then the value bytes. Every backend stores it
 * unchanged; a delete is a write of a tombstone, so a node that missed it can be outvoted by its timestamp.
 * The value is kept as a view into the stored bytes (no copy on the read path).
 */
public final class Record {
    static final byte LIVE = (byte) 0xC1;
    static final byte TOMBSTONE = (byte) 0xC0;
    static final int HEADER = 9;

    public final long timestamp;
    private final byte[] bytes;
    private final int offset;
    private final boolean live;

    private Record(long timestamp, boolean live, byte[] bytes, int offset) {
        this.timestamp = timestamp;
        this.live = live;
        this.bytes = bytes;
        this.offset = offset;
    }

    public static Record value(long timestamp, byte[] value) {
        return new Record(timestamp, true, value, 0);
    }

    public static Record tombstone(long timestamp) {
        return new Record(timestamp, false, null, 0);
    }

    /** The stored form. */
    public byte[] encode() {
        int length = live ? valueLength() : 0;
        byte[] out = new byte[HEADER + length];
        out[0] = live ? LIVE : TOMBSTONE;
        for (int i = 0; i < 8; i++) {
            out[1 + i] = (byte) (timestamp >>> (56 - 8 * i));
        }
        if (length > 0) {
            System.arraycopy(bytes, offset, out, HEADER, length);
        }
        return out;
    }

    /**
     * A stored value read back.
     *
     * @throws IllegalStateException when the bytes are not in this encoding (a data directory written by a
     *                               single node, opened by a cluster node)
     */
    public static Record decode(byte[] stored) {
        if (stored.length < HEADER || stored[0] != LIVE && stored[0] != TOMBSTONE
                || stored[0] == TOMBSTONE && stored.length != HEADER) {
            throw new IllegalStateException("a stored value is not in the cluster encoding (was this data"
                    + " directory written by a server without --cluster?)");
        }
        long ts = 0;
        for (int i = 1; i <= 8; i++) {
            ts = ts << 8 | (stored[i] & 0xff);
        }
        return new Record(ts, stored[0] == LIVE, stored, HEADER);
    }

    public boolean isLive() {
        return live;
    }

    /** The value's bytes live in {@link #valueArray()} from {@link #valueOffset()}; null for a tombstone. */
    public byte[] valueArray() {
        return bytes;
    }

    public int valueOffset() {
        return offset;
    }

    public int valueLength() {
        return live ? bytes.length - offset : 0;
    }

    /** A copy of the value; null for a tombstone. */
    public byte[] valueCopy() {
        if (!live) {
            return null;
        }
        byte[] v = new byte[valueLength()];
        System.arraycopy(bytes, offset, v, 0, v.length);
        return v;
    }

    /** The newer of two records (either may be null = never written); timestamps compare unsigned. */
    public static Record newest(Record a, Record b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return Long.compareUnsigned(b.timestamp, a.timestamp) > 0 ? b : a;
    }

    @Override
    public String toString() {
        return (live ? "value(" + valueLength() + " bytes" : "tombstone(") + " @" + Long.toUnsignedString(timestamp)
                + ")";
    }
}
