package perflab.storage.lsm;

import java.util.concurrent.atomic.AtomicInteger;

/** Reference counting shared by memtables and tables: a count that reached zero never comes back. */
final class RefCounts {
    private RefCounts() {
    }

    /** Takes a reference unless the count already reached zero (the object is being released). */
    static boolean retain(AtomicInteger refs) {
        while (true) {
            int r = refs.get();
            if (r <= 0) {
                return false;
            }
            if (refs.compareAndSet(r, r + 1)) {
                return true;
            }
        }
    }
}
