package perflab.storage;

public class RocksStorageContractTest extends StorageContractTest {
    @Override
    protected String backend() {
        return "rocksdb";
    }
}
