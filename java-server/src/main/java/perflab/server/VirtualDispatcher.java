package perflab.server;

import one.nio.http.Request;

import java.util.Map;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * virtual mode: one virtual thread per request. The jar targets Java 17, so the JDK 21 API is reached
 * through a MethodHandle. In-flight requests are capped at --queue (503 beyond) so that overload cannot
 * grow memory without bound, the same promise async mode makes.
 */
final class VirtualDispatcher implements Dispatcher {
    private final ApiHandler handler;
    private final ExecutorService executor;
    private final Semaphore permits;
    private final int limit;
    private final LongAdder rejected = new LongAdder();
    private final LongAdder completed = new LongAdder();
    /** Null when events are off. */
    private final QueueFullEpisodes episodes;

    VirtualDispatcher(ApiHandler handler, int limit, QueueFullEpisodes episodes) {
        this.handler = handler;
        this.episodes = episodes;
        this.limit = limit;
        this.permits = new Semaphore(limit);
        this.executor = newVirtualThreadPerTaskExecutor();
    }

    /** Null when the running JVM has no virtual threads. */
    static String unsupportedReason() {
        if (Runtime.version().feature() < 21) {
            return "--mode virtual needs JDK 21+, this is " + System.getProperty("java.version");
        }
        return null;
    }

    private static ExecutorService newVirtualThreadPerTaskExecutor() {
        try {
            MethodHandle factory = MethodHandles.publicLookup().findStatic(java.util.concurrent.Executors.class,
                    "newVirtualThreadPerTaskExecutor", MethodType.methodType(ExecutorService.class));
            return (ExecutorService) factory.invoke();
        } catch (Throwable e) {
            throw new IllegalStateException("--mode virtual needs JDK 21+, this is "
                    + System.getProperty("java.version") + " (" + e + ")", e);
        }
    }

    @Override
    public void dispatch(Request request, KvSession session) {
        if (!permits.tryAcquire()) {
            rejected.increment();
            if (episodes != null) {
                episodes.rejected();
            }
            handler.reject(request, session, "in-flight request limit reached");
            return;
        }
        if (episodes != null) {
            episodes.accepted();
        }
        try {
            executor.execute(() -> {
                try {
                    handler.handle(request, session);
                } finally {
                    permits.release();
                    completed.increment();
                }
            });
        } catch (RejectedExecutionException e) {
            permits.release();
            rejected.increment();
            handler.reject(request, session, "shutting down");
        }
    }

    @Override
    public void stats(Map<String, Object> into) {
        int inFlight = limit - permits.availablePermits();
        into.put("mode", "virtual");
        into.put("pool_size", (long) inFlight);
        into.put("active_workers", (long) inFlight);
        into.put("queue_depth", 0L);
        into.put("queue_capacity", (long) limit);
        into.put("rejected", rejected.sum());
        into.put("completed", completed.sum());
    }

    @Override
    public void shutdown() {
        executor.shutdown();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
