package perflab.storage.lsm;

import java.io.IOException;

/**
 * A positioned, forward-only view of one sorted source (a memtable or a table). {@link #value()} is null
 * for a tombstone. Used by range reads and by flush/compaction merges.
 */
interface Cursor extends AutoCloseable {
    boolean valid();

    byte[] key();

    byte[] value();

    void next() throws IOException;

    @Override
    void close();
}
