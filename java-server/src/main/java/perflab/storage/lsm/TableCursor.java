package perflab.storage.lsm;

import perflab.util.Bytes;

import java.io.IOException;
import java.nio.ByteBuffer;

/** Walks a table's entries from a start key, block by block, checking each block's checksum once. */
final class TableCursor implements Cursor {
    private final SsTable table;
    private final ByteBuffer buf;
    private int block;
    private int entryIndex;
    private int entryCount;
    private int blockOffset;
    private int offsetsPos;
    private byte[] key;
    private byte[] value;
    private boolean valid;
    @SuppressWarnings("unused")
    private boolean closed;

    /**
     * Positions at the first key >= from (or the first key when from is null). The caller holds a table
     * reference for the cursor's lifetime (see RunCursor).
     */
    TableCursor(SsTable table, byte[] from) throws IOException {
        this.table = table;
        this.buf = table.buffer();
        try {
            block = from == null ? 0 : table.findBlock(from);
            if (block < 0 || block >= table.blockCount()) {
                valid = false;
                return;
            }
            loadBlock();
            if (from != null) {
                seekInBlock(from);
            } else {
                decode();
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    private void loadBlock() throws IOException {
        blockOffset = table.blockOffset(block);
        int length = table.blockLength(block);
        table.verifyBlock(block, blockOffset, length);
        int end = blockOffset + length - 4;
        entryCount = buf.getInt(end - 4);
        offsetsPos = end - 4 - 4 * entryCount;
        entryIndex = 0;
    }

    private void seekInBlock(byte[] from) throws IOException {
        int lo = 0;
        int hi = entryCount;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int e = blockOffset + buf.getInt(offsetsPos + 4 * mid);
            long kl = TableFormat.varint(buf, e);
            int p = e + TableFormat.varintLength(kl);
            long vt = TableFormat.varint(buf, p);
            p += TableFormat.varintLength(vt);
            if (Bytes.compare(from, buf, p, TableFormat.varintValue(kl)) > 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        entryIndex = lo;
        if (entryIndex >= entryCount) {
            nextBlock();
        } else {
            decode();
        }
    }

    private void decode() {
        int e = blockOffset + buf.getInt(offsetsPos + 4 * entryIndex);
        long kl = TableFormat.varint(buf, e);
        int p = e + TableFormat.varintLength(kl);
        long vt = TableFormat.varint(buf, p);
        p += TableFormat.varintLength(vt);
        key = new byte[TableFormat.varintValue(kl)];
        buf.get(p, key);
        int tag = TableFormat.varintValue(vt);
        if (tag == 0) {
            value = null;
        } else {
            value = new byte[tag - 1];
            buf.get(p + key.length, value);
        }
        valid = true;
    }

    private void nextBlock() throws IOException {
        block++;
        if (block >= table.blockCount()) {
            valid = false;
            key = null;
            value = null;
            return;
        }
        loadBlock();
        decode();
    }

    @Override
    public boolean valid() {
        return valid;
    }

    @Override
    public byte[] key() {
        return key;
    }

    @Override
    public byte[] value() {
        return value;
    }

    @Override
    public void next() throws IOException {
        if (!valid) {
            return;
        }
        entryIndex++;
        if (entryIndex < entryCount) {
            decode();
        } else {
            nextBlock();
        }
    }

    @Override
    public void close() {
        closed = true;
        valid = false;
    }
}
