package perflab.storage.lsm;

import java.io.IOException;

/**
 * Walks a sorted run table after table. Holds a reference on every table of the run from construction
 * (made while the caller is inside the read guard, so none can have been released yet) until close.
 */
final class RunCursor implements Cursor {
    private final SortedRun run;
    private int tableIndex;
    private TableCursor current;
    private boolean closed;

    RunCursor(SortedRun run, byte[] from) throws IOException {
        this.run = run;
        int retained = 0;
        try {
            for (SsTable t : run.tables) {
                if (!t.retain()) {
                    throw new IllegalStateException("table " + t + " released under a reader");
                }
                retained++;
            }
            tableIndex = run.firstTableFrom(from);
            if (tableIndex < run.tables.size()) {
                current = new TableCursor(run.tables.get(tableIndex), from);
                skipExhausted();
            }
        } catch (IOException | RuntimeException e) {
            for (int i = 0; i < retained; i++) {
                run.tables.get(i).release();
            }
            closed = true;
            throw e;
        }
    }

    private void skipExhausted() throws IOException {
        while (current != null && !current.valid()) {
            current.close();
            tableIndex++;
            current = tableIndex < run.tables.size() ? new TableCursor(run.tables.get(tableIndex), null) : null;
        }
    }

    @Override
    public boolean valid() {
        return current != null && current.valid();
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
    public void next() throws IOException {
        if (current != null) {
            current.next();
            skipExhausted();
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (current != null) {
            current.close();
            current = null;
        }
        for (SsTable t : run.tables) {
            t.release();
        }
    }
}
