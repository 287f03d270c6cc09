package perflab.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * An exclusive lock on a data directory, held while a Storage is open. The lock file is our own
 * ({@value #FILE_NAME}) so it never collides with RocksDB's LOCK.
 */
public final class DirectoryLock implements AutoCloseable {
    public static final String FILE_NAME = "perflab.lock";

    private final Path file;
    private final FileChannel channel;
    private final FileLock lock;

    private DirectoryLock(Path file, FileChannel channel, FileLock lock) {
        this.file = file;
        this.channel = channel;
        this.lock = lock;
    }

    /** Creates the directory if needed, checks it is writable and takes the lock, or explains why not. */
    public static DirectoryLock acquire(Path dir) throws StorageException {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new StorageException("cannot create data directory " + dir + ": " + describe(e), e);
        }
        if (!Files.isDirectory(dir)) {
            throw new StorageException("data directory " + dir + " is not a directory");
        }
        if (!Files.isWritable(dir)) {
            throw new StorageException("data directory " + dir + " is not writable");
        }
        Path file = dir.resolve(FILE_NAME);
        FileChannel channel;
        try {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new StorageException("data directory " + dir + " is not writable: cannot open " + file + ": "
                    + describe(e), e);
        }
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            closeQuietly(channel);
            throw new StorageException("data directory " + dir + " is already open in this process (lock file "
                    + file + ")");
        } catch (IOException e) {
            closeQuietly(channel);
            throw new StorageException("cannot lock " + file + ": " + describe(e), e);
        }
        if (lock == null) {
            closeQuietly(channel);
            throw new StorageException("data directory " + dir + " is locked by another process (lock file "
                    + file + ")");
        }
        return new DirectoryLock(file, channel, lock);
    }

    public Path file() {
        return file;
    }

    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException ignored) {
            // closing the channel releases it anyway
        }
        closeQuietly(channel);
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing useful to do
        }
    }

    static String describe(IOException e) {
        String msg = e.getMessage();
        return e.getClass().getSimpleName() + (msg == null ? "" : " " + msg);
    }
}
