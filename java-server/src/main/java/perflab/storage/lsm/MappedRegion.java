package perflab.storage.lsm;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;

/**
 * A memory-mapped file region that can be unmapped deterministically (a deleted SSTable must not keep its
 * disk space until some GC). On JDK 22+ the mapping belongs to a shared Arena, so a late access fails with
 * IllegalStateException instead of touching unmapped memory; on 17–21 it is released with
 * Unsafe.invokeCleaner. Callers still guarantee no access after close (see {@link Quiescence}).
 */
final class MappedRegion implements AutoCloseable {
    private static final Strategy STRATEGY = Strategy.detect();

    private final MappedByteBuffer buffer;
    private final Object arena;
    private boolean closed;

    private MappedRegion(MappedByteBuffer buffer, Object arena) {
        this.buffer = buffer;
        this.arena = arena;
    }

    static MappedRegion map(FileChannel channel, FileChannel.MapMode mode, long size) throws IOException {
        if (size > Integer.MAX_VALUE) {
            throw new IOException("cannot map " + size + " bytes in one region (limit 2 GiB)");
        }
        return STRATEGY.map(channel, mode, size);
    }

    /** Big-endian, position 0; use absolute accessors only (the buffer is shared between threads). */
    MappedByteBuffer buffer() {
        return buffer;
    }

    int size() {
        return buffer.capacity();
    }

    synchronized void force(int offset, int length) {
        if (!closed && length > 0) {
            buffer.force(offset, length);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        STRATEGY.unmap(this);
    }

    private abstract static class Strategy {
        abstract MappedRegion map(FileChannel channel, FileChannel.MapMode mode, long size) throws IOException;

        abstract void unmap(MappedRegion region);

        static Strategy detect() {
            if (Runtime.version().feature() >= 22) {
                try {
                    return new ArenaStrategy();
                } catch (ReflectiveOperationException e) {
                    // fall through to the JDK 17 way
                }
            }
            return new CleanerStrategy();
        }
    }

    /** JDK 22+: FileChannel.map(mode, offset, size, Arena.ofShared()), unmapped by Arena.close(). */
    private static final class ArenaStrategy extends Strategy {
        private final MethodHandle ofShared;
        private final MethodHandle mapSegment;
        private final MethodHandle asByteBuffer;
        private final MethodHandle closeArena;

        ArenaStrategy() throws ReflectiveOperationException {
            Class<?> arenaType = Class.forName("java.lang.foreign.Arena");
            Class<?> segmentType = Class.forName("java.lang.foreign.MemorySegment");
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            ofShared = lookup.findStatic(arenaType, "ofShared", MethodType.methodType(arenaType));
            mapSegment = lookup.findVirtual(FileChannel.class, "map", MethodType.methodType(segmentType,
                    FileChannel.MapMode.class, long.class, long.class, arenaType));
            asByteBuffer = lookup.findVirtual(segmentType, "asByteBuffer", MethodType.methodType(ByteBuffer.class));
            closeArena = lookup.findVirtual(arenaType, "close", MethodType.methodType(void.class));
        }

        @Override
        MappedRegion map(FileChannel channel, FileChannel.MapMode mode, long size) throws IOException {
            Object arena;
            try {
                arena = ofShared.invoke();
            } catch (Throwable t) {
                throw new IOException("cannot create an arena: " + t, t);
            }
            try {
                Object segment = mapSegment.invoke(channel, mode, 0L, size, arena);
                MappedByteBuffer buffer = (MappedByteBuffer) (ByteBuffer) asByteBuffer.invoke(segment);
                return new MappedRegion(buffer, arena);
            } catch (IOException | RuntimeException | Error e) {
                closeQuietly(arena);
                throw e;
            } catch (Throwable t) {
                closeQuietly(arena);
                throw new IOException(t);
            }
        }

        @Override
        void unmap(MappedRegion region) {
            closeQuietly(region.arena);
        }

        private void closeQuietly(Object arena) {
            try {
                closeArena.invoke(arena);
            } catch (Throwable ignored) {
                // already closed
            }
        }
    }

    /** JDK 17–21: a plain mapping released by sun.misc.Unsafe.invokeCleaner. */
    private static final class CleanerStrategy extends Strategy {
        private final MethodHandle invokeCleaner;

        CleanerStrategy() {
            MethodHandle handle = null;
            try {
                Class<?> unsafeType = Class.forName("sun.misc.Unsafe");
                Field field = unsafeType.getDeclaredField("theUnsafe");
                field.setAccessible(true);
                Object unsafe = field.get(null);
                handle = MethodHandles.lookup().findVirtual(unsafeType, "invokeCleaner",
                        MethodType.methodType(void.class, ByteBuffer.class)).bindTo(unsafe);
            } catch (ReflectiveOperationException | RuntimeException e) {
                // without it, mappings are released when the GC collects them
            }
            invokeCleaner = handle;
        }

        @Override
        MappedRegion map(FileChannel channel, FileChannel.MapMode mode, long size) throws IOException {
            return new MappedRegion(channel.map(mode, 0, size), null);
        }

        @Override
        void unmap(MappedRegion region) {
            if (invokeCleaner != null) {
                try {
                    invokeCleaner.invoke(region.buffer);
                } catch (Throwable ignored) {
                    // left to the GC
                }
            }
        }
    }
}
