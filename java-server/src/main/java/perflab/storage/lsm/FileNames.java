package perflab.storage.lsm;

import java.nio.file.Path;

/** Names in a data directory: NNNNNN.sst tables, NNNNNN.wal logs, MANIFEST, *.tmp while being written. */
final class FileNames {
    static final String MANIFEST = "MANIFEST";
    static final String TABLE_SUFFIX = ".sst";
    static final String WAL_SUFFIX = ".wal";
    static final String TEMP_SUFFIX = ".tmp";

    private FileNames() {
    }

    static Path table(Path dir, long number) {
        return dir.resolve(String.format("%06d%s", number, TABLE_SUFFIX));
    }

    static Path wal(Path dir, long number) {
        return dir.resolve(String.format("%06d%s", number, WAL_SUFFIX));
    }

    /** The number in NNNNNN.sst / NNNNNN.wal, or -1. */
    static long number(Path file, String suffix) {
        String name = file.getFileName().toString();
        if (!name.endsWith(suffix)) {
            return -1;
        }
        String digits = name.substring(0, name.length() - suffix.length());
        if (digits.isEmpty() || digits.length() > 18) {
            return -1;
        }
        for (int i = 0; i < digits.length(); i++) {
            if (!Character.isDigit(digits.charAt(i))) {
                return -1;
            }
        }
        return Long.parseLong(digits);
    }
}
