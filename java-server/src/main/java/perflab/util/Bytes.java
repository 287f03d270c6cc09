package perflab.util;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;

/** Unsigned lexicographic byte order (the only key order in the engine) and small encoders. */
public final class Bytes {
    public static final byte[] EMPTY = new byte[0];
    public static final Comparator<byte[]> ORDER = Arrays::compareUnsigned;
    private static final VarHandle BIG_ENDIAN_LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private Bytes() {
    }

    public static int compare(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b);
    }

    /**
     * Compares {@code key} with {@code len} bytes of {@code buf} at {@code pos} without copying them out.
     * Eight bytes at a time: a mapped buffer read is far cheaper per long than per byte.
     */
    public static int compare(byte[] key, ByteBuffer buf, int pos, int len) {
        int n = Math.min(key.length, len);
        int i = 0;
        ByteBuffer be = buf.order() == ByteOrder.BIG_ENDIAN ? buf : null;
        if (be != null) {
            for (; i + 8 <= n; i += 8) {
                long a = longAt(key, i);
                long b = be.getLong(pos + i);
                if (a != b) {
                    return Long.compareUnsigned(a, b);
                }
            }
        }
        for (; i < n; i++) {
            int a = key[i] & 0xff;
            int b = buf.get(pos + i) & 0xff;
            if (a != b) {
                return a - b;
            }
        }
        return key.length - len;
    }

    private static long longAt(byte[] a, int i) {
        return (long) BIG_ENDIAN_LONGS.get(a, i);
    }

    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static String string(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    /** Size of an unsigned LEB128 varint. */
    public static int varintSize(int v) {
        int n = 1;
        while ((v & ~0x7f) != 0) {
            v >>>= 7;
            n++;
        }
        return n;
    }

    public static int putVarint(byte[] dst, int pos, int v) {
        while ((v & ~0x7f) != 0) {
            dst[pos++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        dst[pos++] = (byte) v;
        return pos;
    }

    public static void putVarint(ByteBuffer dst, int v) {
        while ((v & ~0x7f) != 0) {
            dst.put((byte) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        dst.put((byte) v);
    }
}
