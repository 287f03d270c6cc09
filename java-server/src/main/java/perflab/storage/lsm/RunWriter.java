package perflab.storage.lsm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * Writes a sorted stream into one or more tables of about {@code tableSize} bytes each (a sorted run).
 * On failure or cancellation every file it created is removed, so nothing half-done is left behind.
 */
final class RunWriter {
    private final Path dir;
    private final LongSupplier fileNumbers;
    private final long tableSize;
    private final int blockSize;
    private final int bloomBits;

    RunWriter(Path dir, LongSupplier fileNumbers, long tableSize, int blockSize, int bloomBits) {
        this.dir = dir;
        this.fileNumbers = fileNumbers;
        this.tableSize = tableSize;
        this.blockSize = blockSize;
        this.bloomBits = bloomBits;
    }

    /**
     * @param expectedKeys upper bound of entries (sizes the bloom filters)
     * @param expectedBytes total key+value bytes expected (to split the bloom budget across files)
     */
    List<SsTable> write(Cursor source, long expectedKeys, long expectedBytes, BooleanSupplier cancelled)
            throws IOException {
        List<Path> created = new ArrayList<>();
        List<SsTable> tables = new ArrayList<>();
        long bytesPerKey = expectedKeys > 0 ? Math.max(1, expectedBytes / expectedKeys) : 64;
        long keysPerFile = Math.max(16, tableSize / bytesPerKey + 1);
        long remaining = Math.max(1, expectedKeys);
        SsTableWriter writer = null;
        long number = -1;
        try {
            long n = 0;
            while (source.valid()) {
                if (writer == null) {
                    number = fileNumbers.getAsLong();
                    Path path = FileNames.table(dir, number);
                    created.add(path);
                    writer = new SsTableWriter(path, blockSize, bloomBits, Math.min(remaining, keysPerFile) + 1);
                }
                writer.add(source.key(), source.value());
                source.next();
                remaining = Math.max(1, remaining - 1);
                if ((++n & 1023) == 0 && cancelled.getAsBoolean()) {
                    throw new CancellationException("shutting down");
                }
                if (writer.estimatedSize() >= tableSize) {
                    writer.finish();
                    writer.close();
                    tables.add(SsTable.open(FileNames.table(dir, number), number));
                    writer = null;
                }
            }
            if (writer != null) {
                writer.finish();
                writer.close();
                tables.add(SsTable.open(FileNames.table(dir, number), number));
                writer = null;
            }
            return tables;
        } catch (IOException | RuntimeException | Error e) {
            if (writer != null) {
                try {
                    writer.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            for (SsTable t : tables) {
                t.release();
            }
            for (Path p : created) {
                Files.deleteIfExists(p);
            }
            throw e;
        }
    }
}
