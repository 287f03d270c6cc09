package perflab.storage.lsm;

import perflab.util.Json;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Describes an lsm data directory without locking it (a running server may own it): the manifest's runs
 * and each table's footer metadata. Tables deleted while we look are reported as missing.
 */
public final class LsmInspector {
    private LsmInspector() {
    }

    public static boolean looksLikeLsm(Path dir) {
        return Files.exists(dir.resolve(FileNames.MANIFEST));
    }

    public static void describe(Path dir, Json j) throws IOException {
        Manifest manifest = Manifest.read(dir);
        j.field("backend", "lsm").field("dir", dir.toAbsolutePath().toString());
        j.field("format_version", TableFormat.VERSION);
        long tables = 0;
        long entries = 0;
        long tombstones = 0;
        long bytes = 0;
        j.key("runs").beginArray();
        int level = 0;
        for (Manifest.RunSpec run : manifest == null ? java.util.Collections.<Manifest.RunSpec>emptyList()
                : manifest.runs) {
            j.beginObject().field("level", level).field("min_seq", run.minSeq).field("max_seq", run.maxSeq)
                    .field("sstables", run.tables.size()).endObject();
            level++;
        }
        j.endArray();
        j.key("sstables").beginArray();
        level = 0;
        for (Manifest.RunSpec run : manifest == null ? java.util.Collections.<Manifest.RunSpec>emptyList()
                : manifest.runs) {
            for (long number : run.tables) {
                Path path = FileNames.table(dir, number);
                j.beginObject().field("file", path.getFileName().toString()).field("level", level)
                        .field("run_min_seq", run.minSeq).field("run_max_seq", run.maxSeq);
                SsTable t;
                try {
                    t = SsTable.open(path, number);
                } catch (NoSuchFileException e) {
                    j.field("missing", true).endObject();
                    continue;
                } catch (IOException e) {
                    j.field("error", e.getMessage()).endObject();
                    continue;
                }
                try {
                    j.field("entries", t.entries).field("tombstones", t.tombstones).field("bytes", t.fileSize)
                            .field("key_value_bytes", t.keyValueBytes).field("blocks", t.blockCount())
                            .field("first_key", Json.printable(t.firstKey))
                            .field("last_key", Json.printable(t.lastKey));
                    tables++;
                    entries += t.entries;
                    tombstones += t.tombstones;
                    bytes += t.fileSize;
                } finally {
                    t.release();
                }
                j.endObject();
            }
            level++;
        }
        j.endArray();
        long walFiles = 0;
        long walBytes = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + FileNames.WAL_SUFFIX)) {
            for (Path f : files) {
                walFiles++;
                try {
                    walBytes += Files.size(f);
                } catch (NoSuchFileException ignored) {
                    walFiles--;
                }
            }
        }
        j.key("totals").beginObject()
                .field("runs", manifest == null ? 0 : manifest.runs.size())
                .field("sstables", tables).field("entries", entries).field("tombstones", tombstones)
                .field("bytes", bytes).field("wal_files", walFiles).field("wal_allocated_bytes", walBytes)
                .endObject();
    }
}
