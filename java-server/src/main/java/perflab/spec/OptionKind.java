package perflab.spec;

import java.util.Locale;

/** How an option's text is read and which canonical unit its value has. */
public enum OptionKind {
    /** A whole number. */
    INT(null, "N"),
    /** Bytes; text takes binary suffixes k, m, g. */
    SIZE("bytes", "SIZE"),
    /** Milliseconds; text takes us (whole milliseconds only), ms, s; a bare number is milliseconds. */
    DURATION("ms", "DUR"),
    /** One of a fixed list of lower-case words. */
    ENUM(null, null),
    /** Free text. */
    STRING(null, "TEXT"),
    /** A file system path. */
    PATH(null, "PATH");

    /** The canonical unit of values (null when the value is not a quantity). */
    public final String unit;
    /** The placeholder shown after the flag in --help (enums list their choices instead). */
    final String metavar;

    OptionKind(String unit, String metavar) {
        this.unit = unit;
        this.metavar = metavar;
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    public boolean numeric() {
        return this == INT || this == SIZE || this == DURATION;
    }
}
