package perflab.storage.lsm;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/** CRC32C (hardware-accelerated in the JDK) over arrays and mapped regions; stored as a big-endian u32. */
final class Checksums {
    private Checksums() {
    }

    static int crc(byte[] data, int offset, int length) {
        CRC32C c = new CRC32C();
        c.update(data, offset, length);
        return (int) c.getValue();
    }

    static int crc(ByteBuffer buffer, int offset, int length) {
        CRC32C c = new CRC32C();
        c.update(buffer.slice(offset, length));
        return (int) c.getValue();
    }
}
