package ru.vk.itmo.test.perflablsm.dao;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One flushed memtable as a file: int count, then count int offsets, then the entries (int key length, key,
 * int value length or -1 for a deletion, value). Read back whole; a lookup is a binary search comparing keys
 * byte by byte.
 */
final class SSTable {
    private final ByteBuffer data;
    private final int count;

    private SSTable(ByteBuffer data) {
        this.data = data;
        this.count = data.getInt(0);
    }

    static SSTable write(Path file, Iterable<Entry<byte[]>> entries, int count) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file)))) {
            out.writeInt(count);
            int offset = 4 + 4 * count;
            for (Entry<byte[]> e : entries) {
                out.writeInt(offset);
                offset += 8 + e.key().length + (e.value() == null ? 0 : e.value().length);
            }
            for (Entry<byte[]> e : entries) {
                out.writeInt(e.key().length);
                out.write(e.key());
                out.writeInt(e.value() == null ? -1 : e.value().length);
                if (e.value() != null) {
                    out.write(e.value());
                }
            }
        }
        return open(file);
    }

    static SSTable open(Path file) throws IOException {
        return new SSTable(ByteBuffer.wrap(Files.readAllBytes(file)));
    }

    /** null: not in this table; an entry with a null value: deleted here. */
    Entry<byte[]> get(byte[] key) {
        int lo = 0;
        int hi = count - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int at = data.getInt(4 + 4 * mid);
            int c = compare(at, key);
            if (c < 0) {
                lo = mid + 1;
            } else if (c > 0) {
                hi = mid - 1;
            } else {
                int keyLength = data.getInt(at);
                int valueLength = data.getInt(at + 4 + keyLength);
                if (valueLength < 0) {
                    return new BaseEntry<>(key, null);
                }
                byte[] value = new byte[valueLength];
                data.get(at + 8 + keyLength, value);
                return new BaseEntry<>(key, value);
            }
        }
        return null;
    }

    /** The key stored at {@code at} against {@code key}, unsigned byte by byte. */
    private int compare(int at, byte[] key) {
        int length = data.getInt(at);
        int n = Math.min(length, key.length);
        for (int i = 0; i < n; i++) {
            int c = Byte.compareUnsigned(data.get(at + 4 + i), key[i]);
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(length, key.length);
    }
}
