package ru.vk.itmo.dao;

import java.io.Closeable;
import java.io.IOException;
import java.util.Iterator;

/** Stand-in for the course's storage interface (same name and shape, fewer default methods). */
public interface Dao<D, E extends Entry<D>> extends Closeable {
    /** The live entries with from <= key < to, in key order; a null bound is open. */
    Iterator<E> get(D from, D to);

    /** The entry of this key (its value is null when deleted), or null when there is none. */
    E get(D key);

    /** Stores the entry; a null value deletes the key. */
    void upsert(E entry);

    /** Makes everything upserted so far durable. */
    default void flush() throws IOException {
    }

    @Override
    default void close() throws IOException {
        flush();
    }
}
