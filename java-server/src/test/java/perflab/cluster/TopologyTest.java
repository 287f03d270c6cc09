package perflab.cluster;

import org.junit.Test;
import perflab.spec.OptionException;

import java.util.Arrays;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.fail;

public class TopologyTest {
    private static void rejects(String list, String self, String key, String detail) {
        try {
            Topology.parse(list, self);
            fail("accepted " + list + " / " + self);
        } catch (OptionException e) {
            assertEquals(key, e.key());
            assertEquals(detail, e.detail());
        }
    }

    @Test
    public void urlsAreNormalisedAndSelfIsFound() {
        Topology t = Topology.parse(" HTTP://LocalHost:8080/ ,http://127.0.0.1:8081", "http://localhost:8080");
        assertEquals(Arrays.asList("http://localhost:8080", "http://127.0.0.1:8081"), t.urls());
        assertEquals(0, t.self());
        assertEquals(1, Topology.parse("http://a:1,http://b:2", "http://B:2/").self());
        assertEquals(2, t.size());
        assertEquals(16, t.digest().length());
    }

    @Test
    public void badListsAreRejectedNamingTheProblem() {
        rejects("http://a:1,http://A:1/", "http://a:1", "cluster", "duplicate URL http://a:1");
        rejects("http://a:1,,http://b:2", "http://a:1", "cluster",
                "empty URL in the list (expected http://host:port,http://host:port,...)");
        rejects("http://a", "http://a", "cluster", "'http://a' is not of the form http://host:port");
        rejects("https://a:1", "https://a:1", "cluster", "'https://a:1' is not of the form http://host:port");
        rejects("http://a:1/v0", "http://a:1", "cluster", "'http://a:1/v0' is not of the form http://host:port");
        rejects("http://a:1?x=1", "http://a:1", "cluster", "'http://a:1?x=1' is not of the form http://host:port");
        rejects("a:1", "a:1", "cluster", "'a:1' is not of the form http://host:port");
        rejects("http://a:99999", "http://a:99999", "cluster", "'http://a:99999': port must be between 1 and 65535");
        rejects("http://a:1,http://b:2", "http://c:3", "self-url", "http://c:3 is not in --cluster (http://a:1,http://b:2)");
        rejects("http://a:1", "http://a:2", "self-url", "http://a:2 is not in --cluster (http://a:1)");
        rejects("http://a:1", "nonsense", "self-url", "'nonsense' is not of the form http://host:port");
        StringBuilder big = new StringBuilder("http://h:1");
        for (int i = 2; i <= 257; i++) {
            big.append(",http://h:").append(i);
        }
        rejects(big.toString(), "http://h:1", "cluster", "at most 256 nodes, got 257");
    }

    @Test
    public void quorumIsAMajority() {
        assertEquals(1, Topology.quorum(1));
        assertEquals(2, Topology.quorum(2));
        assertEquals(2, Topology.quorum(3));
        assertEquals(3, Topology.quorum(4));
        assertEquals(3, Topology.quorum(5));
    }
}
