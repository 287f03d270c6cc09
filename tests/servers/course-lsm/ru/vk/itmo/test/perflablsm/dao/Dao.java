package ru.vk.itmo.test.perflablsm.dao;

import java.io.Closeable;
import java.io.IOException;

/** The student's own copy of the course's storage interface (as many students keep one), not ru.vk.itmo.dao.Dao. */
public interface Dao<D, E extends Entry<D>> extends Closeable {
    /** The entry of this key (its value is null when deleted), or null when there is none. */
    E get(D key);

    /** Stores the entry; a null value deletes the key. */
    void upsert(E entry);

    /** Makes everything upserted so far durable. */
    default void flush() throws IOException {
    }
}
