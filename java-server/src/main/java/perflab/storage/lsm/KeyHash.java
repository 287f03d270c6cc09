package perflab.storage.lsm;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The 64-bit key hash behind the bloom filters. It is part of SSTable format version 1: changing it
 * requires a new format version. Eight bytes per step, then a murmur3 finaliser for avalanche.
 */
final class KeyHash {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long M = 0x9E3779B97F4A7C15L;

    private KeyHash() {
    }

    static long hash(byte[] key) {
        long h = 0x243F6A8885A308D3L ^ (key.length * M);
        int i = 0;
        for (; i + 8 <= key.length; i += 8) {
            long w = (long) LONGS.get(key, i);
            h = Long.rotateLeft(h ^ (w * M), 29) * 0xBF58476D1CE4E5B9L;
        }
        long tail = 0;
        for (int shift = 0; i < key.length; i++, shift += 8) {
            tail |= (key[i] & 0xffL) << shift;
        }
        h = Long.rotateLeft(h ^ (tail * M), 29) * 0xBF58476D1CE4E5B9L;
        return fmix(h);
    }

    static long fmix(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }
}
