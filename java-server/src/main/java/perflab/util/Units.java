package perflab.util;

/** Parses the size ("4m") and duration ("5ms") syntax shared by flags, properties and storage options. */
public final class Units {
    private Units() {
    }

    /** Bytes with an optional binary suffix k, m, g (also kb, mb, gb; case-insensitive). */
    public static long parseBytes(String text) {
        String s = text.trim().toLowerCase();
        long multiplier = 1;
        if (s.endsWith("b") && s.length() > 1 && !Character.isDigit(s.charAt(s.length() - 2))) {
            s = s.substring(0, s.length() - 1);
        }
        if (s.endsWith("k")) {
            multiplier = 1L << 10;
        } else if (s.endsWith("m")) {
            multiplier = 1L << 20;
        } else if (s.endsWith("g")) {
            multiplier = 1L << 30;
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

    /** Milliseconds from "5ms", "2s" or a bare number of milliseconds. */
    public static long parseMillis(String text) {
        String s = text.trim().toLowerCase();
        long multiplier = 1;
        if (s.endsWith("ms")) {
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("s")) {
            s = s.substring(0, s.length() - 1);
            multiplier = 1000;
        }
        try {
            return Math.multiplyExact(Long.parseLong(s.trim()), multiplier);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("expected a duration like 5ms or 2s, got " + quoteRaw(text));
        }
    }

    public static int parseInt(String text) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected an integer, got " + quoteRaw(text));
        }
    }

    public static String quoteRaw(String text) {
        return "'" + text + "'";
    }
}
