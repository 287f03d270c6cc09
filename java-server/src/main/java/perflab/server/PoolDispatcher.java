package perflab.server;

import one.nio.http.Request;

import java.util.Map;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/** async mode: a fixed ThreadPoolExecutor over a bounded queue; when it is full the selector answers 503 at once. */
final class PoolDispatcher implements Dispatcher {
    private final ApiHandler handler;
    private final ThreadPoolExecutor pool;
    private final BlockingQueue<Runnable> queue;
    private final int capacity;
    private final LongAdder rejected = new LongAdder();
    /** Null when events are off. */
    private final QueueFullEpisodes episodes;

    PoolDispatcher(ApiHandler handler, int workers, int capacity, QueueKind kind, QueueFullEpisodes episodes) {
        this.handler = handler;
        this.episodes = episodes;
        this.capacity = capacity;
        this.queue = newQueue(kind, capacity);
        AtomicInteger ids = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(workers, workers, 0, TimeUnit.MILLISECONDS, queue, r -> {
            Thread t = new Thread(r, "worker-" + ids.incrementAndGet());
            t.setDaemon(true);
            return t;
        }, new ThreadPoolExecutor.AbortPolicy());
        pool.prestartAllCoreThreads();
    }

    static BlockingQueue<Runnable> newQueue(QueueKind kind, int capacity) {
        switch (kind) {
            case LINKED:
                return new LinkedBlockingQueue<>(capacity);
            case LIFO:
                return new LifoQueue<>(capacity);
            default:
                return new ArrayBlockingQueue<>(capacity);
        }
    }

    @Override
    public void dispatch(Request request, KvSession session) {
        try {
            pool.execute(() -> handler.handle(request, session));
            if (episodes != null) {
                episodes.accepted();
            }
        } catch (RejectedExecutionException e) {
            rejected.increment();
            if (episodes != null) {
                episodes.rejected();
            }
            handler.reject(request, session, "executor queue is full");
        }
    }

    @Override
    public void stats(Map<String, Object> into) {
        into.put("mode", "async");
        into.put("pool_size", (long) pool.getPoolSize());
        into.put("active_workers", (long) pool.getActiveCount());
        into.put("queue_depth", (long) queue.size());
        into.put("queue_capacity", (long) capacity);
        into.put("rejected", rejected.sum());
        into.put("completed", pool.getCompletedTaskCount());
    }

    @Override
    public void shutdown() {
        pool.shutdown();
        try {
            pool.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
