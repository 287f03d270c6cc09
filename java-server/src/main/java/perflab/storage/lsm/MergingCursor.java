package perflab.storage.lsm;

import perflab.util.Bytes;

import java.io.IOException;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Merges sources given newest first into one key-ordered stream where each key appears once, with the
 * newest source's value. Optionally hides tombstones (reads) and stops at an exclusive upper bound.
 */
final class MergingCursor implements Cursor {
    private static final class Source {
        final Cursor cursor;
        final int rank; // 0 = newest

        Source(Cursor cursor, int rank) {
            this.cursor = cursor;
            this.rank = rank;
        }
    }

    private final List<Cursor> sources;
    private final PriorityQueue<Source> heap;
    private final byte[] to;
    private final boolean skipTombstones;
    private byte[] key;
    private byte[] value;
    private boolean valid;

    MergingCursor(List<Cursor> sourcesNewestFirst, byte[] to, boolean skipTombstones) throws IOException {
        this.sources = sourcesNewestFirst;
        this.to = to;
        this.skipTombstones = skipTombstones;
        this.heap = new PriorityQueue<>(Math.max(1, sourcesNewestFirst.size()), (a, b) -> {
            int c = Bytes.compare(a.cursor.key(), b.cursor.key());
            return c != 0 ? c : Integer.compare(a.rank, b.rank);
        });
        for (int i = 0; i < sourcesNewestFirst.size(); i++) {
            Cursor c = sourcesNewestFirst.get(i);
            if (c.valid()) {
                heap.add(new Source(c, i));
            }
        }
        advance();
    }

    private void advance() throws IOException {
        while (true) {
            Source top = heap.poll();
            if (top == null) {
                valid = false;
                key = null;
                value = null;
                return;
            }
            byte[] k = top.cursor.key();
            byte[] v = top.cursor.value();
            // older versions of the same key are shadowed
            while (!heap.isEmpty() && Bytes.compare(heap.peek().cursor.key(), k) == 0) {
                Source older = heap.poll();
                older.cursor.next();
                if (older.cursor.valid()) {
                    heap.add(older);
                }
            }
            top.cursor.next();
            if (top.cursor.valid()) {
                heap.add(top);
            }
            if (to != null && Bytes.compare(k, to) >= 0) {
                heap.clear();
                valid = false;
                key = null;
                value = null;
                return;
            }
            if (v == null && skipTombstones) {
                continue;
            }
            key = k;
            value = v;
            valid = true;
            return;
        }
    }

    @Override
    public boolean valid() {
        return valid;
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
    public void next() throws IOException {
        if (valid) {
            advance();
        }
    }

    @Override
    public void close() {
        valid = false;
        for (Cursor c : sources) {
            c.close();
        }
    }
}
