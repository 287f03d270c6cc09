package perflab.course;

import org.junit.Rule;
import org.junit.Test;
import perflab.testing.TempDir;

import java.io.IOException;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/** Finding factories, Dao classes and the student's packages on stand-in classpaths, and choosing a factory. */
public class FactoryScanTest {
    @Rule
    public final TempDir temp = new TempDir();

    private static final String SERVICE = "new ru.vk.itmo.test.alice.AliceService()";

    /** Two students' code beside the API, as in a course build: alice has stages 1 and 6, bob stage 5. */
    private static final Map<String, String> STUDENTS = StandIns.sources(
            "ru.vk.itmo.test.alice.AliceService", "package ru.vk.itmo.test.alice;\n"
                    + "public class AliceService implements ru.vk.itmo.Service {\n"
                    + "    public java.util.concurrent.CompletableFuture<Void> start() { return null; }\n"
                    + "    public java.util.concurrent.CompletableFuture<Void> stop() { return null; }\n"
                    + "}\n",
            "ru.vk.itmo.test.alice.StageOne", StandIns.factory("ru.vk.itmo.test.alice.StageOne", 1, SERVICE),
            "ru.vk.itmo.test.alice.server.StageSix", StandIns.factory("ru.vk.itmo.test.alice.server.StageSix", 6, SERVICE),
            "ru.vk.itmo.test.alice.NotAFactory", "package ru.vk.itmo.test.alice;\n"
                    + "@ru.vk.itmo.test.ServiceFactory(stage = 7)\n"
                    + "public class NotAFactory {\n"
                    + "}\n",
            "ru.vk.itmo.test.alice.dao.AliceDao", "package ru.vk.itmo.test.alice.dao;\n"
                    + "public class AliceDao implements ru.vk.itmo.dao.Dao<String> {\n"
                    + "    public void close() {}\n"
                    + "}\n",
            "ru.vk.itmo.test.alice.dao.TunedDao", "package ru.vk.itmo.test.alice.dao;\n"
                    + "public final class TunedDao extends AliceDao {\n"
                    + "}\n",
            "ru.vk.itmo.test.alice.dao.Gone", "package ru.vk.itmo.test.alice.dao;\n"
                    + "public class Gone {\n"
                    + "}\n",
            "ru.vk.itmo.test.alice.dao.NeedsGone", "package ru.vk.itmo.test.alice.dao;\n"
                    + "public class NeedsGone extends Gone {\n"
                    + "}\n",
            "ru.vk.itmo.test.bob.BobFactory", StandIns.factory("ru.vk.itmo.test.bob.BobFactory", 5, SERVICE));

    private Path api() throws IOException {
        return StandIns.compile(Files.createDirectories(temp.dir("api")), StandIns.API);
    }

    private Path students(Path api) throws IOException {
        Path dir = StandIns.compile(Files.createDirectories(temp.dir("students")), STUDENTS, api);
        Files.delete(dir.resolve("ru/vk/itmo/test/alice/dao/Gone.class")); // NeedsGone cannot load now
        return dir;
    }

    private static CourseClasspath scan(List<Path> entries, URLClassLoader loader) throws Exception {
        return CourseClasspath.scan(entries, loader, CourseApi.load(loader));
    }

    @Test
    public void findsFactoriesDaoClassesAndTheStudentsPackages() throws Exception {
        Path api = api();
        List<Path> entries = Arrays.asList(api, students(api));
        try (URLClassLoader loader = StandIns.loader(entries)) {
            CourseClasspath cp = scan(entries, loader);
            assertEquals(Arrays.asList("ru.vk.itmo.test.alice.NotAFactory (stage 7, does not implement"
                            + " ru.vk.itmo.test.ServiceFactory.Factory)", "ru.vk.itmo.test.alice.server.StageSix (stage 6)",
                    "ru.vk.itmo.test.bob.BobFactory (stage 5)", "ru.vk.itmo.test.alice.StageOne (stage 1)"),
                    cp.factories.stream().map(Object::toString).collect(Collectors.toList()));
            assertEquals(Arrays.asList("ru.vk.itmo.test.alice.dao.AliceDao", "ru.vk.itmo.test.alice.dao.TunedDao"),
                    cp.daoClasses);
            assertEquals(1, cp.loadFailures.size());
            assertTrue(cp.loadFailures.get(0), cp.loadFailures.get(0).startsWith(
                    "ru.vk.itmo.test.alice.dao.NeedsGone: java.lang.NoClassDefFoundError"));
            assertEquals("ru.vk.itmo.test.alice", CourseClasspath.studentRoot("ru.vk.itmo.test.alice.server.StageSix"));
            assertEquals(Arrays.asList("ru.vk.itmo.test.alice", "ru.vk.itmo.test.alice.dao",
                    "ru.vk.itmo.test.alice.server"), cp.packagesUnder("ru.vk.itmo.test.alice"));
            assertEquals("org.example", CourseClasspath.studentRoot("org.example.Factory"));
        }
    }

    /**
     * Many course students copy the course's Dao interface into their own dao package and implement the copy
     * (14 of 39 in polis-vk/2024-highload-dht): their DAO is a Dao class all the same, and so is one behind an
     * interface of their own named ...Dao. A class of the dao package that implements no such interface (an
     * SSTable, or a DAO implementing only Iterable) is not one: the profile's package heuristic covers it.
     */
    @Test
    public void aDaoImplementingTheStudentsOwnCopyOfTheInterfaceIsADaoClass() throws Exception {
        Path api = api();
        Path erin = StandIns.compile(Files.createDirectories(temp.dir("erin")), StandIns.sources(
                "ru.vk.itmo.test.erin.dao.Dao", "package ru.vk.itmo.test.erin.dao;\n"
                        + "public interface Dao<D> extends java.io.Closeable {\n"
                        + "}\n",
                "ru.vk.itmo.test.erin.dao.ReferenceDao", "package ru.vk.itmo.test.erin.dao;\n"
                        + "public class ReferenceDao implements Dao<String> {\n"
                        + "    public void close() {}\n"
                        + "}\n",
                "ru.vk.itmo.test.erin.dao.SSTable", "package ru.vk.itmo.test.erin.dao;\n"
                        + "final class SSTable {\n"
                        + "}\n",
                "ru.vk.itmo.test.erin.dao.PersistentDao", "package ru.vk.itmo.test.erin.dao;\n"
                        + "public class PersistentDao implements Iterable<String> {\n"
                        + "    public java.util.Iterator<String> iterator() { return null; }\n"
                        + "}\n",
                "ru.vk.itmo.test.erin.lsm.OutMemoryDao", "package ru.vk.itmo.test.erin.lsm;\n"
                        + "public interface OutMemoryDao extends AutoCloseable {\n"
                        + "}\n",
                "ru.vk.itmo.test.erin.lsm.Store", "package ru.vk.itmo.test.erin.lsm;\n"
                        + "public interface Store extends OutMemoryDao {\n"
                        + "}\n",
                "ru.vk.itmo.test.erin.lsm.Base", "package ru.vk.itmo.test.erin.lsm;\n"
                        + "public abstract class Base implements Store {\n"
                        + "}\n",
                "ru.vk.itmo.test.erin.lsm.FileStore", "package ru.vk.itmo.test.erin.lsm;\n"
                        + "public final class FileStore extends Base {\n"
                        + "    public void close() {}\n"
                        + "}\n"), api);
        List<Path> entries = Arrays.asList(api, erin);
        try (URLClassLoader loader = StandIns.loader(entries)) {
            CourseClasspath cp = scan(entries, loader);
            assertEquals(Arrays.asList("ru.vk.itmo.test.erin.dao.ReferenceDao", "ru.vk.itmo.test.erin.lsm.Base",
                    "ru.vk.itmo.test.erin.lsm.FileStore"), cp.daoClasses);
            assertTrue(cp.loadFailures.toString(), cp.loadFailures.isEmpty());
        }
    }

    @Test
    public void choosesTheHighestStageTheGivenStageOrTheNamedClass() throws Exception {
        Path api = api();
        List<Path> entries = Arrays.asList(api, students(api));
        try (URLClassLoader loader = StandIns.loader(entries)) {
            CourseClasspath cp = scan(entries, loader);
            CourseApi courseApi = CourseApi.load(loader);
            assertEquals("ru.vk.itmo.test.alice.server.StageSix (stage 6)",
                    FactoryChoice.choose(options(), cp, loader, courseApi).toString());
            assertEquals("ru.vk.itmo.test.alice.StageOne (stage 1)",
                    FactoryChoice.choose(options("--stage", "1"), cp, loader, courseApi).toString());
            assertEquals("ru.vk.itmo.test.bob.BobFactory (stage 5)", FactoryChoice.choose(
                    options("--factory", "ru.vk.itmo.test.bob.BobFactory"), cp, loader, courseApi).toString());
            String all = "ru.vk.itmo.test.alice.server.StageSix (stage 6), ru.vk.itmo.test.bob.BobFactory (stage 5),"
                    + " ru.vk.itmo.test.alice.StageOne (stage 1)";
            fails("no factory has stage 3 (--stage); the factories on the classpath: " + all,
                    options("--stage", "3"), cp, loader, courseApi);
            fails("factory class ru.vk.itmo.test.alice.NotAFactory does not implement"
                    + " ru.vk.itmo.test.ServiceFactory.Factory",
                    options("--factory", "ru.vk.itmo.test.alice.NotAFactory"), cp, loader, courseApi);
            fails("factory class ru.vk.itmo.test.alice.AliceService is not annotated with"
                    + " @ru.vk.itmo.test.ServiceFactory(stage = N)",
                    options("--factory", "ru.vk.itmo.test.alice.AliceService"), cp, loader, courseApi);
            fails("factory class ru.vk.itmo.test.carol.Factory is not on the classpath; the factories on the"
                    + " classpath: ru.vk.itmo.test.alice.NotAFactory (stage 7, does not implement"
                    + " ru.vk.itmo.test.ServiceFactory.Factory), " + all,
                    options("--factory", "ru.vk.itmo.test.carol.Factory"), cp, loader, courseApi);
        }
    }

    @Test
    public void twoFactoriesOfTheHighestStageAreAnErrorListingThem() throws Exception {
        Path api = api();
        Path carol = StandIns.compile(Files.createDirectories(temp.dir("carol")), StandIns.sources(
                "ru.vk.itmo.test.carol.Service", "package ru.vk.itmo.test.carol;\n"
                        + "public abstract class Service implements ru.vk.itmo.Service {\n"
                        + "}\n",
                "ru.vk.itmo.test.carol.Six", StandIns.factory("ru.vk.itmo.test.carol.Six", 6, "null"),
                "ru.vk.itmo.test.carol.AlsoSix", StandIns.factory("ru.vk.itmo.test.carol.AlsoSix", 6, "null"),
                "ru.vk.itmo.test.carol.Five", StandIns.factory("ru.vk.itmo.test.carol.Five", 5, "null")), api);
        List<Path> entries = Arrays.asList(api, carol);
        try (URLClassLoader loader = StandIns.loader(entries)) {
            CourseClasspath cp = scan(entries, loader);
            fails("2 factories have the highest stage 6: ru.vk.itmo.test.carol.AlsoSix (stage 6),"
                    + " ru.vk.itmo.test.carol.Six (stage 6); choose one with --factory CLASS (all factories:"
                    + " ru.vk.itmo.test.carol.AlsoSix (stage 6), ru.vk.itmo.test.carol.Six (stage 6),"
                    + " ru.vk.itmo.test.carol.Five (stage 5))", options(), cp, loader, CourseApi.load(loader));
        }
    }

    @Test
    public void noFactoryNamesWhatWasScanned() throws Exception {
        Path api = api();
        List<Path> entries = Collections.singletonList(api);
        try (URLClassLoader loader = StandIns.loader(entries)) {
            fails("no class annotated with @ru.vk.itmo.test.ServiceFactory that implements its Factory is on the"
                    + " classpath (scanned 5 classes): add the student's build output (build/classes/java/main)"
                    + " to -cp", options(), scan(entries, loader), loader, CourseApi.load(loader));
        }
    }

    @Test
    public void aFactoryThatCannotLoadIsNamedWithItsError() throws Exception {
        Path api = api();
        Path dir = StandIns.compile(Files.createDirectories(temp.dir("dan")), StandIns.sources(
                "ru.vk.itmo.test.dan.Base", "package ru.vk.itmo.test.dan;\n"
                        + "public class Base {\n"
                        + "}\n",
                "ru.vk.itmo.test.dan.Factory", "package ru.vk.itmo.test.dan;\n"
                        + "@ru.vk.itmo.test.ServiceFactory(stage = 2)\n"
                        + "public class Factory extends Base implements ru.vk.itmo.test.ServiceFactory.Factory {\n"
                        + "    public ru.vk.itmo.Service create(ru.vk.itmo.ServiceConfig c) { return null; }\n"
                        + "}\n"), api);
        Files.delete(dir.resolve("ru/vk/itmo/test/dan/Base.class"));
        List<Path> entries = Arrays.asList(api, dir);
        try (URLClassLoader loader = StandIns.loader(entries)) {
            fails("no class annotated with @ru.vk.itmo.test.ServiceFactory that implements its Factory is on the"
                    + " classpath (scanned 6 classes; classes that mention the annotation but cannot be loaded:"
                    + " ru.vk.itmo.test.dan.Factory: java.lang.NoClassDefFoundError: ru/vk/itmo/test/dan/Base):"
                    + " add the student's build output (build/classes/java/main) to -cp",
                    options(), scan(entries, loader), loader, CourseApi.load(loader));
        }
    }

    @Test
    public void jarsAreScannedLikeDirectories() throws Exception {
        Path api = api();
        Path students = students(api);
        Path jar = temp.dir("students.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
             Stream<Path> files = Files.walk(students)) {
            for (Path f : files.filter(Files::isRegularFile).collect(Collectors.toList())) {
                out.putNextEntry(new JarEntry(students.relativize(f).toString()));
                out.write(Files.readAllBytes(f));
                out.closeEntry();
            }
        }
        List<Path> entries = Arrays.asList(api, jar);
        try (URLClassLoader loader = StandIns.loader(entries)) {
            CourseClasspath cp = scan(entries, loader);
            assertEquals(4, cp.factories.size());
            assertEquals(2, cp.daoClasses.size());
        }
    }

    @Test
    public void theCourseApiMustBeOnTheClasspath() throws Exception {
        try (URLClassLoader loader = StandIns.loader(Collections.emptyList())) {
            CourseApi.load(loader);
            fail("loaded an API that is not there");
        } catch (LaunchException e) {
            assertEquals(1, e.exitStatus);
            assertEquals("the course API class ru.vk.itmo.Service is not on the classpath"
                    + " (java.lang.ClassNotFoundException: ru.vk.itmo.Service): add the student's build output"
                    + " (build/classes/java/main, which holds ru/vk/itmo/*.class) to -cp", e.getMessage());
        }
    }

    @Test
    public void theStudentsEntriesLeaveOutTheLauncherAndItsLib() throws Exception {
        Path course = Files.createDirectories(temp.dir("course"));
        Path launcher = Files.createFile(course.resolve("perflab-course.jar"));
        Path lib = Files.createDirectories(course.resolve("lib"));
        Path oneNio = Files.createFile(lib.resolve("one-nio-1.7.1.jar"));
        Path classes = Files.createDirectories(temp.dir("build/classes/java/main"));
        Path studentJar = Files.createFile(temp.dir("student.jar"));
        String cp = String.join(java.io.File.pathSeparator, launcher.toString(), classes.toString(),
                oneNio.toString(), temp.dir("missing").toString(), studentJar.toString(), classes.toString());
        List<Path> entries = CourseClasspath.studentEntries(cp, launcher);
        assertEquals(Arrays.asList(classes.toRealPath(), studentJar.toRealPath()), entries);
    }

    private static LaunchOptions options(String... more) throws LaunchException {
        List<String> args = new ArrayList<>(Arrays.asList("--port", "8080"));
        args.addAll(Arrays.asList(more));
        return LaunchOptions.parse(args.toArray(new String[0]));
    }

    private static void fails(String message, LaunchOptions options, CourseClasspath cp, ClassLoader loader,
                              CourseApi api) {
        try {
            FactoryChoice.choose(options, cp, loader, api);
            fail("chose a factory");
        } catch (LaunchException e) {
            assertEquals(message, e.getMessage());
            assertEquals(1, e.exitStatus);
        }
    }
}
