package perflab.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * Ports for cluster nodes, which must be known before any node starts (each node's --cluster list names
 * them all). All are held open together so they differ, then released; another process could take one in
 * between, which the harnesses turn into a bind error, not a wrong answer.
 */
public final class FreePorts {
    private FreePorts() {
    }

    public static int[] pick(int n) throws IOException {
        ServerSocket[] held = new ServerSocket[n];
        int[] ports = new int[n];
        try {
            for (int i = 0; i < n; i++) {
                held[i] = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
                ports[i] = held[i].getLocalPort();
            }
        } finally {
            for (ServerSocket s : held) {
                if (s != null) {
                    s.close();
                }
            }
        }
        return ports;
    }

    /** http://127.0.0.1:port,... for the ports. */
    public static String clusterList(int[] ports) {
        StringBuilder sb = new StringBuilder();
        for (int p : ports) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append("http://127.0.0.1:").append(p);
        }
        return sb.toString();
    }
}
