package perflab.storage.lsm;

import perflab.storage.CorruptionException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * The list of live runs, rewritten whole (temp file, fsync, atomic rename, directory fsync) on every
 * flush and compaction. Text, one run per line, newest first, with a checksum line:
 * <pre>
 * perflab-lsm-manifest 1
 * next-file 42
 * run 7 9 000040.sst 000041.sst
 * run 3 5 000030.sst
 * crc32c 1a2b3c4d
 * </pre>
 */
final class Manifest {
    static final String HEADER = "perflab-lsm-manifest";
    static final int VERSION = 1;

    /** One "run" line. */
    static final class RunSpec {
        final long minSeq;
        final long maxSeq;
        final List<Long> tables;

        RunSpec(long minSeq, long maxSeq, List<Long> tables) {
            this.minSeq = minSeq;
            this.maxSeq = maxSeq;
            this.tables = Collections.unmodifiableList(tables);
        }
    }

    final long nextFile;
    final List<RunSpec> runs;

    Manifest(long nextFile, List<RunSpec> runs) {
        this.nextFile = nextFile;
        this.runs = Collections.unmodifiableList(runs);
    }

    static Manifest of(long nextFile, Version version) {
        List<RunSpec> specs = new ArrayList<>();
        for (SortedRun r : version.runs) {
            List<Long> numbers = new ArrayList<>();
            for (SsTable t : r.tables) {
                numbers.add(t.number);
            }
            specs.add(new RunSpec(r.minSeq, r.maxSeq, numbers));
        }
        return new Manifest(nextFile, specs);
    }

    /** Null when the directory has no manifest yet. */
    static Manifest read(Path dir) throws IOException {
        Path file = dir.resolve(FileNames.MANIFEST);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        int crcLine = text.lastIndexOf("crc32c ");
        if (crcLine < 0 || (crcLine > 0 && text.charAt(crcLine - 1) != '\n')) {
            throw corrupt(file, "no checksum line (truncated?)");
        }
        String body = text.substring(0, crcLine);
        String stored = text.substring(crcLine + 7).trim();
        byte[] bodyBytes = body.getBytes(StandardCharsets.UTF_8);
        String actual = String.format("%08x", Checksums.crc(bodyBytes, 0, bodyBytes.length));
        if (!actual.equals(stored)) {
            throw corrupt(file, "checksum mismatch");
        }
        String[] lines = body.split("\n");
        if (lines.length < 2 || !lines[0].startsWith(HEADER + " ")) {
            throw corrupt(file, "bad header");
        }
        int version = parseInt(file, lines[0].substring(HEADER.length() + 1));
        if (version != VERSION) {
            throw corrupt(file, "unsupported version " + version + " (this build reads " + VERSION + ")");
        }
        if (!lines[1].startsWith("next-file ")) {
            throw corrupt(file, "missing next-file line");
        }
        long nextFile = parseLong(file, lines[1].substring(10));
        List<RunSpec> runs = new ArrayList<>();
        for (int i = 2; i < lines.length; i++) {
            String[] parts = lines[i].trim().split(" ");
            if (parts.length < 4 || !parts[0].equals("run")) {
                throw corrupt(file, "bad line " + (i + 1) + ": '" + lines[i] + "'");
            }
            List<Long> tables = new ArrayList<>();
            for (int j = 3; j < parts.length; j++) {
                long n = FileNames.number(dir.resolve(parts[j]), FileNames.TABLE_SUFFIX);
                if (n < 0) {
                    throw corrupt(file, "bad table name '" + parts[j] + "' on line " + (i + 1));
                }
                tables.add(n);
            }
            runs.add(new RunSpec(parseLong(file, parts[1]), parseLong(file, parts[2]), tables));
        }
        return new Manifest(nextFile, runs);
    }

    void write(Path dir) throws IOException {
        StringBuilder sb = new StringBuilder();
        sb.append(HEADER).append(' ').append(VERSION).append('\n');
        sb.append("next-file ").append(nextFile).append('\n');
        for (RunSpec r : runs) {
            sb.append("run ").append(r.minSeq).append(' ').append(r.maxSeq);
            for (long t : r.tables) {
                sb.append(' ').append(FileNames.table(dir, t).getFileName());
            }
            sb.append('\n');
        }
        byte[] body = sb.toString().getBytes(StandardCharsets.UTF_8);
        sb.append("crc32c ").append(String.format(Locale.ROOT, "%08x", Checksums.crc(body, 0, body.length)))
                .append('\n');
        Path temp = dir.resolve(FileNames.MANIFEST + FileNames.TEMP_SUFFIX);
        try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer data = ByteBuffer.wrap(sb.toString().getBytes(StandardCharsets.UTF_8));
            while (data.hasRemaining()) {
                ch.write(data);
            }
            ch.force(true);
        }
        Files.move(temp, dir.resolve(FileNames.MANIFEST), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        syncDirectory(dir);
    }

    /** Makes renames and new files in {@code dir} durable. */
    static void syncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    private static CorruptionException corrupt(Path file, String what) {
        return new CorruptionException("corrupted manifest " + file + ": " + what);
    }

    private static long parseLong(Path file, String s) throws CorruptionException {
        try {
            return Long.parseLong(s.trim());
        } catch (NumberFormatException e) {
            throw corrupt(file, "bad number '" + s + "'");
        }
    }

    private static int parseInt(Path file, String s) throws CorruptionException {
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            throw corrupt(file, "bad number '" + s + "'");
        }
    }
}
