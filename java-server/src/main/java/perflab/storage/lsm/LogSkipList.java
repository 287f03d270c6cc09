package perflab.storage.lsm;

import perflab.util.Bytes;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The memtable's sorted index: a lock-free skip list whose nodes live in a few int[] chunks and point
 * at records in the memory-mapped write-ahead log, where the key and value bytes already are. A write
 * therefore costs no per-entry objects, and the garbage collector sees a handful of arrays however many
 * entries there are (an on-heap skip list of 4 MB of entries was copied by every young collection).
 * <p>
 * Nodes are never removed. Each write adds a node ordered by (key ascending, log position descending),
 * so the first node of a key is its newest version, as in LevelDB's memtable; concurrent inserts link
 * level by level with compare-and-set, bottom level first (as RocksDB's InlineSkipList does).
 * Node layout (ints): keyPos | keyLength | valueLength (-1 = tombstone) | height | prefix (2 ints: the
 * key's first 8 bytes) | next[height]. Most comparisons end on the prefix, without touching the log:
 * the descent's cache misses are then in the node chunks only. Node index 0 means null; the head node
 * has every level.
 */
final class LogSkipList {
    static final int MAX_HEIGHT = 12; // branching 4: 4^12 = 16M entries before paths lengthen
    private static final int CHUNK_BITS = 16;
    private static final int CHUNK = 1 << CHUNK_BITS; // ints per chunk (256 KB)
    private static final int MAX_CHUNKS = 1 << (31 - CHUNK_BITS);
    private static final int NODE_HEADER = 6;
    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);

    private final ByteBuffer log;
    /**
     * Fixed size so it never has to be replaced: a chunk slot is written (under the lock) before any node
     * in it is linked, and readers reach nodes only through acquire reads of links, so plain reads of the
     * slots see the chunk.
     */
    private final int[][] chunks = new int[MAX_CHUNKS][];
    private final AtomicInteger top = new AtomicInteger(1);
    private final AtomicInteger count = new AtomicInteger();
    private final int head;

    LogSkipList(ByteBuffer log) {
        this.log = log;
        this.head = allocate(MAX_HEIGHT);
        int[] c = chunk(head);
        int o = head & (CHUNK - 1);
        c[o + 1] = 0;
        c[o + 2] = 0;
        c[o + 3] = MAX_HEIGHT;
    }

    /** Entries (versions included). */
    int size() {
        return count.get();
    }

    boolean isEmpty() {
        return count.get() == 0;
    }

    /** Heap used by the node chunks. */
    long heapBytes() {
        long n = 0;
        for (int[] chunk : chunks) {
            if (chunk == null) {
                break;
            }
            n += 4L * chunk.length;
        }
        return n;
    }

    // ------------------------------------------------------------ nodes

    private int[] chunk(int node) {
        return chunks[node >>> CHUNK_BITS];
    }

    private int field(int node, int i) {
        return chunks[node >>> CHUNK_BITS][(node & (CHUNK - 1)) + i];
    }

    int keyPos(int node) {
        return field(node, 0);
    }

    int keyLength(int node) {
        return field(node, 1);
    }

    /** -1 for a tombstone. */
    int valueLength(int node) {
        return field(node, 2);
    }

    int next(int node, int level) {
        int[] c = chunks[node >>> CHUNK_BITS];
        return (int) INTS.getAcquire(c, (node & (CHUNK - 1)) + NODE_HEADER + level);
    }

    private boolean casNext(int node, int level, int expect, int update) {
        int[] c = chunks[node >>> CHUNK_BITS];
        return INTS.compareAndSet(c, (node & (CHUNK - 1)) + NODE_HEADER + level, expect, update);
    }

    /** Bump allocation; a node never straddles two chunks. */
    private int allocate(int height) {
        int size = NODE_HEADER + height;
        while (true) {
            int start = top.get();
            int end = start + size;
            int startChunk = start >>> CHUNK_BITS;
            if ((end - 1) >>> CHUNK_BITS != startChunk) {
                int next = (startChunk + 1) << CHUNK_BITS; // skip the chunk's tail
                top.compareAndSet(start, next);
                continue;
            }
            if (top.compareAndSet(start, end)) {
                ensureChunk(startChunk);
                return start;
            }
        }
    }

    private void ensureChunk(int index) {
        if (index >= MAX_CHUNKS) {
            throw new IllegalStateException("memtable index full");
        }
        synchronized (this) {
            if (chunks[index] == null) {
                chunks[index] = new int[CHUNK];
            }
        }
    }

    private static int randomHeight() {
        int r = ThreadLocalRandom.current().nextInt() | (1 << (2 * (MAX_HEIGHT - 1)));
        return 1 + Integer.numberOfTrailingZeros(r) / 2;
    }

    // ------------------------------------------------------------ ordering

    /** compare(key, node's key): <0, 0, >0 without copying the node's key out of the log. */
    int compareKey(byte[] key, int node) {
        return compareKey(key, TableFormat.prefix(key), node);
    }

    /** As above with the key's prefix computed once by the caller. */
    private int compareKey(byte[] key, long prefix, int node) {
        int[] c = chunks[node >>> CHUNK_BITS];
        int o = node & (CHUNK - 1);
        long nodePrefix = ((long) c[o + 4] << 32) | (c[o + 5] & 0xffffffffL);
        int r = Long.compareUnsigned(prefix, nodePrefix);
        if (r != 0) {
            return r;
        }
        int nodeLength = c[o + 1];
        if (key.length <= 8 && nodeLength <= 8) {
            return key.length - nodeLength; // equal prefixes; zero padding makes the shorter one smaller
        }
        return Bytes.compare(key, log, c[o], nodeLength);
    }

    /** Whether node sorts before the entry (key, pos): smaller key, or same key and newer (higher pos). */
    private boolean before(int node, byte[] key, long prefix, int pos) {
        int c = compareKey(key, prefix, node);
        return c > 0 || (c == 0 && keyPos(node) > pos);
    }

    // ------------------------------------------------------------ operations

    /**
     * Indexes the record whose key starts at {@code keyPos} in the log. Safe to call from many threads.
     *
     * @param key the key's bytes (equal to those in the log), used for comparisons
     */
    void insert(byte[] key, int keyPos, int valueLength) {
        int height = randomHeight();
        int node = allocate(height);
        int[] c = chunk(node);
        int o = node & (CHUNK - 1);
        c[o] = keyPos;
        c[o + 1] = key.length;
        c[o + 2] = valueLength;
        c[o + 3] = height;
        long prefix = TableFormat.prefix(key);
        c[o + 4] = (int) (prefix >>> 32);
        c[o + 5] = (int) prefix;
        int[] prev = new int[MAX_HEIGHT];
        int[] succ = new int[MAX_HEIGHT];
        int x = head;
        for (int level = MAX_HEIGHT - 1; level >= 0; level--) {
            int n = next(x, level);
            while (n != 0 && before(n, key, prefix, keyPos)) {
                x = n;
                n = next(x, level);
            }
            prev[level] = x;
            succ[level] = n;
        }
        for (int level = 0; level < height; level++) {
            while (true) {
                c[o + NODE_HEADER + level] = succ[level]; // published by the CAS below
                if (casNext(prev[level], level, succ[level], node)) {
                    break;
                }
                // another insert got in between: walk on from our predecessor at this level
                int p = prev[level];
                int n = next(p, level);
                while (n != 0 && before(n, key, prefix, keyPos)) {
                    p = n;
                    n = next(p, level);
                }
                prev[level] = p;
                succ[level] = n;
            }
        }
        count.incrementAndGet();
    }

    /** The first node with a key >= key (its newest version when equal), or 0. */
    int seek(byte[] key) {
        long prefix = TableFormat.prefix(key);
        int x = head;
        int n = 0;
        for (int level = MAX_HEIGHT - 1; level >= 0; level--) {
            n = next(x, level);
            while (n != 0 && compareKey(key, prefix, n) > 0) {
                x = n;
                n = next(x, level);
            }
        }
        return n;
    }

    /** The newest node of exactly this key, or 0. */
    int find(byte[] key) {
        int n = seek(key);
        return n != 0 && compareKey(key, TableFormat.prefix(key), n) == 0 ? n : 0;
    }

    int first() {
        return next(head, 0);
    }

    /** The next node with a different key (skipping older versions of node's key), or 0. */
    int nextKey(int node) {
        int keyPos = keyPos(node);
        int keyLength = keyLength(node);
        int n = next(node, 0);
        while (n != 0 && sameKey(n, keyPos, keyLength)) {
            n = next(n, 0);
        }
        return n;
    }

    private boolean sameKey(int node, int keyPos, int keyLength) {
        if (keyLength(node) != keyLength) {
            return false;
        }
        int p = keyPos(node);
        for (int i = 0; i < keyLength; i++) {
            if (log.get(p + i) != log.get(keyPos + i)) {
                return false;
            }
        }
        return true;
    }

    byte[] key(int node) {
        byte[] k = new byte[keyLength(node)];
        log.get(keyPos(node), k);
        return k;
    }

    /** The value bytes, or null for a tombstone. */
    byte[] value(int node) {
        int length = valueLength(node);
        if (length < 0) {
            return null;
        }
        byte[] v = new byte[length];
        log.get(keyPos(node) + keyLength(node), v);
        return v;
    }
}
