package perflab.storage.lsm;

/**
 * A cursor over a memtable (newest version of each key). Weakly consistent: it may see writes made after
 * it opened. Holds a memtable reference (taken inside the read guard) until closed.
 */
final class MemtableCursor implements Cursor {
    private final Memtable memtable;
    private final LogSkipList index;
    private int node;
    private byte[] key;
    private byte[] value;
    private boolean closed;

    MemtableCursor(Memtable memtable, byte[] from) {
        if (!memtable.retain()) {
            throw new IllegalStateException("memtable " + memtable.id + " released under a reader");
        }
        this.memtable = memtable;
        this.index = memtable.index();
        this.node = from == null ? index.first() : index.seek(from);
        decode();
    }

    private void decode() {
        if (node != 0) {
            key = index.key(node);
            value = index.value(node);
        } else {
            key = null;
            value = null;
        }
    }

    @Override
    public boolean valid() {
        return node != 0 && !closed;
    }

    @Override
    public byte[] key() {
        return key;
    }

    @Override
    public byte[] value() {
        return value;
    }

    @Override
    public void next() {
        if (node != 0) {
            node = index.nextKey(node);
            decode();
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            node = 0;
            memtable.release();
        }
    }
}
