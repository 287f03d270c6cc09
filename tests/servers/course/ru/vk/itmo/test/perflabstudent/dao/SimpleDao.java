package ru.vk.itmo.test.perflabstudent.dao;

import ru.vk.itmo.dao.Dao;
import ru.vk.itmo.dao.Entry;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A small storage that does real work per request: a sorted map (keys in unsigned byte order) in front of
 * a write-ahead file, {@code simple-dao.log} in the working directory. A write appends a record to the file
 * (buffered) and updates the map; close() flushes the file and rewrites it with the live entries only, and
 * opening replays it, so a clean stop keeps everything. A kill -9 loses what was still buffered.
 * Record: int key length, int value length (-1: a deletion), key bytes, value bytes.
 */
public final class SimpleDao implements Dao<byte[], Entry<byte[]>> {
    private static final String LOG = "simple-dao.log";

    private final Path dir;
    private final ConcurrentSkipListMap<byte[], byte[]> map = new ConcurrentSkipListMap<>(Arrays::compareUnsigned);
    private final DataOutputStream log;
    private boolean closed;

    public SimpleDao(Path dir) throws IOException {
        this.dir = dir;
        Path file = dir.resolve(LOG);
        if (Files.exists(file)) {
            replay(file);
        }
        log = new DataOutputStream(new BufferedOutputStream(
                Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND), 1 << 16));
    }

    /** Reads every whole record back; a torn tail (a crash mid-write) is cut off so appends follow the last one. */
    private void replay(Path file) throws IOException {
        long size = Files.size(file);
        long valid = 0;
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            while (valid + 8 <= size) {
                int keyLength = in.readInt();
                int valueLength = in.readInt();
                long end = valid + 8 + keyLength + Math.max(valueLength, 0);
                if (keyLength < 0 || valueLength < -1 || end > size) {
                    break;
                }
                byte[] key = new byte[keyLength];
                in.readFully(key);
                byte[] value = valueLength < 0 ? null : new byte[valueLength];
                if (value != null) {
                    in.readFully(value);
                }
                apply(key, value);
                valid = end;
            }
        }
        if (valid < size) {
            System.err.println("simple-dao: cut a torn tail of " + (size - valid) + " bytes off " + file);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(valid);
            }
        }
    }

    private void apply(byte[] key, byte[] value) {
        if (value == null) {
            map.remove(key);
        } else {
            map.put(key, value);
        }
    }

    @Override
    public Entry<byte[]> get(byte[] key) {
        byte[] value = map.get(key);
        return value == null ? null : new StudentEntry(key, value);
    }

    @Override
    public Iterator<Entry<byte[]>> get(byte[] from, byte[] to) {
        NavigableMap<byte[], byte[]> range = from == null && to == null ? map
                : from == null ? map.headMap(to, false)
                : to == null ? map.tailMap(from, true)
                : map.subMap(from, true, to, false);
        Iterator<Map.Entry<byte[], byte[]>> it = range.entrySet().iterator();
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public Entry<byte[]> next() {
                Map.Entry<byte[], byte[]> e = it.next();
                return new StudentEntry(e.getKey(), e.getValue());
            }
        };
    }

    /** One lock orders the log and the map alike, so a replay ends where the map is. */
    @Override
    public synchronized void upsert(Entry<byte[]> entry) {
        if (closed) {
            throw new IllegalStateException("the storage is closed");
        }
        try {
            log.writeInt(entry.key().length);
            log.writeInt(entry.value() == null ? -1 : entry.value().length);
            log.write(entry.key());
            if (entry.value() != null) {
                log.write(entry.value());
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot append to " + dir.resolve(LOG), e);
        }
        apply(entry.key(), entry.value());
    }

    @Override
    public synchronized void flush() throws IOException {
        log.flush();
    }

    /** Flushes, then rewrites the log with the live entries only (written aside, synced, renamed over it). */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        log.close();
        Path tmp = dir.resolve(LOG + ".tmp");
        try (OutputStream raw = Files.newOutputStream(tmp);
             DataOutputStream out = new DataOutputStream(new BufferedOutputStream(raw, 1 << 16))) {
            for (Map.Entry<byte[], byte[]> e : map.entrySet()) {
                out.writeInt(e.getKey().length);
                out.writeInt(e.getValue().length);
                out.write(e.getKey());
                out.write(e.getValue());
            }
        }
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(tmp, dir.resolve(LOG), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
