package perflab.server;

import perflab.storage.RangeIterator;
import perflab.storage.Storage;
import perflab.storage.memory.MemoryStorage;
import perflab.util.Bytes;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Memory storage whose GET of the key "block" waits for a latch: a worker we can hold busy. */
final class BlockingStorage implements Storage {
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final List<String> getOrder = new CopyOnWriteArrayList<>();
    private final MemoryStorage delegate = new MemoryStorage();

    @Override
    public byte[] get(byte[] key) throws IOException {
        String k = Bytes.string(key);
        if (k.equals("block")) {
            entered.countDown();
            try {
                if (!release.await(60, TimeUnit.SECONDS)) {
                    throw new IOException("test never released the blocked request");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
        getOrder.add(k);
        return delegate.get(key);
    }

    @Override
    public void put(byte[] key, byte[] value) {
        delegate.put(key, value);
    }

    @Override
    public void delete(byte[] key) {
        delegate.delete(key);
    }

    @Override
    public RangeIterator range(byte[] from, byte[] to) {
        return delegate.range(from, to);
    }

    @Override
    public void flush() {
    }

    @Override
    public Map<String, Object> stats() {
        return delegate.stats();
    }

    @Override
    public void close() {
        release.countDown();
    }
}
