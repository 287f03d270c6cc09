package perflab.spec;

import java.util.Locale;

/** Who reads an option: the HTTP server only, or the storage engine (also in-process via StorageFactory). */
public enum OptionScope {
    SERVER, STORAGE;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
