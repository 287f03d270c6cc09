package perflab.storage;

import perflab.spec.OptionException;

/** A bad storage option key or value; {@link #key()} names it so callers can print "--key: detail". */
public class InvalidOptionException extends OptionException {
    private static final long serialVersionUID = 1L;

    public InvalidOptionException(String key, String detail) {
        super(key, detail);
    }
}
