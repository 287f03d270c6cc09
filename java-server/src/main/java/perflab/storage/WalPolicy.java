package perflab.storage;

import java.util.Locale;

/** When a write-ahead log record is forced to the device. Semantics per backend: see README. */
public enum WalPolicy {
    /** Never fsync; the OS writes back when it likes. */
    NONE,
    /** A background fsync at most every wal-batch-delay; writers do not wait for it. */
    BATCH,
    /** A write is acknowledged only after an fsync covering it (group commit). */
    ALWAYS;

    public static WalPolicy parse(String s) {
        for (WalPolicy p : values()) {
            if (p.name().equalsIgnoreCase(s.trim())) {
                return p;
            }
        }
        throw new IllegalArgumentException("expected none, batch or always, got '" + s + "'");
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
