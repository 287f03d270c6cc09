package ru.vk.itmo.test.perflablsm.dao;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A small LSM: writes go to the {@link MemTable}, flushed into a new {@link SSTable} file every
 * {@code flushEntries} entries (and on close); a read looks in the memtable, then the tables newest first.
 * Opening reads the tables back ({@code 000001.sst}, ...). One lock orders writes and flushes.
 */
public final class ReferenceDao implements Dao<byte[], Entry<byte[]>> {
    private final Path dir;
    private final int flushEntries;
    private volatile MemTable memTable = new MemTable();
    /** Newest first. */
    private volatile List<SSTable> tables = new ArrayList<>();

    public ReferenceDao(Path dir, int flushEntries) throws IOException {
        this.dir = dir;
        this.flushEntries = flushEntries;
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(f -> f.getFileName().toString().endsWith(".sst")).sorted().toList();
        }
        List<SSTable> opened = new ArrayList<>();
        for (Path f : files) {
            opened.add(0, SSTable.open(f));
        }
        tables = opened;
    }

    @Override
    public Entry<byte[]> get(byte[] key) {
        Entry<byte[]> e = memTable.get(key);
        if (e == null) {
            for (SSTable t : tables) {
                e = t.get(key);
                if (e != null) {
                    break;
                }
            }
        }
        return e == null || e.value() == null ? null : e;
    }

    @Override
    public synchronized void upsert(Entry<byte[]> entry) {
        memTable.upsert(entry);
        if (memTable.size() >= flushEntries) {
            try {
                flush();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    @Override
    public synchronized void flush() throws IOException {
        MemTable full = memTable;
        if (full.size() == 0) {
            return;
        }
        Path file = dir.resolve(String.format("%06d.sst", tables.size() + 1));
        List<SSTable> next = new ArrayList<>(tables.size() + 1);
        next.add(SSTable.write(file, full.entries(), full.size()));
        next.addAll(tables);
        tables = next;
        memTable = new MemTable();
    }

    @Override
    public void close() throws IOException {
        flush();
    }
}
