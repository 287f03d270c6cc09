package ru.vk.itmo.test.perflablsm;

import ru.vk.itmo.Service;
import ru.vk.itmo.ServiceConfig;
import ru.vk.itmo.test.perflablsm.dao.Dao;
import ru.vk.itmo.test.perflablsm.dao.Entry;
import ru.vk.itmo.test.perflablsm.dao.ReferenceDao;

import java.io.IOException;
import java.nio.file.Files;
import java.util.concurrent.CompletableFuture;

/** The service: its DAO in workingDir, held through the student's own Dao interface, and its HTTP server. */
public final class LsmService implements Service {
    /**
     * Entries per memtable: tiny, so a test's 2000 keys make 125 SSTables, searched one by one on a GET: a DAO
     * that costs CPU, as a student's without Bloom filters or compaction does.
     */
    private static final int FLUSH_ENTRIES = 16;

    private final ServiceConfig config;
    private Dao<byte[], Entry<byte[]>> dao;
    private LsmServer server;

    LsmService(ServiceConfig config) {
        this.config = config;
    }

    @Override
    public synchronized CompletableFuture<Void> start() throws IOException {
        if (server == null) {
            Files.createDirectories(config.workingDir());
            dao = new ReferenceDao(config.workingDir(), FLUSH_ENTRIES);
            server = new LsmServer(config.selfPort(), dao);
            server.start();
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public synchronized CompletableFuture<Void> stop() throws IOException {
        if (server != null) {
            server.stop();
            dao.close();
            server = null;
        }
        return CompletableFuture.completedFuture(null);
    }
}
