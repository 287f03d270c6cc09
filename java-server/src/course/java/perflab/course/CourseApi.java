package perflab.course;

import java.lang.annotation.Annotation;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Future;

/**
 * The course's API (polis-vk highload-dht) as the student's classpath defines it, reached by name only:
 * the launcher compiles against none of it, so any student's copy of these classes works.
 */
final class CourseApi {
    static final String SERVICE = "ru.vk.itmo.Service";
    static final String SERVICE_CONFIG = "ru.vk.itmo.ServiceConfig";
    static final String FACTORY_ANNOTATION = "ru.vk.itmo.test.ServiceFactory";
    static final String FACTORY = FACTORY_ANNOTATION + "$Factory";
    static final String DAO = "ru.vk.itmo.dao.Dao";

    final Class<?> service;
    final Class<? extends Annotation> annotation;
    final Class<?> factory;
    /** null when the classpath has no course Dao interface (dao_classes then holds only the classes that
     * implement a student's own Dao interface: {@link CourseClasspath#implementsDao}). */
    final Class<?> dao;
    private final Constructor<?> configConstructor;
    private final Method stage;
    private final Method create;
    private final Method start;
    private final Method stop;

    private CourseApi(ClassLoader loader) throws LaunchException {
        service = required(loader, SERVICE);
        Class<?> config = required(loader, SERVICE_CONFIG);
        Class<?> annotationType = required(loader, FACTORY_ANNOTATION);
        factory = required(loader, FACTORY);
        Class<?> daoType;
        try {
            daoType = Class.forName(DAO, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            daoType = null;
        }
        dao = daoType;
        if (!annotationType.isAnnotation()) {
            throw LaunchException.startFailed(FACTORY_ANNOTATION + " on the classpath is not an annotation");
        }
        annotation = annotationType.asSubclass(Annotation.class);
        try {
            configConstructor = config.getConstructor(int.class, String.class, List.class, Path.class);
            stage = annotation.getMethod("stage");
            create = factory.getMethod("create", config);
            start = service.getMethod("start");
            stop = service.getMethod("stop");
        } catch (NoSuchMethodException e) {
            throw LaunchException.startFailed("the course API on the classpath is not the one this launcher knows"
                    + " (missing " + e.getMessage() + "): it needs ServiceConfig(int, String, List, Path),"
                    + " @ServiceFactory(stage = N), ServiceFactory.Factory.create(ServiceConfig),"
                    + " Service.start() and Service.stop()");
        }
    }

    static CourseApi load(ClassLoader loader) throws LaunchException {
        return new CourseApi(loader);
    }

    private static Class<?> required(ClassLoader loader, String name) throws LaunchException {
        try {
            return Class.forName(name, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            throw LaunchException.startFailed("the course API class " + name + " is not on the classpath ("
                    + e + "): add the student's build output (build/classes/java/main, which holds"
                    + " ru/vk/itmo/*.class) to -cp");
        }
    }

    /** The class's {@code @ServiceFactory} stage, or -1 when it has none. */
    int stageOf(Class<?> c) {
        Annotation a = c.getAnnotation(annotation);
        if (a == null) {
            return -1;
        }
        try {
            return (Integer) stage.invoke(a);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("cannot read the stage of " + c.getName(), e);
        }
    }

    /** Why this class cannot serve as a factory, or null when it can. */
    String unusableFactory(Class<?> c) {
        if (!factory.isAssignableFrom(c)) {
            return "does not implement " + FACTORY_ANNOTATION + ".Factory";
        }
        if (c.isInterface() || Modifier.isAbstract(c.getModifiers())) {
            return "is abstract";
        }
        try {
            c.getDeclaredConstructor();
        } catch (NoSuchMethodException | LinkageError e) {
            return "has no constructor without arguments";
        }
        return null;
    }

    Object newConfig(int port, String selfUrl, List<String> cluster, Path workingDir) throws Throwable {
        return invoke(() -> configConstructor.newInstance(port, selfUrl, cluster, workingDir));
    }

    /** A service from the factory class (its constructor may be non-public, as in a nested class). */
    Object createService(Class<?> factoryClass, Object config) throws Throwable {
        Constructor<?> constructor = factoryClass.getDeclaredConstructor();
        constructor.setAccessible(true);
        Object f = invoke(constructor::newInstance);
        Object s = invoke(() -> create.invoke(f, config));
        if (s == null) {
            throw new IllegalStateException(factoryClass.getName() + ".create(ServiceConfig) returned null");
        }
        return s;
    }

    /** Calls start(); null when it returned no future (taken as done). */
    Future<?> start(Object s) throws Throwable {
        return (Future<?>) invoke(() -> start.invoke(s));
    }

    Future<?> stop(Object s) throws Throwable {
        return (Future<?>) invoke(() -> stop.invoke(s));
    }

    private interface Call {
        Object run() throws Exception;
    }

    /** Runs a reflective call and rethrows what the called code threw, not the reflection wrapper. */
    private static Object invoke(Call call) throws Throwable {
        try {
            return call.run();
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
