package perflab.server;

import one.nio.net.Session;
import one.nio.net.Socket;
import perflab.storage.Entry;
import perflab.storage.RangeIterator;

import java.io.IOException;

/**
 * A write-queue item that pulls entries from a range iterator only when the socket can take more bytes,
 * so a range larger than the heap streams with a bounded buffer. one-nio calls {@link #write} from the
 * session's selector thread whenever the socket is writable; the session lock serialises those calls.
 * Each entry is one HTTP chunk: {@code <key>\n<value>}.
 */
final class ChunkedRangeStream extends Session.QueueItem {
    private static final int BUFFER = 64 << 10;
    /** Bytes written per call before yielding the selector to other sessions. */
    private static final int WRITE_BUDGET = 1 << 20;
    private static final byte[] LAST_CHUNK = HttpResponses.ascii("0\r\n\r\n");

    private final RangeIterator entries;
    private final Runnable onError;
    private byte[] buf;
    private int pos;
    private int limit;
    private boolean finished;
    private boolean released;

    ChunkedRangeStream(byte[] head, RangeIterator entries, Runnable onError) {
        this.entries = entries;
        this.onError = onError;
        this.buf = new byte[Math.max(BUFFER, head.length)];
        System.arraycopy(head, 0, buf, 0, head.length);
        this.limit = head.length;
    }

    @Override
    public int remaining() {
        return (limit - pos) + (finished ? 0 : 1);
    }

    @Override
    public int write(Socket socket) throws IOException {
        int total = 0;
        while (total < WRITE_BUDGET) {
            if (!finished && limit - pos < BUFFER / 2) {
                fill(); // top up first: one write carries the head, many chunks and possibly the last chunk
            }
            if (pos == limit) {
                break;
            }
            int n = socket.write(buf, pos, limit - pos, 0);
            if (n <= 0) {
                return total > 0 ? total : n;
            }
            pos += n;
            total += n;
            if (pos < limit) {
                break; // the socket is full; one-nio calls again when it drains
            }
        }
        return total;
    }

    /** Appends chunks after the unsent bytes (moved to the front) until the buffer is about full. */
    private void fill() throws IOException {
        if (pos > 0) {
            System.arraycopy(buf, pos, buf, 0, limit - pos);
            limit -= pos;
            pos = 0;
        }
        try {
            while (limit < BUFFER) {
                if (!entries.hasNext()) {
                    append(LAST_CHUNK, 0, LAST_CHUNK.length);
                    finished = true;
                    release();
                    return;
                }
                Entry e = entries.next();
                appendChunk(e.key(), e.value());
            }
        } catch (RuntimeException e) {
            onError.run();
            release();
            throw new IOException("range stream failed: " + e.getMessage(), e);
        }
    }

    private void appendChunk(byte[] key, byte[] value) {
        int size = key.length + 1 + value.length;
        ensure(8 + 2 + size + 2);
        int hexDigits = (32 - Integer.numberOfLeadingZeros(size) + 3) / 4;
        if (hexDigits == 0) {
            hexDigits = 1;
        }
        for (int i = hexDigits - 1; i >= 0; i--) {
            buf[limit++] = (byte) Character.forDigit((size >>> (i * 4)) & 0xf, 16);
        }
        buf[limit++] = '\r';
        buf[limit++] = '\n';
        System.arraycopy(key, 0, buf, limit, key.length);
        limit += key.length;
        buf[limit++] = '\n';
        System.arraycopy(value, 0, buf, limit, value.length);
        limit += value.length;
        buf[limit++] = '\r';
        buf[limit++] = '\n';
    }

    private void append(byte[] src, int off, int len) {
        ensure(len);
        System.arraycopy(src, off, buf, limit, len);
        limit += len;
    }

    private void ensure(int extra) {
        if (limit + extra > buf.length) {
            byte[] bigger = new byte[Math.max(buf.length * 2, limit + extra)];
            System.arraycopy(buf, 0, bigger, 0, limit);
            buf = bigger;
        }
    }

    @Override
    public void release() {
        if (!released) {
            released = true;
            entries.close();
        }
    }
}
