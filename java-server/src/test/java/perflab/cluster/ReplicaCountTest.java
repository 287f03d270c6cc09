package perflab.cluster;

import org.junit.Test;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.fail;

public class ReplicaCountTest {
    private static String parsed(String ack, String from, String replicas, int size) {
        return ReplicaCount.parse(ack, from, replicas, size).toString();
    }

    private static void rejects(String ack, String from, String replicas, int size, String message) {
        try {
            fail("accepted " + ReplicaCount.parse(ack, from, replicas, size));
        } catch (IllegalArgumentException e) {
            assertEquals(message, e.getMessage());
        }
    }

    @Test
    public void defaultsAreAQuorumOfTheWholeCluster() {
        assertEquals("2/3", parsed(null, null, null, 3));
        assertEquals("1/1", parsed(null, null, null, 1));
        assertEquals("2/2", parsed(null, null, null, 2));
        assertEquals("3/5", parsed(null, null, null, 5));
        assertEquals("1/1", parsed(null, "1", null, 3));
        assertEquals("2/2", parsed(null, "2", null, 3));
        assertEquals("1/3", parsed("1", null, null, 3));
        assertEquals("3/3", parsed("3", "3", null, 3));
        assertEquals("2/3", parsed(null, null, "2/3", 3));
        assertEquals("1/2", parsed(null, null, " 1 / 2 ", 3));
    }

    @Test
    public void badCountsNameTheProblem() {
        rejects("0", null, null, 3, "ack must be at least 1, got 0");
        rejects(null, null, "0/3", 3, "ack must be at least 1, got 0");
        rejects("3", "2", null, 3, "ack must not exceed from: ack=3, from=2");
        rejects(null, null, "4/3", 3, "ack must not exceed from: ack=4, from=3");
        rejects(null, "4", null, 3, "from must be between 1 and the cluster size 3, got 4");
        rejects(null, null, "2/4", 3, "from must be between 1 and the cluster size 3, got 4");
        rejects(null, "0", null, 3, "from must be between 1 and the cluster size 3, got 0");
        rejects("-1", null, null, 3, "ack must be at least 1, got -1");
        rejects("x", null, null, 3, "ack: expected an integer, got 'x'");
        rejects("", null, null, 3, "ack: expected an integer, got ''");
        rejects(null, "2.5", null, 3, "from: expected an integer, got '2.5'");
        rejects(null, null, "2", 3, "replicas: expected ACK/FROM like 2/3, got '2'");
        rejects(null, null, "a/3", 3, "replicas (ack): expected an integer, got 'a'");
        rejects("2", null, "2/3", 3, "give either replicas=ACK/FROM or ack=ACK&from=FROM, not both");
    }
}
