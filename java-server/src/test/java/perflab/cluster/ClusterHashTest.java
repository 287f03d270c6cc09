package perflab.cluster;

import org.junit.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * The hash and the routing pinned by test vectors (computed independently with the Python reference in
 * docs/contracts/cluster.md section 7), so another implementation can check itself against the same numbers.
 */
public class ClusterHashTest {
    static final String LIST = "http://127.0.0.1:8080,http://127.0.0.1:8081,http://127.0.0.1:8082";

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    public void fnv1aWithTheMurmurFinalizerMatchesTheVectors() {
        assertEquals(0xcbf29ce484222325L, ClusterHash.fnv1a(ClusterHash.FNV_OFFSET, new byte[0]));
        assertEquals(0xaf63dc4c8601ec8cL, ClusterHash.fnv1a(ClusterHash.FNV_OFFSET, utf8("a"))); // FNV-1a's own vector
        assertEquals(0xefd01f60ba992926L, ClusterHash.hash(new byte[0]));
        assertEquals(0x82a2a958a9bece5bL, ClusterHash.hash(utf8("a")));
        assertEquals(0x139f2b8facce448fL, ClusterHash.hash(utf8("key0")));
        assertEquals(0xe9c562c0fdb23244L, ClusterHash.hash(utf8("hello")));
    }

    @Test
    public void scoresAndRendezvousOrderMatchTheVectors() {
        Topology t = Topology.parse(LIST, null);
        long[] key0 = {0x767fe93a006c23e7L, 0x852dfa1e3efcbf2bL, 0xe8a97cc585e30ae4L};
        for (int i = 0; i < 3; i++) {
            assertEquals(key0[i], ClusterHash.score(ClusterHash.nodeSeed(t.url(i)), utf8("key0")));
        }
        assertArrayEquals(new int[]{2, 1, 0}, t.order(utf8("key0")));
        assertArrayEquals(new int[]{1, 2, 0}, t.order(utf8("key1")));
        assertArrayEquals(new int[]{1, 2, 0}, t.order(utf8("key2")));
        assertArrayEquals(new int[]{0, 1, 2}, t.order(utf8("key42")));
        assertArrayEquals(new int[]{0, 2, 1}, t.order(new byte[]{0, (byte) 0xff}));
        assertEquals("a0af5cce38867472", t.digest());
    }

    @Test
    public void routingDoesNotDependOnTheListsOrderAndSmallerSetsArePrefixes() {
        Topology t = Topology.parse(LIST, null);
        Topology reversed = Topology.parse("http://127.0.0.1:8082,http://127.0.0.1:8081,http://127.0.0.1:8080", null);
        assertEquals(t.digest(), reversed.digest());
        for (int k = 0; k < 1000; k++) {
            byte[] key = utf8("k" + k);
            int[] order = t.order(key);
            int[] other = reversed.order(key);
            for (int i = 0; i < 3; i++) {
                assertEquals(t.url(order[i]), reversed.url(other[i]));
            }
            assertEquals(order[0], t.owner(key));
            for (int from = 1; from <= 3; from++) {
                assertArrayEquals(Arrays.copyOf(order, from), t.replicas(key, from));
            }
        }
    }

    @Test
    public void aMillionKeysSpreadOverThreeNodesWithinFivePercentOfEven() {
        Topology t = Topology.parse(LIST, null);
        int n = 1_000_000;
        long[] owned = new long[3];
        long[] copiesOfTwo = new long[3];
        for (int i = 0; i < n; i++) {
            byte[] key = utf8("key" + i);
            int[] two = t.replicas(key, 2);
            owned[two[0]]++;
            copiesOfTwo[two[0]]++;
            copiesOfTwo[two[1]]++;
        }
        for (int node = 0; node < 3; node++) {
            double share = owned[node] / (n / 3.0);
            assertTrue("from = 1: node " + node + " owns " + owned[node] + " of " + n, Math.abs(share - 1) <= 0.05);
            double share2 = copiesOfTwo[node] / (2.0 * n / 3.0);
            assertTrue("from = 2: node " + node + " holds " + copiesOfTwo[node], Math.abs(share2 - 1) <= 0.05);
        }
        // the exact counts (the Python reference gives the same): a change of hash shows here first
        assertArrayEquals(new long[]{333_633L, 332_752L, 333_615L}, owned);
    }
}
