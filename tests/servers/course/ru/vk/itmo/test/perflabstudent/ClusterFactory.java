package ru.vk.itmo.test.perflabstudent;

import ru.vk.itmo.Service;
import ru.vk.itmo.ServiceConfig;
import ru.vk.itmo.test.ServiceFactory;

/** Stage 6: sharding over the cluster list (rendezvous hashing, proxied requests) and the range API. */
@ServiceFactory(stage = 6)
public class ClusterFactory implements ServiceFactory.Factory {
    @Override
    public Service create(ServiceConfig config) {
        return new StudentService(config, true);
    }
}
