package perflab.course;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** Which factory to run: the one --factory names, the one of --stage, or the one with the highest stage. */
final class FactoryChoice {
    private FactoryChoice() {
    }

    static CourseClasspath.Factory choose(LaunchOptions options, CourseClasspath cp, ClassLoader loader,
                                          CourseApi api) throws LaunchException {
        if (options.factory != null) {
            return named(options.factory, cp, loader, api);
        }
        List<CourseClasspath.Factory> usable = cp.factories.stream().filter(f -> f.problem == null)
                .collect(Collectors.toList());
        if (usable.isEmpty()) {
            throw LaunchException.startFailed("no class annotated with @" + CourseApi.FACTORY_ANNOTATION
                    + " that implements its Factory is on the classpath" + found(cp)
                    + ": add the student's build output (build/classes/java/main) to -cp");
        }
        int stage = options.stage != 0 ? options.stage : usable.get(0).stage;
        List<CourseClasspath.Factory> chosen = new ArrayList<>();
        for (CourseClasspath.Factory f : usable) {
            if (f.stage == stage) {
                chosen.add(f);
            }
        }
        if (chosen.size() == 1) {
            return chosen.get(0);
        }
        if (chosen.isEmpty()) {
            throw LaunchException.startFailed("no factory has stage " + stage + " (--stage); the factories on the"
                    + " classpath: " + join(usable));
        }
        throw LaunchException.startFailed(chosen.size() + " factories have " + (options.stage != 0 ? "" : "the highest ")
                + "stage " + stage + ": " + join(chosen) + "; choose one with --factory CLASS (all factories: "
                + join(usable) + ")");
    }

    private static CourseClasspath.Factory named(String name, CourseClasspath cp, ClassLoader loader, CourseApi api)
            throws LaunchException {
        Class<?> c;
        try {
            c = Class.forName(name, false, loader);
        } catch (ClassNotFoundException e) {
            throw LaunchException.startFailed("factory class " + name + " is not on the classpath"
                    + (cp.factories.isEmpty() ? found(cp) : "; the factories on the classpath: " + join(cp.factories)));
        } catch (LinkageError e) {
            throw LaunchException.startFailed("factory class " + name + " cannot be loaded: " + e
                    + (e instanceof UnsupportedClassVersionError ? " (run the launcher on the JDK it was built for)" : ""));
        }
        int stage = api.stageOf(c);
        if (stage < 0) {
            throw LaunchException.startFailed("factory class " + name + " is not annotated with @"
                    + CourseApi.FACTORY_ANNOTATION + "(stage = N)");
        }
        String problem = api.unusableFactory(c);
        if (problem != null) {
            throw LaunchException.startFailed("factory class " + name + " " + problem);
        }
        return new CourseClasspath.Factory(name, stage, null);
    }

    /** What the scan found instead of a usable factory, as the tail of an error message. */
    private static String found(CourseClasspath cp) {
        StringBuilder sb = new StringBuilder(" (scanned " + cp.classNames.size() + " classes");
        List<CourseClasspath.Factory> unusable = cp.factories.stream().filter(f -> f.problem != null)
                .collect(Collectors.toList());
        if (!unusable.isEmpty()) {
            sb.append("; annotated but unusable: ").append(join(unusable));
        }
        if (!cp.factoryLoadFailures.isEmpty()) {
            sb.append("; classes that mention the annotation but cannot be loaded: ")
                    .append(String.join(", ", cp.factoryLoadFailures));
        }
        return sb.append(')').toString();
    }

    private static String join(List<CourseClasspath.Factory> factories) {
        return factories.stream().map(Object::toString).collect(Collectors.joining(", "));
    }
}
