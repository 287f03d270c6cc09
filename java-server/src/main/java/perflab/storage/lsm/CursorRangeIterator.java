package perflab.storage.lsm;

import perflab.storage.Entry;
import perflab.storage.RangeIterator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.NoSuchElementException;

/** Adapts a cursor to the public iterator; I/O errors (e.g. a corrupted block) surface unchecked. */
final class CursorRangeIterator implements RangeIterator {
    private final Cursor cursor;
    private boolean closed;

    CursorRangeIterator(Cursor cursor) {
        this.cursor = cursor;
    }

    @Override
    public boolean hasNext() {
        return !closed && cursor.valid();
    }

    @Override
    public Entry next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        Entry e = new Entry(cursor.key(), cursor.value());
        try {
            cursor.next();
        } catch (IOException ex) {
            close();
            throw new UncheckedIOException(ex);
        }
        return e;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            cursor.close();
        }
    }
}
