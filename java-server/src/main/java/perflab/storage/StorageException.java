package perflab.storage;

import java.io.IOException;

/** A storage failure whose message is fit for an operator: it names the file or directory at fault. */
public class StorageException extends IOException {
    private static final long serialVersionUID = 1L;

    public StorageException(String message) {
        super(message);
    }

    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }
}
