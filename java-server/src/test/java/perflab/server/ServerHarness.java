package perflab.server;

import perflab.storage.Storage;
import perflab.storage.StorageFactory;
import perflab.testing.RawHttp;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** An in-process server on an ephemeral port, for API tests that need many requests quickly. */
final class ServerHarness implements AutoCloseable {
    final RunningServer server;

    private ServerHarness(RunningServer server) {
        this.server = server;
    }

    static ServerHarness start(Path dataDir, String... flags) throws Exception {
        List<String> args = new ArrayList<>(Arrays.asList("--port", "0"));
        args.addAll(Arrays.asList(flags));
        if (dataDir != null) {
            args.add("--data-dir");
            args.add(dataDir.toString());
        }
        Settings s = Settings.parse(args.toArray(new String[0]));
        Storage storage = StorageFactory.open(s.backend, s.dataDir, s.storage);
        return new ServerHarness(RunningServer.start(s, storage));
    }

    static ServerHarness start(Storage storage, String... flags) throws Exception {
        List<String> args = new ArrayList<>(Arrays.asList("--port", "0", "--backend", "memory"));
        args.addAll(Arrays.asList(flags));
        return new ServerHarness(RunningServer.start(Settings.parse(args.toArray(new String[0])), storage));
    }

    int port() {
        return server.port();
    }

    RawHttp connect() throws IOException {
        return new RawHttp(port());
    }

    @Override
    public void close() {
        server.stop();
    }
}
