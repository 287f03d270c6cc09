package ru.vk.itmo;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/** Stand-in for the course's service interface (same name and shape), written for perflab's tests. */
public interface Service {
    /** Opens storage and starts listening on the config's port; done when it accepts requests. */
    CompletableFuture<Void> start() throws IOException;

    /** Stops listening and closes storage (flushing it); done when everything is released. */
    CompletableFuture<Void> stop() throws IOException;
}
