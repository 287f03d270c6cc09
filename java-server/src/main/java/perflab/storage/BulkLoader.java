package perflab.storage;

import java.io.IOException;
import java.util.Iterator;

/** Backends that can take a large sorted data set directly as table files (the Prefill fast path). */
public interface BulkLoader {
    /**
     * Loads entries given in strictly increasing key order as the newest data. Must not run concurrently
     * with writes. Returns the number of table files created.
     */
    int ingestSorted(Iterator<Entry> sorted, long expectedKeys, long expectedBytes) throws IOException;
}
