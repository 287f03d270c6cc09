package perflab.tools;

import org.junit.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.junit.Assert.assertEquals;

public class KeyOrderTest {
    @Test
    public void enumeratesDecimalStringsInByteOrder() {
        for (long n : new long[]{0, 1, 2, 9, 10, 11, 99, 100, 101, 999, 1000, 1234, 20000, 100001}) {
            List<String> expected = new ArrayList<>();
            for (long i = 0; i < n; i++) {
                expected.add(Long.toString(i));
            }
            Collections.sort(expected); // ASCII digits: String order is byte order
            List<String> actual = new ArrayList<>();
            KeyOrder order = new KeyOrder(n);
            while (order.hasNext()) {
                actual.add(Long.toString(order.nextLong()));
            }
            assertEquals("n=" + n, expected, actual);
        }
    }
}
