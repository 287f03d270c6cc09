package perflab.cluster;

import java.nio.charset.StandardCharsets;

/**
 * The cluster's one hash: 64-bit FNV-1a over the bytes, then MurmurHash3's fmix64 finalizer (FNV-1a alone
 * mixes its last bytes poorly into the high bits, and rendezvous hashing compares whole 64-bit scores).
 * Chosen because it is a few lines in any language, so a Python or student implementation reproduces it
 * exactly; stable across JVMs and restarts (no String.hashCode, no seed). Test vectors in ClusterHashTest
 * and docs/contracts/cluster.md section 7.
 */
public final class ClusterHash {
    public static final long FNV_OFFSET = 0xcbf29ce484222325L;
    public static final long FNV_PRIME = 0x100000001b3L;

    private ClusterHash() {
    }

    /** FNV-1a 64 continued from state {@code h} over {@code data}. */
    public static long fnv1a(long h, byte[] data) {
        for (byte b : data) {
            h ^= b & 0xff;
            h *= FNV_PRIME;
        }
        return h;
    }

    /** MurmurHash3's 64-bit finalizer: every input bit affects every output bit. */
    public static long fmix64(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
    }

    /** fmix64(fnv1a64(data)). */
    public static long hash(byte[] data) {
        return fmix64(fnv1a(FNV_OFFSET, data));
    }

    /** The FNV state after a node's URL and the 0x00 separator: a key's score continues from it. */
    public static long nodeSeed(String url) {
        long h = fnv1a(FNV_OFFSET, url.getBytes(StandardCharsets.UTF_8));
        return (h ^ 0) * FNV_PRIME; // the separator byte 0x00
    }

    /** A node's rendezvous score for a key: fmix64(fnv1a64(url bytes, 0x00, key bytes)), compared unsigned. */
    public static long score(long nodeSeed, byte[] key) {
        return fmix64(fnv1a(nodeSeed, key));
    }

    public static String hex(long v) {
        String s = Long.toHexString(v);
        return "0000000000000000".substring(s.length()) + s;
    }
}
