package perflab.storage.lsm;

import java.nio.ByteBuffer;

/**
 * SSTable file format, version 1 (all integers big-endian, varints unsigned LEB128):
 * <pre>
 * data block*   entry* | u32 entryOffset[n] | u32 n | u32 crc32c
 *               entry = varint keyLen | varint valueTag (0 = tombstone, else valueLen + 1) | key | value
 * index         u32 n | n × (u64 blockOffset, u32 blockLength, u32 keyPos, u64 keyPrefix) | keys | u32 crc32c
 *               keys = (varint len | last key of the block)*, keyPos relative to the index start,
 *               keyPrefix = the last key's first 8 bytes, big-endian, zero-padded (binary search compares
 *               one long per probe and reads the full key only on a tie)
 * bloom         {@link BloomFilter} layout | u32 crc32c            (absent when bloom-bits = 0)
 * meta          u64 entries | u64 tombstones | u64 keyValueBytes | u32 blocks
 *               | varint len | first key | varint len | last key | u32 crc32c
 * footer (64)   u64 indexOffset | u32 indexLength | u64 bloomOffset | u32 bloomLength
 *               | u64 metaOffset | u32 metaLength | u32 version | u32 flags | u32 0 | u32 0
 *               | u32 crc32c(footer bytes 0..51) | u64 magic "PLKVSST1"
 * </pre>
 * Every section's length includes its trailing checksum. Section checksums are verified at open, data
 * block checksums the first time each block is read by this process.
 */
final class TableFormat {
    static final long MAGIC = 0x504C4B5653535431L; // "PLKVSST1"
    static final int VERSION = 1;
    static final int FOOTER_SIZE = 64;
    static final int INDEX_ENTRY = 24;

    private TableFormat() {
    }

    /** The first 8 bytes of a key as an unsigned-comparable long (zero-padded). */
    static long prefix(byte[] key) {
        long p = 0;
        int n = Math.min(8, key.length);
        for (int i = 0; i < n; i++) {
            p |= (key[i] & 0xffL) << (56 - 8 * i);
        }
        return p;
    }

    /** Reads a varint at {@code pos}: returns (value << 8) | encodedLength. */
    static long varint(ByteBuffer buf, int pos) {
        int b = buf.get(pos);
        if (b >= 0) {
            return ((long) b << 8) | 1;
        }
        int value = b & 0x7f;
        int shift = 7;
        int n = 1;
        while (true) {
            b = buf.get(pos + n);
            n++;
            value |= (b & 0x7f) << shift;
            if (b >= 0) {
                return ((long) value << 8) | n;
            }
            shift += 7;
            if (shift > 28) {
                throw new IllegalStateException("varint too long at " + pos);
            }
        }
    }

    static int varintValue(long packed) {
        return (int) (packed >>> 8);
    }

    static int varintLength(long packed) {
        return (int) (packed & 0xff);
    }
}
