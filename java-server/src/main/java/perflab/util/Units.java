package perflab.util;

import java.util.Locale;

/** Parses and prints the size ("4m") and duration ("5ms") syntax shared by flags, properties and storage options. */
public final class Units {
    private static final long K = 1L << 10;
    private static final long M = 1L << 20;
    private static final long G = 1L << 30;

    private Units() {
    }

    /** Bytes with an optional binary suffix k, m, g (also kb, mb, gb; case-insensitive). */
    public static long parseBytes(String text) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        long multiplier = 1;
        if (s.endsWith("b") && s.length() > 1 && !Character.isDigit(s.charAt(s.length() - 2))) {
            s = s.substring(0, s.length() - 1);
        }
        if (s.endsWith("k")) {
            multiplier = K;
        } else if (s.endsWith("m")) {
            multiplier = M;
        } else if (s.endsWith("g")) {
            multiplier = G;
        }
        if (multiplier != 1) {
            s = s.substring(0, s.length() - 1);
        }
        try {
            long n = Long.parseLong(s.trim());
            return Math.multiplyExact(n, multiplier);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("expected a size like 4m, 512k or 1048576, got " + quoteRaw(text));
        }
    }

    /**
     * Milliseconds from "5ms", "2s", "5000us" or a bare number of milliseconds. Microseconds are accepted
     * (the lab prints sub-second durations that way) but must come to whole milliseconds.
     */
    public static long parseMillis(String text) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        long multiplier = 1;
        boolean micros = false;
        if (s.endsWith("us")) {
            s = s.substring(0, s.length() - 2);
            micros = true;
        } else if (s.endsWith("ms")) {
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("s")) {
            s = s.substring(0, s.length() - 1);
            multiplier = 1000;
        }
        long n;
        try {
            n = Math.multiplyExact(Long.parseLong(s.trim()), multiplier);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("expected a duration like 5ms or 2s, got " + quoteRaw(text));
        }
        if (micros) {
            if (n % 1000 != 0) {
                throw new IllegalArgumentException("expected whole milliseconds, got " + quoteRaw(text));
            }
            return n / 1000;
        }
        return n;
    }

    public static int parseInt(String text) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected an integer, got " + quoteRaw(text));
        }
    }

    /** The shortest exact text for a byte count: "4m" for 4194304, "1536" for 1536. */
    public static String formatBytes(long bytes) {
        if (bytes != 0) {
            if (bytes % G == 0) {
                return bytes / G + "g";
            }
            if (bytes % M == 0) {
                return bytes / M + "m";
            }
            if (bytes % K == 0) {
                return bytes / K + "k";
            }
        }
        return Long.toString(bytes);
    }

    /** The shortest exact text for milliseconds: "60s" for 60000, "5ms" for 5, "0ms" for 0. */
    public static String formatMillis(long millis) {
        if (millis != 0 && millis % 1000 == 0) {
            return millis / 1000 + "s";
        }
        return millis + "ms";
    }

    public static String quoteRaw(String text) {
        return "'" + text + "'";
    }
}
