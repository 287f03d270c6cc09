package ru.vk.itmo.test.perflabstudent;

import ru.vk.itmo.Service;
import ru.vk.itmo.ServiceConfig;
import ru.vk.itmo.test.ServiceFactory;

/** Stage 1: one node; the cluster list is ignored and every key is stored here. */
@ServiceFactory(stage = 1)
public class SingleNodeFactory implements ServiceFactory.Factory {
    @Override
    public Service create(ServiceConfig config) {
        return new StudentService(config, false);
    }
}
