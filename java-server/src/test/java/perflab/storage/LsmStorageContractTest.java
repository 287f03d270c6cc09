package perflab.storage;

public class LsmStorageContractTest extends StorageContractTest {
    @Override
    protected String backend() {
        return "lsm";
    }
}
