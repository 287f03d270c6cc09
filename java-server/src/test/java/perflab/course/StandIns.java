package perflab.course;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;

/** Small stand-ins for the course's API and for students' classes, compiled in the test. */
final class StandIns {
    private StandIns() {
    }

    /** The course API, in the same names and shapes as the course's (written here, not copied). */
    static final Map<String, String> API = sources(
            "ru.vk.itmo.Service", "package ru.vk.itmo;\n"
                    + "public interface Service {\n"
                    + "    java.util.concurrent.CompletableFuture<Void> start() throws java.io.IOException;\n"
                    + "    java.util.concurrent.CompletableFuture<Void> stop() throws java.io.IOException;\n"
                    + "}\n",
            "ru.vk.itmo.ServiceConfig", "package ru.vk.itmo;\n"
                    + "public record ServiceConfig(int selfPort, String selfUrl, java.util.List<String> clusterUrls,\n"
                    + "        java.nio.file.Path workingDir) {\n"
                    + "}\n",
            "ru.vk.itmo.test.ServiceFactory", "package ru.vk.itmo.test;\n"
                    + "@java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.RUNTIME)\n"
                    + "public @interface ServiceFactory {\n"
                    + "    int stage();\n"
                    + "    interface Factory {\n"
                    + "        ru.vk.itmo.Service create(ru.vk.itmo.ServiceConfig config);\n"
                    + "    }\n"
                    + "}\n",
            "ru.vk.itmo.dao.Dao", "package ru.vk.itmo.dao;\n"
                    + "public interface Dao<D> extends java.io.Closeable {\n"
                    + "}\n");

    /** name, source, name, source, ... in order. */
    static Map<String, String> sources(String... nameThenSource) {
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < nameThenSource.length; i += 2) {
            out.put(nameThenSource[i], nameThenSource[i + 1]);
        }
        return out;
    }

    /** A factory class annotated with this stage whose create() returns {@code newService}. */
    static String factory(String name, int stage, String newService) {
        int dot = name.lastIndexOf('.');
        return "package " + name.substring(0, dot) + ";\n"
                + "@ru.vk.itmo.test.ServiceFactory(stage = " + stage + ")\n"
                + "public class " + name.substring(dot + 1) + " implements ru.vk.itmo.test.ServiceFactory.Factory {\n"
                + "    @Override\n"
                + "    public ru.vk.itmo.Service create(ru.vk.itmo.ServiceConfig config) {\n"
                + "        return " + newService + ";\n"
                + "    }\n"
                + "}\n";
    }

    /** Compiles the sources into {@code out} with {@code classpath} (entries beside it); fails on any error. */
    static Path compile(Path out, Map<String, String> sources, Path... classpath) throws IOException {
        Path src = Files.createTempDirectory("perflab-standin-src-");
        try {
            List<String> args = new ArrayList<>(List.of("-d", out.toString(), "--release", "17", "-nowarn"));
            if (classpath.length > 0) {
                StringBuilder cp = new StringBuilder();
                for (Path p : classpath) {
                    cp.append(cp.length() > 0 ? java.io.File.pathSeparator : "").append(p);
                }
                args.add("-cp");
                args.add(cp.toString());
            }
            for (Map.Entry<String, String> e : sources.entrySet()) {
                Path file = src.resolve(e.getKey().replace('.', '/') + ".java");
                Files.createDirectories(file.getParent());
                Files.write(file, e.getValue().getBytes(StandardCharsets.UTF_8));
                args.add(file.toString());
            }
            JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int status = javac.run(null, err, err, args.toArray(new String[0]));
            assertEquals("javac: " + err.toString(StandardCharsets.UTF_8), 0, status);
            return out;
        } finally {
            perflab.testing.TempDir.delete(src);
        }
    }

    /** A loader over these entries alone (and the JDK), as the launcher's would be. */
    static URLClassLoader loader(List<Path> entries) throws IOException {
        URL[] urls = new URL[entries.size()];
        for (int i = 0; i < urls.length; i++) {
            urls[i] = entries.get(i).toUri().toURL();
        }
        return new URLClassLoader(urls, ClassLoader.getPlatformClassLoader());
    }
}
