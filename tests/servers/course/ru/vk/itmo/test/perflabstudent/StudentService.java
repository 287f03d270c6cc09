package ru.vk.itmo.test.perflabstudent;

import ru.vk.itmo.Service;
import ru.vk.itmo.ServiceConfig;
import ru.vk.itmo.test.perflabstudent.dao.SimpleDao;

import java.io.IOException;
import java.nio.file.Files;
import java.util.concurrent.CompletableFuture;

/** The service a factory creates: its storage in workingDir and its HTTP server on selfPort. */
public final class StudentService implements Service {
    private final ServiceConfig config;
    private final boolean clustered;
    private SimpleDao dao;
    private StudentServer server;

    StudentService(ServiceConfig config, boolean clustered) {
        this.config = config;
        this.clustered = clustered;
    }

    @Override
    public synchronized CompletableFuture<Void> start() throws IOException {
        if (server == null) {
            Files.createDirectories(config.workingDir());
            dao = new SimpleDao(config.workingDir());
            server = new StudentServer(config, dao, clustered);
            server.start();
        }
        return CompletableFuture.completedFuture(null);
    }

    /** Stops the server, then closes the storage: what was acknowledged is on disk when this returns. */
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
