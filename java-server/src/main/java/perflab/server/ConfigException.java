package perflab.server;

/** A bad flag or value: the server prints "error: " + message and exits with status 2. */
final class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;

    ConfigException(String message) {
        super(message);
    }

    static ConfigException forFlag(String flag, String detail) {
        return new ConfigException("--" + flag + ": " + detail);
    }
}
