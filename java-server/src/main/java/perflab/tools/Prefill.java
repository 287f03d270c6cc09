package perflab.tools;

import perflab.storage.BulkLoader;
import perflab.storage.Entry;
import perflab.storage.InvalidOptionException;
import perflab.storage.Storage;
import perflab.storage.StorageException;
import perflab.storage.StorageFactory;
import perflab.util.Json;
import perflab.util.Units;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * Deterministic bulk load. Key {@code i} is {@code keyPrefix + i} in decimal (exactly what the workload
 * scripts send); its value is {@link #value(long, long, int)}. Keys are generated already in byte order
 * and written straight into table files (one sorted run per {@code runs}), so a multi-gigabyte database
 * takes about as long as writing it to disk.
 */
public final class Prefill {
    private static final byte[] ALPHABET =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".getBytes(StandardCharsets.US_ASCII);
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    static final String DEFAULT_TABLE_SIZE = "32m";

    private Prefill() {
    }

    /** The lab's entry point (JPype): one run, default storage options. Returns the summary JSON. */
    public static String run(Path dir, String backend, long keys, int valueSize, long seed, String keyPrefix)
            throws IOException {
        return run(dir, backend, keys, valueSize, seed, keyPrefix, 1, Collections.emptyMap());
    }

    /**
     * @param runs    sorted runs to spread the keys over (key i goes to run i % runs): more runs, more
     *                tables a read must probe. The lsm server compacts 4 or more runs.
     * @param options storage options (table-size, bloom-bits, ...) as for the server; table-size defaults
     *                to 32m here
     */
    public static String run(Path dir, String backend, long keys, int valueSize, long seed, String keyPrefix,
                             int runs, Map<String, String> options) throws IOException {
        if (keys < 0) {
            throw new IllegalArgumentException("keys: must be >= 0, got " + keys);
        }
        if (valueSize < 0) {
            throw new IllegalArgumentException("value-size: must be >= 0, got " + valueSize);
        }
        if (runs < 1) {
            throw new IllegalArgumentException("runs: must be > 0, got " + runs);
        }
        if ("memory".equals(backend)) {
            throw new IllegalArgumentException("backend: prefill needs a persistent backend (lsm or rocksdb)");
        }
        byte[] prefix = keyPrefix.getBytes(StandardCharsets.UTF_8);
        if (!options.containsKey("table-size")) {
            // several tables even for the lab's 1M-key data set (~110 MB)
            options = new LinkedHashMap<>(options);
            options.put("table-size", DEFAULT_TABLE_SIZE);
        }
        long start = System.nanoTime();
        int tables = 0;
        long perRunKeys = (keys + runs - 1) / runs;
        long kvBytes = 0;
        try (Storage storage = StorageFactory.open(backend, dir, options)) {
            if (!(storage instanceof BulkLoader)) {
                throw new IllegalArgumentException("backend: " + backend + " has no bulk load");
            }
            BulkLoader loader = (BulkLoader) storage;
            for (int r = 0; r < runs; r++) {
                Generator g = new Generator(keys, runs, r, prefix, valueSize, seed);
                tables += loader.ingestSorted(g, perRunKeys, perRunKeys * (prefix.length + 8 + valueSize));
                kvBytes += g.bytes;
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        return new Json().beginObject()
                .field("backend", backend)
                .field("dir", dir.toAbsolutePath().toString())
                .field("keys", keys)
                .field("value_size", valueSize)
                .field("seed", seed)
                .field("key_prefix", keyPrefix)
                .field("runs", runs)
                .field("bytes", kvBytes)
                .field("disk_bytes", directorySize(dir))
                .field("seconds", Math.round(seconds * 1000) / 1000.0)
                .field("sstables", tables)
                .endObject().toString();
    }

    /** The value of key i: {@code size} characters of [A-Za-z0-9-_], from a SplitMix64 stream. */
    public static byte[] value(long seed, long i, int size) {
        byte[] v = new byte[size];
        fillValue(seed, i, v);
        return v;
    }

    /**
     * x = seed ^ (i * 0x9E3779B97F4A7C15); for each 10 characters: x += 0x9E3779B97F4A7C15, z = mix64(x),
     * characters take z's 6-bit groups from the lowest up (mix64 is SplitMix64's finaliser).
     */
    static void fillValue(long seed, long i, byte[] out) {
        long x = seed ^ (i * GOLDEN);
        for (int p = 0; p < out.length; ) {
            x += GOLDEN;
            long z = x;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            z ^= z >>> 31;
            for (int k = 0; k < 10 && p < out.length; k++, z >>>= 6) {
                out[p++] = ALPHABET[(int) (z & 63)];
            }
        }
    }

    /** Yields run r's entries (keys i with i % runs == r) in key order. */
    private static final class Generator implements Iterator<Entry> {
        private final KeyOrder order;
        private final int runs;
        private final int run;
        private final byte[] prefix;
        private final int valueSize;
        private final long seed;
        private long nextIndex = -1;
        long bytes;

        Generator(long keys, int runs, int run, byte[] prefix, int valueSize, long seed) {
            this.order = new KeyOrder(keys);
            this.runs = runs;
            this.run = run;
            this.prefix = prefix;
            this.valueSize = valueSize;
            this.seed = seed;
            advance();
        }

        private void advance() {
            nextIndex = -1;
            while (order.hasNext()) {
                long i = order.nextLong();
                if (i % runs == run) {
                    nextIndex = i;
                    return;
                }
            }
        }

        @Override
        public boolean hasNext() {
            return nextIndex >= 0;
        }

        @Override
        public Entry next() {
            if (nextIndex < 0) {
                throw new NoSuchElementException();
            }
            long i = nextIndex;
            byte[] key = key(prefix, i);
            byte[] value = new byte[valueSize];
            fillValue(seed, i, value);
            bytes += key.length + valueSize;
            advance();
            return new Entry(key, value);
        }
    }

    static byte[] key(byte[] prefix, long i) {
        byte[] digits = Long.toString(i).getBytes(StandardCharsets.US_ASCII);
        byte[] key = new byte[prefix.length + digits.length];
        System.arraycopy(prefix, 0, key, 0, prefix.length);
        System.arraycopy(digits, 0, key, prefix.length, digits.length);
        return key;
    }

    private static long directorySize(Path dir) throws IOException {
        long total = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                if (Files.isRegularFile(f)) {
                    total += Files.size(f);
                }
            }
        }
        return total;
    }

    /**
     * {@code java -cp 'lib/*' perflab.tools.Prefill --data-dir DIR [--backend lsm] --keys N [--value-size 100]
     * [--seed 1] [--key-prefix key] [--runs 1] [--table-size 64m ...]}; prints the summary JSON on stdout.
     */
    public static void main(String[] args) {
        Map<String, String> flags = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.err.println("usage: perflab.tools.Prefill --data-dir DIR --keys N [--backend lsm|rocksdb]"
                        + " [--value-size 100] [--seed 1] [--key-prefix key] [--runs 1] [storage options...]");
                System.exit(0);
            }
            if (!a.startsWith("--") || i + 1 >= args.length && !a.contains("=")) {
                fail(2, "expected --flag value, got '" + a + "'");
            }
            int eq = a.indexOf('=');
            if (eq > 0) {
                flags.put(a.substring(2, eq), a.substring(eq + 1));
            } else {
                flags.put(a.substring(2), args[++i]);
            }
        }
        try {
            String dir = flags.remove("data-dir");
            if (dir == null) {
                fail(2, "--data-dir: required");
            }
            String backend = flags.getOrDefault("backend", "lsm");
            flags.remove("backend");
            long keys = longFlag(flags, "keys", -1);
            if (keys < 0) {
                fail(2, "--keys: required, >= 0");
            }
            int valueSize = (int) Units.parseBytes(flags.getOrDefault("value-size", "100"));
            flags.remove("value-size");
            long seed = longFlag(flags, "seed", 1);
            String prefix = flags.getOrDefault("key-prefix", "key");
            flags.remove("key-prefix");
            int runs = (int) longFlag(flags, "runs", 1);
            System.out.println(run(Paths.get(dir), backend, keys, valueSize, seed, prefix, runs, flags));
        } catch (InvalidOptionException e) {
            fail(2, "--" + e.getMessage());
        } catch (IllegalArgumentException e) {
            fail(2, e.getMessage());
        } catch (StorageException e) {
            fail(1, e.getMessage());
        } catch (IOException e) {
            fail(1, e.toString());
        }
    }

    private static long longFlag(Map<String, String> flags, String name, long def) {
        String v = flags.remove(name);
        if (v == null) {
            return def;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + ": expected an integer, got '" + v + "'");
        }
    }

    private static void fail(int status, String message) {
        System.err.println("error: " + message);
        System.exit(status);
    }
}
