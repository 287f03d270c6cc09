package perflab.storage;

import java.io.Closeable;
import java.util.Iterator;

/** A lazy, ordered range; holds resources (table references) until closed. */
public interface RangeIterator extends Iterator<Entry>, Closeable {
    @Override
    void close();

    static RangeIterator of(Iterator<Entry> it) {
        return new RangeIterator() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public Entry next() {
                return it.next();
            }

            @Override
            public void close() {
            }
        };
    }
}
