package perflab.storage.lsm;

import perflab.storage.CorruptionException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Replays a log at start-up. The log ends at the first zero length. A record that fails its checks is a
 * torn tail when nothing valid follows it (dropped, and reported); if valid records follow, the file is
 * corrupted in the middle and replay refuses rather than silently dropping acknowledged writes.
 */
final class WalReader {
    /** Receives each record: its key (copied), where the key sits in the log, the value length (-1 = delete). */
    interface Sink {
        void accept(byte[] key, int keyPos, int valueLength, int recordEnd);
    }

    /** What replay found. */
    static final class Result {
        final long id;
        final long records;
        final int validEnd;
        final int tornBytes;
        final boolean emptyFile;

        Result(long id, long records, int validEnd, int tornBytes, boolean emptyFile) {
            this.id = id;
            this.records = records;
            this.validEnd = validEnd;
            this.tornBytes = tornBytes;
            this.emptyFile = emptyFile;
        }
    }

    private WalReader() {
    }

    /** Maps a log read-only (the caller closes the region; a memtable may keep reading from it). */
    static MappedRegion map(Path path) throws IOException {
        long size = Files.size(path);
        if (size > Integer.MAX_VALUE) {
            throw new CorruptionException("corrupted WAL " + path + ": larger than 2 GiB");
        }
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            return MappedRegion.map(ch, FileChannel.MapMode.READ_ONLY, size);
        }
    }

    static Result replay(Path path, MappedRegion region, Sink sink) throws IOException {
        ByteBuffer b = region.buffer();
        int size = region.size();
        if (size < WalFormat.HEADER) {
            return new Result(-1, 0, 0, 0, true);
        }
        int magic = b.getInt(0);
        if (magic == 0 && b.getLong(8) == 0) {
            return new Result(-1, 0, 0, 0, true); // created, never written: a crash during creation
        }
        if (magic != WalFormat.MAGIC) {
            throw new CorruptionException("corrupted WAL " + path + ": bad magic number");
        }
        int version = b.getInt(4);
        if (version != WalFormat.VERSION) {
            throw new CorruptionException("corrupted WAL " + path + ": unsupported version " + version);
        }
        long id = b.getLong(8);
        int pos = WalFormat.HEADER;
        long records = 0;
        String problem = null;
        while (pos + WalFormat.RECORD_HEADER <= size) {
            int length = b.getInt(pos);
            if (length == 0) {
                break;
            }
            problem = check(b, pos, size);
            if (problem != null) {
                break;
            }
            emit(b, pos, length, sink);
            records++;
            pos += WalFormat.RECORD_HEADER + length;
        }
        int tail = lastNonZero(b, pos, size);
        if (tail < 0) {
            return new Result(id, records, pos, 0, false);
        }
        int next = findValidRecord(b, pos + 1, size);
        if (next >= 0) {
            throw new CorruptionException("corrupted WAL " + path + ": "
                    + (problem == null ? "zero-length record" : problem) + " at offset " + pos
                    + ", but valid records follow at offset " + next + "; refusing to drop them"
                    + " (move the file out of the data directory to discard its unflushed writes)");
        }
        return new Result(id, records, pos, tail - pos + 1, false);
    }

    /** Null when the record at pos is intact, else what is wrong with it. */
    private static String check(ByteBuffer b, int pos, int size) {
        int length = b.getInt(pos);
        if (length < 2 || (long) pos + WalFormat.RECORD_HEADER + length > size) {
            return "bad record length " + length;
        }
        int p = pos + WalFormat.RECORD_HEADER;
        CRC32C crc = new CRC32C();
        crc.update(b.slice(p, length));
        if ((int) crc.getValue() != b.getInt(pos + 4)) {
            return "checksum mismatch";
        }
        byte type = b.get(p);
        if (type != WalFormat.PUT && type != WalFormat.DELETE) {
            return "unknown record type " + type;
        }
        long kl = TableFormat.varint(b, p + 1);
        int keyLength = TableFormat.varintValue(kl);
        if (1 + TableFormat.varintLength(kl) + keyLength > length
                || (type == WalFormat.DELETE && 1 + TableFormat.varintLength(kl) + keyLength != length)) {
            return "bad key length " + keyLength;
        }
        return null;
    }

    private static void emit(ByteBuffer b, int pos, int length, Sink sink) {
        int p = pos + WalFormat.RECORD_HEADER;
        byte type = b.get(p);
        long kl = TableFormat.varint(b, p + 1);
        int keyStart = p + 1 + TableFormat.varintLength(kl);
        byte[] key = new byte[TableFormat.varintValue(kl)];
        b.get(keyStart, key);
        int valueLength = type == WalFormat.PUT ? p + length - keyStart - key.length : -1;
        sink.accept(key, keyStart, valueLength, pos + WalFormat.RECORD_HEADER + length);
    }

    private static int lastNonZero(ByteBuffer b, int from, int size) {
        int i = size - 1;
        while (i >= from && (i & 7) != 7) {
            if (b.get(i) != 0) {
                return i;
            }
            i--;
        }
        for (; i - 7 >= from; i -= 8) {
            if (b.getLong(i - 7) != 0) {
                for (int j = i; j > i - 8; j--) {
                    if (b.get(j) != 0) {
                        return j;
                    }
                }
            }
        }
        for (; i >= from; i--) {
            if (b.get(i) != 0) {
                return i;
            }
        }
        return -1;
    }

    private static int findValidRecord(ByteBuffer b, int from, int size) {
        int end = lastNonZero(b, from, size);
        for (int q = from; q <= end - WalFormat.RECORD_HEADER; q++) {
            int length = b.getInt(q);
            if (length >= 2 && (long) q + WalFormat.RECORD_HEADER + length <= size && check(b, q, size) == null) {
                return q;
            }
        }
        return -1;
    }
}
