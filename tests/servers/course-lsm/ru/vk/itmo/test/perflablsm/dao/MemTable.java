package ru.vk.itmo.test.perflablsm.dao;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/** The writes not yet flushed, in unsigned byte order; a deletion is kept as a null value. */
final class MemTable {
    private static final byte[] TOMBSTONE = new byte[0];

    private final ConcurrentSkipListMap<byte[], byte[]> map = new ConcurrentSkipListMap<>(Arrays::compareUnsigned);

    /** null: not here; an entry with a null value: deleted here. */
    Entry<byte[]> get(byte[] key) {
        byte[] value = map.get(key);
        return value == null ? null : new BaseEntry<>(key, value == TOMBSTONE ? null : value);
    }

    void upsert(Entry<byte[]> entry) {
        map.put(entry.key(), entry.value() == null ? TOMBSTONE : entry.value());
    }

    int size() {
        return map.size();
    }

    /** The entries in key order, deletions as null values. */
    Iterable<Entry<byte[]>> entries() {
        return () -> map.entrySet().stream()
                .map((Map.Entry<byte[], byte[]> e) -> (Entry<byte[]>) new BaseEntry<>(e.getKey(),
                        e.getValue() == TOMBSTONE ? null : e.getValue()))
                .iterator();
    }
}
