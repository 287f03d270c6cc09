package perflab.storage.lsm;

import java.nio.ByteBuffer;

/**
 * A blocked bloom filter: every key sets k bits inside one 64-byte block, so a negative lookup costs one
 * cache line of the mapped file. Layout (part of SSTable format 1): u32 blockCount, u32 k, then blockCount
 * blocks of 8 big-endian u64 words. Block = high 32 bits of the hash scaled to blockCount; the bit
 * positions are 9-bit slices of a second mix of the hash (six per mix).
 */
final class BloomFilter {
    static final int HEADER = 8;
    private static final int WORDS_PER_BLOCK = 8;

    private BloomFilter() {
    }

    /** Accumulates hashes while a table is written. */
    static final class Builder {
        private final long[] words;
        private final int blocks;
        private final int k;

        Builder(long expectedKeys, int bitsPerKey) {
            long bits = Math.max(512, expectedKeys * Math.max(1, bitsPerKey));
            this.blocks = (int) Math.min(Integer.MAX_VALUE / WORDS_PER_BLOCK, (bits + 511) / 512);
            this.words = new long[blocks * WORDS_PER_BLOCK];
            this.k = Math.max(1, Math.min(16, (int) Math.round(bitsPerKey * 0.69)));
        }

        void add(long hash) {
            int base = block(hash, blocks) * WORDS_PER_BLOCK;
            long h = KeyHash.fmix(hash ^ 0x5851F42D4C957F2DL);
            for (int i = 0; i < k; i++) {
                if (i > 0 && i % 6 == 0) {
                    h = KeyHash.fmix(h + i);
                }
                int bit = (int) (h >>> (i % 6 * 9)) & 511;
                words[base + (bit >>> 6)] |= 1L << (bit & 63);
            }
        }

        int serializedSize() {
            return HEADER + words.length * 8;
        }

        void writeTo(ByteBuffer out) {
            out.putInt(blocks);
            out.putInt(k);
            for (long w : words) {
                out.putLong(w);
            }
        }
    }

    /** Probes a serialized filter in place (no copy to the heap). */
    static boolean mightContain(ByteBuffer buf, int offset, long hash) {
        int blocks = buf.getInt(offset);
        int k = buf.getInt(offset + 4);
        int base = offset + HEADER + block(hash, blocks) * WORDS_PER_BLOCK * 8;
        long h = KeyHash.fmix(hash ^ 0x5851F42D4C957F2DL);
        for (int i = 0; i < k; i++) {
            if (i > 0 && i % 6 == 0) {
                h = KeyHash.fmix(h + i);
            }
            int bit = (int) (h >>> (i % 6 * 9)) & 511;
            if ((buf.getLong(base + (bit >>> 6) * 8) & (1L << (bit & 63))) == 0) {
                return false;
            }
        }
        return true;
    }

    private static int block(long hash, int blocks) {
        return (int) (((hash >>> 32) * blocks) >>> 32);
    }
}
