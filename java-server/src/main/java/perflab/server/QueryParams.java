package perflab.server;

import java.nio.charset.StandardCharsets;

/**
 * Extracts one query parameter from a request URI straight into bytes. Keys are arbitrary bytes, so
 * %XX escapes become raw bytes (not chars), '+' is a space as in one-nio's decoder, and other characters
 * are UTF-8 encoded. One allocation for the result and none for the common ASCII case in between.
 */
final class QueryParams {
    /** Thrown for a malformed %-escape; the message is sent back with the 400. */
    static final class BadEncodingException extends Exception {
        private static final long serialVersionUID = 1L;

        BadEncodingException(String message) {
            super(message, null, false, false);
        }
    }

    private QueryParams() {
    }

    /** The decoded value of the first {@code name=} parameter, or null when absent. */
    static byte[] get(String uri, String name) throws BadEncodingException {
        int q = uri.indexOf('?');
        if (q < 0) {
            return null;
        }
        int n = uri.length();
        int p = q + 1;
        while (p < n) {
            int amp = uri.indexOf('&', p);
            int end = amp < 0 ? n : amp;
            if (end - p > name.length() && uri.charAt(p + name.length()) == '='
                    && uri.regionMatches(p, name, 0, name.length())) {
                return decode(uri, p + name.length() + 1, end);
            }
            if (end - p == name.length() && uri.regionMatches(p, name, 0, name.length())) {
                return new byte[0]; // "?id" without '=': present but empty
            }
            p = end + 1;
        }
        return null;
    }

    static byte[] decode(String s, int from, int to) throws BadEncodingException {
        boolean plain = true;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c == '%' || c == '+' || c >= 0x80) {
                plain = false;
                break;
            }
        }
        if (plain) {
            byte[] out = new byte[to - from];
            for (int i = from; i < to; i++) {
                out[i - from] = (byte) s.charAt(i);
            }
            return out;
        }
        byte[] out = new byte[(to - from) * 3];
        int len = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= to) {
                    throw new BadEncodingException("bad %-escape at the end of the parameter");
                }
                int hi = Character.digit(s.charAt(i + 1), 16);
                int lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw new BadEncodingException("bad %-escape '" + s.substring(i, i + 3) + "'");
                }
                out[len++] = (byte) (hi << 4 | lo);
                i += 2;
            } else if (c == '+') {
                out[len++] = ' ';
            } else if (c < 0x80) {
                out[len++] = (byte) c;
            } else {
                int end = i + 1;
                if (Character.isHighSurrogate(c) && end < to) {
                    end++;
                }
                byte[] enc = s.substring(i, end).getBytes(StandardCharsets.UTF_8);
                System.arraycopy(enc, 0, out, len, enc.length);
                len += enc.length;
                i = end - 1;
            }
        }
        byte[] result = new byte[len];
        System.arraycopy(out, 0, result, 0, len);
        return result;
    }
}
