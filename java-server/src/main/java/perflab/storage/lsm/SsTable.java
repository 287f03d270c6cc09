package perflab.storage.lsm;

import perflab.storage.CorruptionException;
import perflab.util.Bytes;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A read-only, memory-mapped SSTable. On the heap: the first/last key and the 8-byte key prefix of each
 * block's last key (8 bytes per data block, ~0.2% of the data), so the index binary search runs over a
 * dense long[] and touches the mapping only to break prefix ties. The full index and the bloom filter are
 * read in the mapping, so the heap grows with the database only by those prefixes.
 * Reference-counted: the owning version holds one reference, range iterators and compactions take more;
 * the file is unmapped (and deleted, if obsolete) when the count reaches zero.
 */
final class SsTable {
    /** Marker returned by {@link #get} for a tombstone (identity-compared). */
    static final byte[] DELETED = new byte[0];

    final long number;
    final Path path;
    private final MappedRegion region;
    private final ByteBuffer buf;
    private final int indexOffset;
    private final int blockCount;
    private final int bloomOffset;
    final long entries;
    final long tombstones;
    final long keyValueBytes;
    final long fileSize;
    final byte[] firstKey;
    final byte[] lastKey;
    private final AtomicInteger refs = new AtomicInteger(1);
    /**
     * Blocks whose checksum this process has checked. Racy on purpose: a lost update only means checking
     * a block again, never skipping one.
     */
    private final long[] verified;
    /** prefix(last key of block i), non-decreasing. */
    private final long[] blockPrefixes;
    private volatile boolean obsolete;

    private SsTable(long number, Path path, MappedRegion region, int indexOffset, int blockCount, int bloomOffset,
                    long entries, long tombstones, long keyValueBytes, byte[] firstKey, byte[] lastKey) {
        this.number = number;
        this.path = path;
        this.region = region;
        this.buf = region.buffer();
        this.indexOffset = indexOffset;
        this.blockCount = blockCount;
        this.bloomOffset = bloomOffset;
        this.entries = entries;
        this.tombstones = tombstones;
        this.keyValueBytes = keyValueBytes;
        this.fileSize = region.size();
        this.firstKey = firstKey;
        this.lastKey = lastKey;
        this.verified = new long[(blockCount + 63) / 64];
        this.blockPrefixes = new long[blockCount];
        for (int i = 0; i < blockCount; i++) {
            blockPrefixes[i] = buf.getLong(indexOffset + 4 + i * TableFormat.INDEX_ENTRY + 16);
        }
    }

    /** Maps the file and verifies footer, index, bloom and meta checksums. */
    static SsTable open(Path path, long number) throws IOException {
        long size = Files.size(path);
        if (size < TableFormat.FOOTER_SIZE) {
            throw corrupt(path, "file is " + size + " bytes, shorter than the footer");
        }
        if (size > Integer.MAX_VALUE) {
            throw corrupt(path, "file is larger than 2 GiB");
        }
        MappedRegion region;
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            region = MappedRegion.map(ch, FileChannel.MapMode.READ_ONLY, size);
        }
        try {
            SsTable table = parse(path, number, region);
            table.verifySections();
            return table;
        } catch (IOException | RuntimeException e) {
            region.close();
            if (e instanceof CorruptionException) {
                throw e;
            }
            throw corrupt(path, "unreadable structure (" + e + ")");
        }
    }

    private static SsTable parse(Path path, long number, MappedRegion region) throws IOException {
        ByteBuffer b = region.buffer();
        int size = region.size();
        int f = size - TableFormat.FOOTER_SIZE;
        if (b.getLong(f + 56) != TableFormat.MAGIC) {
            throw corrupt(path, "bad magic number (not an SSTable or truncated)");
        }
        if (Checksums.crc(b, f, 52) != b.getInt(f + 52)) {
            throw corrupt(path, "checksum mismatch in footer");
        }
        int version = b.getInt(f + 36);
        if (version != TableFormat.VERSION) {
            throw corrupt(path, "unsupported format version " + version + " (this build reads "
                    + TableFormat.VERSION + ")");
        }
        long indexOffset = b.getLong(f);
        int indexLength = b.getInt(f + 8);
        long bloomOffset = b.getLong(f + 12);
        int bloomLength = b.getInt(f + 20);
        long metaOffset = b.getLong(f + 24);
        int metaLength = b.getInt(f + 32);
        checkSection(path, "index", indexOffset, indexLength, f);
        checkSection(path, "meta", metaOffset, metaLength, f);
        if (bloomLength > 0) {
            checkSection(path, "bloom filter", bloomOffset, bloomLength, f);
        }
        int blockCount = b.getInt((int) indexOffset);
        if (blockCount < 0 || 4L + (long) blockCount * TableFormat.INDEX_ENTRY > indexLength - 4) {
            throw corrupt(path, "bad block count " + blockCount + " in index");
        }
        int m = (int) metaOffset;
        long entries = b.getLong(m);
        long tombstones = b.getLong(m + 8);
        long kvBytes = b.getLong(m + 16);
        int p = m + 28;
        long first = TableFormat.varint(b, p);
        p += TableFormat.varintLength(first);
        byte[] firstKey = new byte[TableFormat.varintValue(first)];
        b.get(p, firstKey);
        p += firstKey.length;
        long last = TableFormat.varint(b, p);
        p += TableFormat.varintLength(last);
        byte[] lastKey = new byte[TableFormat.varintValue(last)];
        b.get(p, lastKey);
        return new SsTable(number, path, region, (int) indexOffset, blockCount,
                bloomLength > 0 ? (int) bloomOffset : -1, entries, tombstones, kvBytes, firstKey, lastKey);
    }

    private static void checkSection(Path path, String name, long offset, int length, int footer) throws IOException {
        if (offset < 0 || length < 8 || offset + length > footer) {
            throw corrupt(path, name + " section out of bounds");
        }
    }

    /** Verifies the checksum of the index, bloom and meta sections (called once at open). */
    void verifySections() throws CorruptionException {
        int f = region.size() - TableFormat.FOOTER_SIZE;
        verify("index", (int) buf.getLong(f), buf.getInt(f + 8));
        if (bloomOffset >= 0) {
            verify("bloom filter", (int) buf.getLong(f + 12), buf.getInt(f + 20));
        }
        verify("meta", (int) buf.getLong(f + 24), buf.getInt(f + 32));
    }

    private void verify(String section, int offset, int length) throws CorruptionException {
        if (Checksums.crc(buf, offset, length - 4) != buf.getInt(offset + length - 4)) {
            throw corrupt(path, "checksum mismatch in " + section + " at offset " + offset);
        }
    }

    static CorruptionException corrupt(Path path, String what) {
        return new CorruptionException("corrupted SSTable " + path + ": " + what);
    }

    static final int OUT_OF_RANGE = 0;
    static final int BLOOM_NEGATIVE = 1;
    static final int MAYBE = 2;

    /** Whether the key may be in this table: range check, then the bloom filter. */
    int mightContain(byte[] key, long hash) {
        if (Bytes.compare(key, firstKey) < 0 || Bytes.compare(key, lastKey) > 0) {
            return OUT_OF_RANGE;
        }
        if (bloomOffset >= 0 && !BloomFilter.mightContain(buf, bloomOffset, hash)) {
            return BLOOM_NEGATIVE;
        }
        return MAYBE;
    }

    /** The value, {@link #DELETED} for a tombstone, or null when the key is not in this table. */
    byte[] get(byte[] key) throws CorruptionException {
        int block = findBlock(key);
        if (block < 0) {
            return null;
        }
        int blockOffset = blockOffset(block);
        int blockLength = blockLength(block);
        verifyBlock(block, blockOffset, blockLength);
        int end = blockOffset + blockLength - 4;
        int n = buf.getInt(end - 4);
        int offsets = end - 4 - 4 * n;
        int lo = 0;
        int hi = n - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int e = blockOffset + buf.getInt(offsets + 4 * mid);
            long kl = TableFormat.varint(buf, e);
            int keyLength = TableFormat.varintValue(kl);
            int p = e + TableFormat.varintLength(kl);
            long vt = TableFormat.varint(buf, p);
            p += TableFormat.varintLength(vt);
            int c = Bytes.compare(key, buf, p, keyLength);
            if (c == 0) {
                int tag = TableFormat.varintValue(vt);
                if (tag == 0) {
                    return DELETED;
                }
                byte[] value = new byte[tag - 1];
                buf.get(p + keyLength, value);
                return value;
            } else if (c < 0) {
                hi = mid - 1;
            } else {
                lo = mid + 1;
            }
        }
        return null;
    }

    /** Index of the first block whose last key is >= key, or -1. */
    int findBlock(byte[] key) {
        long prefix = TableFormat.prefix(key);
        long[] prefixes = blockPrefixes;
        // first block whose last key's prefix is >= the key's prefix: a search over the heap array
        int lo = 0;
        int hi = prefixes.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(prefixes[mid], prefix) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        // blocks whose last key has the same prefix need the full keys (read in the mapping)
        int end = lo;
        while (end < prefixes.length && prefixes[end] == prefix) {
            end++;
        }
        if (end == lo) {
            return lo < prefixes.length ? lo : -1; // a larger prefix means a larger last key
        }
        hi = end;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int keyPos = indexOffset + buf.getInt(indexOffset + 4 + mid * TableFormat.INDEX_ENTRY + 12);
            long kl = TableFormat.varint(buf, keyPos);
            if (Bytes.compare(key, buf, keyPos + TableFormat.varintLength(kl), TableFormat.varintValue(kl)) > 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo < prefixes.length ? lo : -1;
    }

    int blockCount() {
        return blockCount;
    }

    int blockOffset(int block) {
        return (int) buf.getLong(indexOffset + 4 + block * TableFormat.INDEX_ENTRY);
    }

    int blockLength(int block) {
        return buf.getInt(indexOffset + 4 + block * TableFormat.INDEX_ENTRY + 8);
    }

    /** Checks a data block's bounds and, the first time it is read, its checksum. */
    void verifyBlock(int block, int offset, int length) throws CorruptionException {
        if (length < 12 || offset < 0 || offset + length > fileSize) {
            throw corrupt(path, "bad data block bounds at offset " + offset);
        }
        long bit = 1L << block;
        int word = block >>> 6;
        if ((verified[word] & bit) != 0) {
            return;
        }
        if (Checksums.crc(buf, offset, length - 4) != buf.getInt(offset + length - 4)) {
            throw corrupt(path, "checksum mismatch in data block at offset " + offset);
        }
        verified[word] |= bit;
    }

    ByteBuffer buffer() {
        return buf;
    }

    /** Takes a reference unless the table is already released; false means "look again". */
    boolean retain() {
        return RefCounts.retain(refs);
    }

    /** Drops a reference; the last one unmaps the file and deletes it if it was marked obsolete. */
    void release() {
        if (refs.decrementAndGet() == 0) {
            region.close();
            if (obsolete) {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    System.err.println("lsm: cannot delete obsolete " + path + ": " + e);
                }
            }
        }
    }

    /** After compaction replaced it: delete the file once the last reader lets go. */
    void markObsolete() {
        obsolete = true;
    }

    @Override
    public String toString() {
        return path.getFileName().toString();
    }
}
