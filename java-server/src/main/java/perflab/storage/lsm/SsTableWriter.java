package perflab.storage.lsm;

import perflab.util.Bytes;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Writes one SSTable (format in {@link TableFormat}) from keys given in strictly increasing order.
 * The file is written under a temporary name, fsynced, then renamed: a crash never leaves a half-written
 * file under a table name.
 */
final class SsTableWriter implements Closeable {
    private static final int OUT_BUFFER = 1 << 20;

    private final Path target;
    private final Path temp;
    private final FileChannel channel;
    private final ByteBuffer out = ByteBuffer.allocate(OUT_BUFFER);
    private final int blockSize;
    private final BloomFilter.Builder bloom;

    private byte[] block = new byte[8192];
    private int blockLength;
    private int[] entryOffsets = new int[64];
    private int entryCount;

    private long fileOffset;
    private long[] indexOffsets = new long[256];
    private int[] indexLengths = new int[256];
    private byte[][] indexKeys = new byte[256][];
    private int blocks;

    private byte[] firstKey;
    private byte[] lastKey;
    private long entries;
    private long tombstones;
    private long keyValueBytes;
    private boolean finished;

    SsTableWriter(Path target, int blockSize, int bloomBitsPerKey, long expectedKeys) throws IOException {
        this.target = target;
        this.temp = target.resolveSibling(target.getFileName() + ".tmp");
        this.channel = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE);
        this.blockSize = blockSize;
        this.bloom = bloomBitsPerKey > 0 ? new BloomFilter.Builder(Math.max(1, expectedKeys), bloomBitsPerKey) : null;
    }

    /** Adds an entry; {@code value == null} writes a tombstone. */
    void add(byte[] key, byte[] value) throws IOException {
        if (lastKey != null && Bytes.compare(lastKey, key) >= 0) {
            throw new IllegalArgumentException("keys out of order while writing " + target);
        }
        int valueLength = value == null ? 0 : value.length;
        int needed = Bytes.varintSize(key.length) + Bytes.varintSize(value == null ? 0 : valueLength + 1)
                + key.length + valueLength;
        if (entryCount > 0 && blockLength + needed + 4 * (entryCount + 3) > blockSize) {
            flushBlock();
        }
        ensureBlock(needed);
        if (entryCount == entryOffsets.length) {
            entryOffsets = Arrays.copyOf(entryOffsets, entryCount * 2);
        }
        entryOffsets[entryCount++] = blockLength;
        int p = Bytes.putVarint(block, blockLength, key.length);
        p = Bytes.putVarint(block, p, value == null ? 0 : valueLength + 1);
        System.arraycopy(key, 0, block, p, key.length);
        p += key.length;
        if (valueLength > 0) {
            System.arraycopy(value, 0, block, p, valueLength);
            p += valueLength;
        }
        blockLength = p;

        if (firstKey == null) {
            firstKey = key;
        }
        lastKey = key;
        entries++;
        if (value == null) {
            tombstones++;
        }
        keyValueBytes += key.length + valueLength;
        if (bloom != null) {
            bloom.add(KeyHash.hash(key));
        }
    }

    long entries() {
        return entries;
    }

    /** Bytes written so far plus the open block: what the file would roughly weigh if finished now. */
    long estimatedSize() {
        return fileOffset + out.position() + blockLength + (long) blocks * 24;
    }

    private void ensureBlock(int needed) {
        if (blockLength + needed > block.length) {
            block = Arrays.copyOf(block, Math.max(block.length * 2, blockLength + needed));
        }
    }

    private void flushBlock() throws IOException {
        if (entryCount == 0) {
            return;
        }
        ensureBlock(4 * entryCount + 8);
        ByteBuffer b = ByteBuffer.wrap(block);
        b.position(blockLength);
        for (int i = 0; i < entryCount; i++) {
            b.putInt(entryOffsets[i]);
        }
        b.putInt(entryCount);
        b.putInt(Checksums.crc(block, 0, b.position()));
        int length = b.position();
        if (blocks == indexOffsets.length) {
            indexOffsets = Arrays.copyOf(indexOffsets, blocks * 2);
            indexLengths = Arrays.copyOf(indexLengths, blocks * 2);
            indexKeys = Arrays.copyOf(indexKeys, blocks * 2);
        }
        indexOffsets[blocks] = fileOffset + out.position();
        indexLengths[blocks] = length;
        indexKeys[blocks] = lastKey;
        blocks++;
        write(block, 0, length);
        blockLength = 0;
        entryCount = 0;
    }

    private void write(byte[] data, int offset, int length) throws IOException {
        while (length > 0) {
            if (!out.hasRemaining()) {
                drain();
            }
            int n = Math.min(length, out.remaining());
            out.put(data, offset, n);
            offset += n;
            length -= n;
        }
    }

    private void drain() throws IOException {
        out.flip();
        while (out.hasRemaining()) {
            fileOffset += channel.write(out);
        }
        out.clear();
    }

    /** Completes the file, fsyncs it and renames it into place. Returns the final file size. */
    long finish() throws IOException {
        flushBlock();
        long indexOffset = fileOffset + out.position();
        byte[] index = buildIndex();
        write(index, 0, index.length);

        long bloomOffset = fileOffset + out.position();
        int bloomLength = 0;
        if (bloom != null) {
            ByteBuffer bb = ByteBuffer.allocate(bloom.serializedSize() + 4);
            bloom.writeTo(bb);
            bb.putInt(Checksums.crc(bb.array(), 0, bb.position()));
            bloomLength = bb.position();
            write(bb.array(), 0, bloomLength);
        }

        long metaOffset = fileOffset + out.position();
        byte[] meta = buildMeta();
        write(meta, 0, meta.length);

        ByteBuffer footer = ByteBuffer.allocate(TableFormat.FOOTER_SIZE);
        footer.putLong(indexOffset).putInt(index.length)
                .putLong(bloom == null ? 0 : bloomOffset).putInt(bloomLength)
                .putLong(metaOffset).putInt(meta.length)
                .putInt(TableFormat.VERSION).putInt(0).putInt(0).putInt(0);
        footer.putInt(Checksums.crc(footer.array(), 0, 52));
        footer.putLong(TableFormat.MAGIC);
        write(footer.array(), 0, TableFormat.FOOTER_SIZE);
        drain();
        channel.force(true);
        channel.close();
        Files.move(temp, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        finished = true;
        return fileOffset;
    }

    private byte[] buildIndex() {
        int keysSize = 0;
        for (int i = 0; i < blocks; i++) {
            keysSize += Bytes.varintSize(indexKeys[i].length) + indexKeys[i].length;
        }
        int headerSize = 4 + blocks * TableFormat.INDEX_ENTRY;
        ByteBuffer b = ByteBuffer.allocate(headerSize + keysSize + 4);
        b.putInt(blocks);
        int keyPos = headerSize;
        for (int i = 0; i < blocks; i++) {
            b.putLong(indexOffsets[i]).putInt(indexLengths[i]).putInt(keyPos).putLong(TableFormat.prefix(indexKeys[i]));
            keyPos += Bytes.varintSize(indexKeys[i].length) + indexKeys[i].length;
        }
        for (int i = 0; i < blocks; i++) {
            Bytes.putVarint(b, indexKeys[i].length);
            b.put(indexKeys[i]);
        }
        b.putInt(Checksums.crc(b.array(), 0, b.position()));
        return b.array();
    }

    private byte[] buildMeta() {
        byte[] first = firstKey == null ? Bytes.EMPTY : firstKey;
        byte[] last = lastKey == null ? Bytes.EMPTY : lastKey;
        ByteBuffer b = ByteBuffer.allocate(28 + 10 + first.length + last.length + 4);
        b.putLong(entries).putLong(tombstones).putLong(keyValueBytes).putInt(blocks);
        Bytes.putVarint(b, first.length);
        b.put(first);
        Bytes.putVarint(b, last.length);
        b.put(last);
        b.putInt(Checksums.crc(b.array(), 0, b.position()));
        return Arrays.copyOf(b.array(), b.position());
    }

    /** Abandons an unfinished table and removes its temporary file. */
    @Override
    public void close() throws IOException {
        if (!finished) {
            channel.close();
            Files.deleteIfExists(temp);
        }
    }
}
