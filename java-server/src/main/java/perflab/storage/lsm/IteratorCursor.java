package perflab.storage.lsm;

import perflab.storage.Entry;

import java.util.Iterator;

/** A cursor over caller-supplied sorted entries (bulk load). */
final class IteratorCursor implements Cursor {
    private final Iterator<Entry> entries;
    private Entry current;

    IteratorCursor(Iterator<Entry> entries) {
        this.entries = entries;
        this.current = entries.hasNext() ? entries.next() : null;
    }

    @Override
    public boolean valid() {
        return current != null;
    }

    @Override
    public byte[] key() {
        return current.key();
    }

    @Override
    public byte[] value() {
        return current.value();
    }

    @Override
    public void next() {
        current = entries.hasNext() ? entries.next() : null;
    }

    @Override
    public void close() {
    }
}
