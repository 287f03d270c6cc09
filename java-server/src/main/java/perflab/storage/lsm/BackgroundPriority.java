package perflab.storage.lsm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Lowers the OS scheduling priority of the calling thread (Linux: a thread is a task with its own nice
 * value) by {@code increment} relative to its current value, so a server started under {@code nice}
 * keeps the same gap. Flush and compaction threads call it at start, so on a machine with few cores
 * request threads preempt them and background merges use the idle cycles (RocksDB offers the same as
 * LowerThreadPoolCPUPriority). Java has no API for it, so the thread's id and nice value are read from
 * /proc/thread-self and {@code renice} is run once per thread; failures are reported once and ignored.
 */
final class BackgroundPriority {
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private BackgroundPriority() {
    }

    static void lowerCurrentThread(int increment) {
        if (increment <= 0) {
            return;
        }
        try {
            Path self = Files.readSymbolicLink(Paths.get("/proc/thread-self")); // "<pid>/task/<tid>"
            String tid = self.getFileName().toString();
            String stat = new String(Files.readAllBytes(Paths.get("/proc/thread-self/stat")),
                    java.nio.charset.StandardCharsets.US_ASCII);
            int current = Integer.parseInt(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[16]);
            int nice = Math.min(19, current + increment);
            Process p = new ProcessBuilder("renice", "-n", Integer.toString(nice), "-p", tid)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                warn("renice did not finish");
            } else if (p.exitValue() != 0) {
                warn("renice exited with " + p.exitValue());
            }
        } catch (IOException | RuntimeException e) {
            warn(e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void warn(String why) {
        if (WARNED.compareAndSet(false, true)) {
            System.err.println("lsm: cannot lower the priority of background threads (" + why
                    + "); they run at normal priority");
        }
    }
}
