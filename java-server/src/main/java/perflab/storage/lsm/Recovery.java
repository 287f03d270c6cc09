package perflab.storage.lsm;

import perflab.storage.CorruptionException;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * Start-up: loads the manifest and its tables (refusing to start on anything missing or corrupted),
 * removes leftovers of interrupted work, and replays the write-ahead logs of unflushed memtables.
 */
final class Recovery {
    /** The durable state found on disk. */
    static final class Loaded {
        final long nextFile;
        final Version version;
        final List<Path> logs;

        Loaded(long nextFile, Version version, List<Path> logs) {
            this.nextFile = nextFile;
            this.version = version;
            this.logs = logs;
        }
    }

    private Recovery() {
    }

    static Loaded load(Path dir) throws IOException {
        TreeMap<Long, Path> tables = new TreeMap<>();
        TreeMap<Long, Path> logs = new TreeMap<>();
        long maxNumber = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                if (name.endsWith(FileNames.TEMP_SUFFIX)) {
                    // an SSTable or manifest whose writer never finished: not referenced by anything
                    Files.deleteIfExists(f);
                    note("removed unfinished file " + f);
                    continue;
                }
                long n = FileNames.number(f, FileNames.TABLE_SUFFIX);
                if (n >= 0) {
                    tables.put(n, f);
                    maxNumber = Math.max(maxNumber, n);
                }
                n = FileNames.number(f, FileNames.WAL_SUFFIX);
                if (n >= 0) {
                    logs.put(n, f);
                    maxNumber = Math.max(maxNumber, n);
                }
            }
        }
        Manifest manifest = Manifest.read(dir);
        if (manifest == null && !tables.isEmpty()) {
            throw new CorruptionException("missing manifest " + dir.resolve(FileNames.MANIFEST) + ": "
                    + tables.size() + " SSTables exist but nothing says which are live; refusing to start");
        }
        List<SortedRun> runs = new ArrayList<>();
        Set<Long> live = new HashSet<>();
        try {
            if (manifest != null) {
                for (Manifest.RunSpec spec : manifest.runs) {
                    List<SsTable> opened = new ArrayList<>();
                    try {
                        for (long number : spec.tables) {
                            Path path = tables.get(number);
                            if (path == null) {
                                throw new CorruptionException("missing SSTable " + FileNames.table(dir, number)
                                        + " listed in " + dir.resolve(FileNames.MANIFEST) + "; refusing to start");
                            }
                            opened.add(SsTable.open(path, number));
                            live.add(number);
                        }
                    } catch (IOException | RuntimeException e) {
                        for (SsTable t : opened) {
                            t.release();
                        }
                        throw e;
                    }
                    runs.add(new SortedRun(spec.minSeq, spec.maxSeq, opened));
                }
            }
        } catch (IOException | RuntimeException e) {
            for (SortedRun r : runs) {
                for (SsTable t : r.tables) {
                    t.release();
                }
            }
            throw e;
        }
        for (java.util.Map.Entry<Long, Path> t : tables.entrySet()) {
            if (!live.contains(t.getKey())) {
                // written by a flush or compaction that crashed before publishing it; its data is still
                // in the log or in the compaction's inputs
                Files.deleteIfExists(t.getValue());
                note("removed unpublished table " + t.getValue());
            }
        }
        Version version = new Version(runs);
        List<Path> pending = new ArrayList<>();
        for (java.util.Map.Entry<Long, Path> log : logs.entrySet()) {
            if (version.covers(log.getKey())) {
                Files.deleteIfExists(log.getValue()); // flushed before the crash, deletion did not happen
            } else {
                pending.add(log.getValue());
            }
        }
        long nextFile = Math.max(manifest == null ? 1 : manifest.nextFile, maxNumber + 1);
        return new Loaded(nextFile, version, pending);
    }

    /** Replays each log into a memtable and flushes it synchronously, oldest first. */
    static void replayLogs(LsmStorage db, List<Path> logs) throws IOException {
        for (Path path : logs) {
            long number = FileNames.number(path, FileNames.WAL_SUFFIX);
            MappedRegion region = WalReader.map(path);
            Memtable memtable = Memtable.recovered(number, path, region);
            WalReader.Result result;
            try {
                result = WalReader.replay(path, region, memtable::addRecovered);
                if (!result.emptyFile && result.id != number) {
                    throw new CorruptionException("corrupted WAL " + path + ": header names memtable " + result.id);
                }
            } catch (IOException | RuntimeException e) {
                memtable.release();
                throw e;
            }
            if (result.emptyFile) {
                memtable.release();
                Files.deleteIfExists(path);
                continue;
            }
            if (result.tornBytes > 0) {
                note(path + ": dropped a torn record at offset " + result.validEnd + " (" + result.tornBytes
                        + " bytes of an unfinished append)");
            }
            if (result.records > 0) {
                note("replayed " + result.records + " records from " + path);
            }
            db.flusher().flush(memtable, false);
        }
    }

    static void note(String message) {
        System.err.println("lsm: " + message);
    }
}
