package perflab.course;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What the student's classpath entries hold: every class name, the {@code @ServiceFactory} factories, the
 * {@code Dao} implementations. Classes are loaded without being initialized (no student code runs), and a
 * class that cannot load (a missing library, a newer class file version) is noted and skipped.
 *
 * <p>A Dao implementation is a class implementing the course's {@code ru.vk.itmo.dao.Dao} or any interface
 * named {@code Dao} or {@code ...Dao}/{@code ...DAO}: many students copy the course's interface into their own
 * package ({@code ru.vk.itmo.test.NAME.dao.Dao}, with its {@code Entry}) and implement that copy, which the
 * course's interface is not assignable from.
 */
final class CourseClasspath {
    /** A class annotated with {@code @ServiceFactory}; {@code problem} is null when it can create services. */
    static final class Factory {
        final String name;
        final int stage;
        final String problem;

        Factory(String name, int stage, String problem) {
            this.name = name;
            this.stage = stage;
            this.problem = problem;
        }

        @Override
        public String toString() {
            return name + " (stage " + stage + (problem == null ? "" : ", " + problem) + ")";
        }
    }

    private static final byte[] FACTORY_MENTION =
            CourseApi.FACTORY_ANNOTATION.replace('.', '/').getBytes(StandardCharsets.US_ASCII);

    final List<String> classNames = new ArrayList<>();
    /** Sorted by stage, highest first, then by name. */
    final List<Factory> factories = new ArrayList<>();
    final List<String> daoClasses = new ArrayList<>();
    /** "name: error" for every class that failed to load. */
    final List<String> loadFailures = new ArrayList<>();
    /** "name: error" for classes that mention @ServiceFactory but failed to load (the likely factories). */
    final List<String> factoryLoadFailures = new ArrayList<>();

    private CourseClasspath() {
    }

    /**
     * The classpath entries that are the student's: all of {@code classPath} except the launcher's own entry
     * and, when that is a jar, the jars in the {@code lib} folder beside it (one-nio and its dependencies).
     */
    static List<Path> studentEntries(String classPath, Path launcherEntry) {
        Path own = real(launcherEntry);
        Path lib = Files.isRegularFile(own) ? own.resolveSibling("lib") : null;
        List<Path> out = new ArrayList<>();
        for (String part : classPath.split(File.pathSeparator)) {
            if (part.isEmpty() || !Files.exists(Paths.get(part))) {
                continue;
            }
            Path p = real(Paths.get(part));
            if (!p.equals(own) && (lib == null || !lib.equals(p.getParent())) && !out.contains(p)) {
                out.add(p);
            }
        }
        return out;
    }

    private static Path real(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }

    static CourseClasspath scan(List<Path> entries, ClassLoader loader, CourseApi api) throws IOException {
        CourseClasspath cp = new CourseClasspath();
        for (Path entry : entries) {
            if (Files.isDirectory(entry)) {
                List<Path> files;
                try (Stream<Path> walk = Files.walk(entry)) {
                    files = walk.filter(f -> f.toString().endsWith(".class")).sorted().collect(Collectors.toList());
                }
                for (Path f : files) {
                    String name = className(entry.relativize(f).toString().replace(File.separatorChar, '/'));
                    if (name != null) {
                        cp.inspect(name, Files.readAllBytes(f), loader, api);
                    }
                }
            } else if (entry.toString().endsWith(".jar")) {
                try (JarFile jar = new JarFile(entry.toFile())) {
                    for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                        JarEntry je = e.nextElement();
                        String name = je.isDirectory() ? null : className(je.getName());
                        if (name != null) {
                            try (InputStream in = jar.getInputStream(je)) {
                                cp.inspect(name, in.readAllBytes(), loader, api);
                            }
                        }
                    }
                }
            }
        }
        cp.factories.sort(Comparator.comparingInt((Factory f) -> -f.stage).thenComparing(f -> f.name));
        cp.daoClasses.sort(null);
        return cp;
    }

    /** a/b/C$D.class -> a.b.C$D; null for module-info, package-info and multi-release copies. */
    private static String className(String path) {
        if (!path.endsWith(".class") || path.startsWith("META-INF/") || path.endsWith("module-info.class")
                || path.endsWith("package-info.class")) {
            return null;
        }
        return path.substring(0, path.length() - ".class".length()).replace('/', '.');
    }

    private void inspect(String name, byte[] bytes, ClassLoader loader, CourseApi api) {
        classNames.add(name);
        Class<?> c;
        try {
            c = Class.forName(name, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            loadFailures.add(name + ": " + e);
            if (contains(bytes, FACTORY_MENTION)) {
                factoryLoadFailures.add(name + ": " + e);
            }
            return;
        }
        try {
            int stage = api.stageOf(c);
            if (stage >= 0) {
                factories.add(new Factory(name, stage, api.unusableFactory(c)));
            }
            if (!c.isInterface() && implementsDao(c, api.dao)) {
                daoClasses.add(name);
            }
        } catch (RuntimeException | LinkageError | java.lang.annotation.AnnotationFormatError e) {
            // an annotation or supertype that does not resolve
            loadFailures.add(name + ": " + e);
        }
    }

    /**
     * Whether {@code c} implements the course's Dao interface ({@code courseDao}, null when the classpath has
     * none) or, through its superclasses and superinterfaces, any interface whose simple name ends in
     * {@code Dao} or {@code DAO} (a student's own copy of the course's, an {@code InMemoryDao} of theirs).
     */
    static boolean implementsDao(Class<?> c, Class<?> courseDao) {
        if (courseDao != null && courseDao.isAssignableFrom(c)) {
            return true;
        }
        Deque<Class<?>> todo = new ArrayDeque<>();
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            todo.addAll(Arrays.asList(k.getInterfaces()));
        }
        Set<Class<?>> seen = new HashSet<>();
        while (!todo.isEmpty()) {
            Class<?> i = todo.pop();
            if (!seen.add(i)) {
                continue;
            }
            String n = i.getName();
            String simple = n.substring(Math.max(n.lastIndexOf('.'), n.lastIndexOf('$')) + 1);
            if (simple.endsWith("Dao") || simple.endsWith("DAO")) {
                return true;
            }
            todo.addAll(Arrays.asList(i.getInterfaces()));
        }
        return false;
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /**
     * The student's own packages: those at or under {@code root} (for a factory in ru.vk.itmo.test.NAME...,
     * ru.vk.itmo.test.NAME: a course build holds every student's code, and the course API beside it).
     */
    List<String> packagesUnder(String root) {
        TreeSet<String> out = new TreeSet<>();
        for (String name : classNames) {
            int dot = name.lastIndexOf('.');
            String pkg = dot < 0 ? "" : name.substring(0, dot);
            if (pkg.equals(root) || pkg.startsWith(root + ".")) {
                out.add(pkg);
            }
        }
        return new ArrayList<>(out);
    }

    /** ru.vk.itmo.test.NAME for a class in the course's student layout, else the class's own package. */
    static String studentRoot(String className) {
        String prefix = "ru.vk.itmo.test.";
        int dot = className.lastIndexOf('.');
        String pkg = dot < 0 ? "" : className.substring(0, dot);
        if (pkg.startsWith(prefix)) {
            int end = pkg.indexOf('.', prefix.length());
            return end < 0 ? pkg : pkg.substring(0, end);
        }
        return pkg;
    }
}
