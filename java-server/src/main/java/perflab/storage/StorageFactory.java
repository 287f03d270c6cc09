package perflab.storage;

import perflab.storage.lsm.LsmStorage;
import perflab.storage.memory.MemoryStorage;
import perflab.storage.rocksdb.RocksStorage;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Opens any backend by name with the same option keys as the server flags. */
public final class StorageFactory {
    public static final List<String> BACKENDS = Collections.unmodifiableList(Arrays.asList("lsm", "memory", "rocksdb"));

    /** Server-only flags a caller may pass along with storage options; they are accepted and ignored here. */
    public static final Set<String> SERVER_KEYS = Collections.unmodifiableSet(new HashSet<>(Arrays.asList(
            "host", "port", "data-dir", "backend", "mode", "selectors", "workers", "queue", "queue-kind", "config", "debug-delay")));

    private StorageFactory() {
    }

    public static Storage open(String backend, Path dir, Map<String, String> options) throws StorageException {
        StorageOptions opts = StorageOptions.parse(options, SERVER_KEYS);
        return open(backend, dir, opts);
    }

    public static Storage open(String backend, Path dir, StorageOptions opts) throws StorageException {
        if (backend == null) {
            throw new InvalidOptionException("backend", "missing (expected one of " + BACKENDS + ")");
        }
        switch (backend) {
            case "memory":
                return new MemoryStorage();
            case "lsm":
                return LsmStorage.open(requireDir(backend, dir), opts);
            case "rocksdb":
                return RocksStorage.open(requireDir(backend, dir), opts);
            default:
                throw new InvalidOptionException("backend", "expected one of lsm, memory, rocksdb, got '" + backend + "'");
        }
    }

    private static Path requireDir(String backend, Path dir) {
        if (dir == null) {
            throw new InvalidOptionException("data-dir", "required for backend " + backend);
        }
        return dir;
    }
}
