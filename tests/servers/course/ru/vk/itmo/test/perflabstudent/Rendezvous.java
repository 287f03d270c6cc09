package ru.vk.itmo.test.perflabstudent;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Which node owns a key: rendezvous (highest random weight) hashing, each node scored by a hash of its URL
 * and the key. The hash is this server's own (FNV-1a 64 over url, a 0 byte and the key, then the murmur3
 * 64-bit finalizer), deliberately not perflab's, so the lab meets a key placement it does not know.
 */
final class Rendezvous {
    private Rendezvous() {
    }

    static String owner(List<String> nodes, byte[] key) {
        String best = null;
        long bestScore = 0;
        for (String node : nodes) {
            long score = score(node, key);
            int order = best == null ? 1 : Long.compareUnsigned(score, bestScore);
            if (order > 0 || order == 0 && node.compareTo(best) < 0) {
                best = node;
                bestScore = score;
            }
        }
        return best;
    }

    static long score(String node, byte[] key) {
        long h = 0xcbf29ce484222325L;
        for (byte b : node.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        h *= 0x100000001b3L; // the 0 separator: "ab"+"c" and "a"+"bc" score apart
        for (byte b : key) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        return h ^ (h >>> 33);
    }
}
