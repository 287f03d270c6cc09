package perflab.tools;

import org.rocksdb.LiveFileMetaData;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import perflab.storage.lsm.LsmInspector;
import perflab.util.Json;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

/**
 * Describes a data directory as JSON: backend, tables (file, entries, bytes, first/last key, level) and
 * totals. Works on a directory a server is using (read-only, no lock). For lsm, "level" is the sorted
 * run's position, 0 = newest; for rocksdb it is RocksDB's level.
 */
public final class Inspect {
    private Inspect() {
    }

    public static String describe(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new IOException("not a directory: " + dir);
        }
        Json j = new Json().beginObject();
        if (LsmInspector.looksLikeLsm(dir)) {
            LsmInspector.describe(dir, j);
        } else if (Files.exists(dir.resolve("CURRENT"))) {
            describeRocks(dir, j);
        } else {
            j.field("backend", (String) null).field("dir", dir.toAbsolutePath().toString())
                    .key("sstables").beginArray().endArray()
                    .key("totals").beginObject().field("sstables", 0).field("entries", 0).field("bytes", 0)
                    .endObject();
        }
        return j.endObject().toString();
    }

    private static void describeRocks(Path dir, Json j) throws IOException {
        RocksDB.loadLibrary();
        try (Options options = new Options(); RocksDB db = RocksDB.openReadOnly(options, dir.toString())) {
            List<LiveFileMetaData> files = db.getLiveFilesMetaData();
            files.sort((a, b) -> a.level() != b.level() ? Integer.compare(a.level(), b.level())
                    : a.fileName().compareTo(b.fileName()));
            j.field("backend", "rocksdb").field("dir", dir.toAbsolutePath().toString());
            long entries = 0;
            long deletions = 0;
            long bytes = 0;
            j.key("sstables").beginArray();
            for (LiveFileMetaData f : files) {
                String name = f.fileName().startsWith("/") ? f.fileName().substring(1) : f.fileName();
                j.beginObject().field("file", name).field("level", f.level())
                        .field("entries", f.numEntries()).field("tombstones", f.numDeletions())
                        .field("bytes", f.size())
                        .field("first_key", Json.printable(f.smallestKey()))
                        .field("last_key", Json.printable(f.largestKey()))
                        .endObject();
                entries += f.numEntries();
                deletions += f.numDeletions();
                bytes += f.size();
            }
            j.endArray();
            j.key("totals").beginObject().field("sstables", files.size()).field("entries", entries)
                    .field("tombstones", deletions).field("bytes", bytes).endObject();
        } catch (RocksDBException e) {
            throw new IOException("cannot read RocksDB in " + dir + ": " + e.getMessage(), e);
        }
    }

    /** {@code java -cp 'lib/*' perflab.tools.Inspect DIR}: prints the JSON description. */
    public static void main(String[] args) {
        if (args.length != 1 || args[0].startsWith("-")) {
            System.err.println("usage: perflab.tools.Inspect DATA_DIR");
            System.exit(2);
        }
        try {
            System.out.println(describe(Paths.get(args[0])));
        } catch (IOException | RuntimeException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(1);
        }
    }
}
