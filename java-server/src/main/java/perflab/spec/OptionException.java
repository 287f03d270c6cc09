package perflab.spec;

/** A bad option value or key; {@link #key()} names it so callers can print "--key: detail". */
public class OptionException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String key;
    private final String detail;

    public OptionException(String key, String detail) {
        super(key + ": " + detail);
        this.key = key;
        this.detail = detail;
    }

    public String key() {
        return key;
    }

    public String detail() {
        return detail;
    }
}
