package perflab.storage.lsm;

/**
 * Write-ahead log file format, version 1 (big-endian):
 * <pre>
 * header (16)  u32 magic "PLWL" | u32 version | u64 memtable id
 * record*      u32 payloadLength | u32 crc32c(payload) | payload
 *              payload = u8 type (1 put, 2 delete) | varint keyLength | key | value (rest of the payload)
 * tail         zeros (the file has a fixed size, sparse until written, and is mapped)
 * </pre>
 * A writer fills crc and payload first and stores the length last, behind a release fence, so a process
 * killed mid-append leaves a zero length: the log simply ends there.
 */
final class WalFormat {
    static final int MAGIC = 0x504C574C; // "PLWL"
    static final int VERSION = 1;
    static final int HEADER = 16;
    static final int RECORD_HEADER = 8;
    static final byte PUT = 1;
    static final byte DELETE = 2;

    private WalFormat() {
    }
}
