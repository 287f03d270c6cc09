package ru.vk.itmo.test;

import ru.vk.itmo.Service;
import ru.vk.itmo.ServiceConfig;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** Stand-in for the course's factory marker: stage is the homework the annotated factory completes. */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface ServiceFactory {
    int stage();

    /** Creates a (not yet started) service for a configuration. */
    interface Factory {
        Service create(ServiceConfig config);
    }
}
