package perflab.testing;

import org.junit.rules.ExternalResource;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/** A fresh directory per test, removed afterwards (JUnit rule). */
public final class TempDir extends ExternalResource {
    private Path root;

    @Override
    protected void before() throws IOException {
        root = Files.createTempDirectory("perflab-test-");
    }

    @Override
    protected void after() {
        try {
            delete(root);
        } catch (IOException e) {
            System.err.println("could not remove " + root + ": " + e);
        }
    }

    public Path root() {
        return root;
    }

    public Path dir(String name) {
        return root.resolve(name);
    }

    public static void delete(Path path) throws IOException {
        if (path == null || !Files.exists(path)) {
            return;
        }
        Files.walkFileTree(path, new SimpleFileVisitor<Path>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                Files.deleteIfExists(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
