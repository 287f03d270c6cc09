package perflab.storage;

import perflab.events.EventSink;
import perflab.spec.OptionList;
import perflab.spec.OptionScope;
import perflab.storage.lsm.LsmStorage;
import perflab.storage.memory.MemoryStorage;
import perflab.storage.rocksdb.RocksStorage;

import java.nio.file.Path;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Opens any backend by name with the same option keys as the server flags. */
public final class StorageFactory {
    public static final List<String> BACKENDS = OptionList.BACKEND.choices;

    /** Server-only flags a caller may pass along with storage options; they are accepted and ignored here. */
    public static final Set<String> SERVER_KEYS = Collections.unmodifiableSet(new HashSet<>(
            OptionList.keys(OptionScope.SERVER)));

    private StorageFactory() {
    }

    public static Storage open(String backend, Path dir, Map<String, String> options) throws StorageException {
        StorageOptions opts = StorageOptions.parse(options, SERVER_KEYS);
        return open(backend, dir, opts);
    }

    public static Storage open(String backend, Path dir, StorageOptions opts) throws StorageException {
        return open(backend, dir, opts, EventSink.NONE);
    }

    /** @param events where flush, compaction, write_stall and wal_sync events go */
    public static Storage open(String backend, Path dir, StorageOptions opts, EventSink events)
            throws StorageException {
        if (backend == null) {
            throw new InvalidOptionException("backend", "missing (expected one of " + String.join(", ", BACKENDS)
                    + ")");
        }
        switch (backend) {
            case "memory":
                return new MemoryStorage();
            case "lsm":
                return LsmStorage.open(requireDir(backend, dir), opts, events);
            case "rocksdb":
                return RocksStorage.open(requireDir(backend, dir), opts, events);
            default:
                throw new InvalidOptionException("backend", "expected one of " + String.join(", ", BACKENDS)
                        + ", got '" + backend + "'");
        }
    }

    private static Path requireDir(String backend, Path dir) {
        if (dir == null) {
            throw new InvalidOptionException("data-dir", "required for backend " + backend);
        }
        return dir;
    }
}
