package perflab.spec;

import perflab.util.Units;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * One option: its key (the flag without "--", also the properties and StorageFactory key), kind, default,
 * bounds and help. Parsing, error messages, --help and --options-json are all derived from this, so an
 * option is described in exactly one place ({@link OptionList}).
 * <p>
 * Values are canonical: {@code Long} for int, size (bytes) and duration (milliseconds), {@code String}
 * for enum (lower case), string and path; null for an unset path.
 */
public final class OptionSpec {
    public final String key;
    public final OptionScope scope;
    public final OptionKind kind;
    /** Canonical default; null when computed at start (see {@link #defaultText}) or absent. */
    public final Object defaultValue;
    public final String defaultText;
    public final Long min;
    public final Long max;
    /** Enum choices, in the order --help lists them; null for other kinds. */
    public final List<String> choices;
    public final String help;
    /** Another flag name accepted for this option (e.g. "self" for "self-url"), or null. */
    public final String alias;
    private final Supplier<Object> computedDefault;

    private OptionSpec(String key, OptionScope scope, OptionKind kind, Object defaultValue, String defaultText,
                       Long min, Long max, List<String> choices, String help, Supplier<Object> computedDefault,
                       String alias) {
        if (help.contains("|") || help.contains("\n")) {
            throw new IllegalArgumentException(key + ": help must be one line without '|' (it is a table cell)");
        }
        this.key = key;
        this.scope = scope;
        this.kind = kind;
        this.defaultValue = defaultValue;
        this.defaultText = defaultText;
        this.min = min;
        this.max = max;
        this.choices = choices;
        this.help = help;
        this.computedDefault = computedDefault;
        this.alias = alias;
    }

    static OptionSpec integer(String key, OptionScope scope, long def, long min, long max, String help) {
        return new OptionSpec(key, scope, OptionKind.INT, def, Long.toString(def), min, max, null, help, null, null);
    }

    /** An int whose default is computed at start; {@code defaultText} says how. */
    static OptionSpec integer(String key, OptionScope scope, String defaultText, Supplier<Object> def, long min,
                              long max, String help) {
        return new OptionSpec(key, scope, OptionKind.INT, null, defaultText, min, max, null, help, def, null);
    }

    static OptionSpec size(String key, OptionScope scope, String def, String min, String max, String help) {
        long d = Units.parseBytes(def);
        return new OptionSpec(key, scope, OptionKind.SIZE, d, Units.formatBytes(d), Units.parseBytes(min),
                Units.parseBytes(max), null, help, null, null);
    }

    static OptionSpec duration(String key, OptionScope scope, String def, String min, String max, String help) {
        long d = Units.parseMillis(def);
        return new OptionSpec(key, scope, OptionKind.DURATION, d, Units.formatMillis(d), Units.parseMillis(min),
                Units.parseMillis(max), null, help, null, null);
    }

    /** An enum; the first choice listed is not necessarily the default. */
    static OptionSpec choice(String key, OptionScope scope, String def, List<String> choices, String help) {
        if (!choices.contains(def)) {
            throw new IllegalArgumentException(key + ": default " + def + " is not a choice");
        }
        return new OptionSpec(key, scope, OptionKind.ENUM, def, def, null, null,
                Collections.unmodifiableList(choices), help, null, null);
    }

    static OptionSpec string(String key, OptionScope scope, String def, String help) {
        return new OptionSpec(key, scope, OptionKind.STRING, def, def, null, null, null, help, null, null);
    }

    /** Text without a default; {@code absentText} says what its absence means (the default column). */
    static OptionSpec optionalString(String key, OptionScope scope, String absentText, String help) {
        return new OptionSpec(key, scope, OptionKind.STRING, null, absentText, null, null, null, help, null, null);
    }

    /**
     * The same option, also accepted as {@code --alias} (a name the course uses that would map badly onto
     * the lab's field names, e.g. "self"); the key stays the canonical name everywhere else.
     */
    OptionSpec withAlias(String aliasName) {
        return new OptionSpec(key, scope, kind, defaultValue, defaultText, min, max, choices, help, computedDefault,
                aliasName);
    }

    /** A path without a default; {@code absentText} says what its absence means (the default column). */
    static OptionSpec path(String key, OptionScope scope, String absentText, String help) {
        return new OptionSpec(key, scope, OptionKind.PATH, null, absentText, null, null, null, help, null, null);
    }

    static List<String> words(String... choices) {
        return Arrays.asList(choices);
    }

    /** The canonical value for {@code raw}, or an {@link OptionException} with the uniform message. */
    public Object parse(String raw) {
        if (raw == null) {
            throw new OptionException(key, "missing value");
        }
        switch (kind) {
            case INT: {
                long v;
                try {
                    v = Long.parseLong(raw.trim());
                } catch (NumberFormatException e) {
                    throw new OptionException(key, "expected an integer, got " + Units.quoteRaw(raw));
                }
                return checkBounds(v, raw);
            }
            case SIZE:
                try {
                    return checkBounds(Units.parseBytes(raw), raw);
                } catch (OptionException e) {
                    throw e;
                } catch (IllegalArgumentException e) {
                    throw new OptionException(key, e.getMessage());
                }
            case DURATION:
                try {
                    return checkBounds(Units.parseMillis(raw), raw);
                } catch (OptionException e) {
                    throw e;
                } catch (IllegalArgumentException e) {
                    throw new OptionException(key, e.getMessage());
                }
            case ENUM: {
                String v = raw.trim().toLowerCase(Locale.ROOT);
                if (!choices.contains(v)) {
                    throw new OptionException(key, "expected one of " + String.join(", ", choices) + ", got "
                            + Units.quoteRaw(raw));
                }
                return v;
            }
            default: {
                String v = raw.trim();
                if (v.isEmpty()) {
                    throw new OptionException(key, "expected a non-empty value, got " + Units.quoteRaw(raw));
                }
                return v;
            }
        }
    }

    private Long checkBounds(long v, String raw) {
        if (v < min || v > max) {
            throw new OptionException(key, "must be " + boundsText() + ", got " + Units.quoteRaw(raw));
        }
        return v;
    }

    /** The effective default: the declared one, or the one computed now (e.g. the CPU count). */
    public Object effectiveDefault() {
        return computedDefault != null ? computedDefault.get() : defaultValue;
    }

    /** "between 64k and 1g": the words after "must be " in a bound violation; null when unbounded. */
    public String boundsText() {
        if (min == null) {
            return null;
        }
        return "between " + format(min) + " and " + format(max);
    }

    /** A canonical number as the option's own text syntax ("64k", "5ms", "1024"). */
    public String format(long canonical) {
        switch (kind) {
            case SIZE:
                return Units.formatBytes(canonical);
            case DURATION:
                return Units.formatMillis(canonical);
            default:
                return Long.toString(canonical);
        }
    }

    /** What --help shows after the flag: "SIZE", "sync|async|virtual", ... */
    public String metavar() {
        return kind == OptionKind.ENUM ? String.join("|", choices) : kind.metavar;
    }

    @Override
    public String toString() {
        return "--" + key;
    }
}
