package perflab.spec;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One /v0/stats value: its dotted name ("storage.flushes"), kind, unit and help. A pattern name such as
 * "requests.&lt;METHOD&gt;.&lt;STATUS&gt;" stands for a family whose segments in angle brackets vary.
 */
public final class MetricSpec {
    /** counter: cumulative since start (take differences); gauge: instantaneous; label: a text value. */
    public enum Kind {
        COUNTER, GAUGE, LABEL;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public final String name;
    public final Kind kind;
    public final String unit;
    public final String help;
    /** Backends that report it; null when every backend does (storage metrics) or it is not a storage metric. */
    public final List<String> backends;
    /** Reported only by a node started with --cluster. */
    public final boolean clusterOnly;
    private final Pattern pattern;

    private MetricSpec(String name, Kind kind, String unit, String help, List<String> backends, boolean clusterOnly) {
        this.name = name;
        this.kind = kind;
        this.unit = unit;
        this.help = help;
        this.backends = backends;
        this.clusterOnly = clusterOnly;
        this.pattern = name.contains("<") ? Pattern.compile(name.replace(".", "\\.").replaceAll("<[A-Z]+>", "[^.]+"))
                : null;
    }

    static MetricSpec counter(String name, String unit, String help) {
        return new MetricSpec(name, Kind.COUNTER, unit, help, null, false);
    }

    static MetricSpec gauge(String name, String unit, String help) {
        return new MetricSpec(name, Kind.GAUGE, unit, help, null, false);
    }

    static MetricSpec label(String name, String help) {
        return new MetricSpec(name, Kind.LABEL, "text", help, null, false);
    }

    /** The same metric, reported only by these backends. */
    MetricSpec only(String... backendNames) {
        return new MetricSpec(name, kind, unit, help, Collections.unmodifiableList(Arrays.asList(backendNames)),
                clusterOnly);
    }

    /** The same metric, reported only in cluster mode. */
    MetricSpec inCluster() {
        return new MetricSpec(name, kind, unit, help, backends, true);
    }

    public boolean isPattern() {
        return pattern != null;
    }

    /** Whether a concrete dotted name is this metric (or one of its family). */
    public boolean matches(String concrete) {
        return pattern != null ? pattern.matcher(concrete).matches() : name.equals(concrete);
    }

    public boolean reportedBy(String backend) {
        return backends == null || backends.contains(backend);
    }

    /** Whether a server with this backend, in cluster mode or not, reports it. */
    public boolean reportedBy(String backend, boolean cluster) {
        return reportedBy(backend) && (cluster || !clusterOnly);
    }

    /** "storage" for "storage.flushes"; "" for top-level values. */
    public String group() {
        int dot = name.indexOf('.');
        return dot < 0 ? "" : name.substring(0, dot);
    }

    /** "flushes" for "storage.flushes". */
    public String leaf() {
        return name.substring(name.indexOf('.') + 1);
    }
}
