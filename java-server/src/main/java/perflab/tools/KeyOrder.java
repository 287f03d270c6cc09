package perflab.tools;

import java.util.NoSuchElementException;
import java.util.PrimitiveIterator;

/**
 * The numbers 0..n-1 in the byte order of their decimal strings ("0", "1", "10", "100", ..., "11", ...),
 * which is the order of the keys {@code prefix + i}: lets Prefill write sorted tables without sorting.
 */
final class KeyOrder implements PrimitiveIterator.OfLong {
    private final long max; // n - 1
    private long remaining;
    private long current;
    private boolean zeroPending;

    KeyOrder(long n) {
        this.max = n - 1;
        this.remaining = n;
        this.zeroPending = n > 0;
        this.current = 1;
    }

    @Override
    public boolean hasNext() {
        return remaining > 0;
    }

    @Override
    public long nextLong() {
        if (remaining <= 0) {
            throw new NoSuchElementException();
        }
        remaining--;
        if (zeroPending) {
            zeroPending = false;
            return 0;
        }
        long result = current;
        // advance to the lexicographic successor of current within 1..max
        if (current <= max / 10 && current * 10 <= max) {
            current *= 10;
        } else {
            while (current % 10 == 9 || current + 1 > max) {
                current /= 10;
                if (current == 0) {
                    break;
                }
            }
            current++;
        }
        return result;
    }
}
