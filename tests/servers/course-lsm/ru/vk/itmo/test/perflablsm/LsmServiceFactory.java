package ru.vk.itmo.test.perflablsm;

import ru.vk.itmo.Service;
import ru.vk.itmo.ServiceConfig;
import ru.vk.itmo.test.ServiceFactory;

/** Stage 1: one node. */
@ServiceFactory(stage = 1)
public class LsmServiceFactory implements ServiceFactory.Factory {
    @Override
    public Service create(ServiceConfig config) {
        return new LsmService(config);
    }
}
