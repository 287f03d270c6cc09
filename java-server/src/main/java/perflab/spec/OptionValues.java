package perflab.spec;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** Effective values of a set of options: the given text parsed by each spec, defaults for the rest. */
public final class OptionValues {
    private final Map<OptionSpec, Object> values;

    private OptionValues(Map<OptionSpec, Object> values) {
        this.values = Collections.unmodifiableMap(values);
    }

    /**
     * Parses {@code raw} (key → text) for each of {@code specs}; keys of other specs in {@code raw} are the
     * caller's business (it decides whether they are unknown or belong to someone else).
     *
     * @throws OptionException naming the first bad key, with the spec's message
     */
    public static OptionValues parse(Map<String, String> raw, Collection<OptionSpec> specs) {
        Map<OptionSpec, Object> v = new LinkedHashMap<>();
        for (OptionSpec s : specs) {
            v.put(s, raw.containsKey(s.key) ? s.parse(raw.get(s.key)) : s.effectiveDefault());
        }
        return new OptionValues(v);
    }

    public boolean has(OptionSpec spec) {
        return values.containsKey(spec);
    }

    public Object get(OptionSpec spec) {
        if (!values.containsKey(spec)) {
            throw new IllegalArgumentException(spec + " was not parsed here");
        }
        return values.get(spec);
    }

    public long getLong(OptionSpec spec) {
        return (Long) get(spec);
    }

    public int getInt(OptionSpec spec) {
        return Math.toIntExact(getLong(spec));
    }

    public String getString(OptionSpec spec) {
        return (String) get(spec);
    }

    public boolean isOn(OptionSpec spec) {
        return "on".equals(get(spec));
    }

    /** The parsed options in list order, with their canonical values. */
    public Map<OptionSpec, Object> asMap() {
        return values;
    }
}
