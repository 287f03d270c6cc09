package perflab.server;

import java.util.concurrent.LinkedBlockingDeque;

/**
 * A bounded stack for ThreadPoolExecutor: the newest task runs first, so under overload fresh requests
 * are served while old ones (whose clients may have given up) wait. TPE only uses offer/poll/take.
 */
final class LifoQueue<E> extends LinkedBlockingDeque<E> {
    private static final long serialVersionUID = 1L;

    LifoQueue(int capacity) {
        super(capacity);
    }

    @Override
    public boolean offer(E e) {
        return offerFirst(e);
    }

    @Override
    public boolean add(E e) {
        addFirst(e);
        return true;
    }
}
