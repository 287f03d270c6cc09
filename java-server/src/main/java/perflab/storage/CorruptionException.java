package perflab.storage;

/** On-disk data failed a checksum or structural check; the message names the file and the place. */
public class CorruptionException extends StorageException {
    private static final long serialVersionUID = 1L;

    public CorruptionException(String message) {
        super(message);
    }
}
