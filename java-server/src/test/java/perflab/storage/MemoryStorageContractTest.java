package perflab.storage;

public class MemoryStorageContractTest extends StorageContractTest {
    @Override
    protected String backend() {
        return "memory";
    }

    @Override
    protected boolean persistent() {
        return false;
    }
}
