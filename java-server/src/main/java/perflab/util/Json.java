package perflab.util;

import java.util.Map;

/** A minimal streaming JSON writer: enough for one-line events and /v0/stats, no dependency. */
public final class Json {
    private final StringBuilder out;
    private boolean needComma;

    public Json() {
        this(new StringBuilder(256));
    }

    public Json(StringBuilder out) {
        this.out = out;
    }

    public Json beginObject() {
        comma();
        out.append('{');
        needComma = false;
        return this;
    }

    public Json endObject() {
        out.append('}');
        needComma = true;
        return this;
    }

    public Json beginArray() {
        comma();
        out.append('[');
        needComma = false;
        return this;
    }

    public Json endArray() {
        out.append(']');
        needComma = true;
        return this;
    }

    /** Writes a key; the next value call supplies its value. */
    public Json key(String name) {
        comma();
        quote(name);
        out.append(':');
        needComma = false;
        return this;
    }

    public Json value(String s) {
        comma();
        if (s == null) {
            out.append("null");
        } else {
            quote(s);
        }
        needComma = true;
        return this;
    }

    public Json value(long v) {
        comma();
        out.append(v);
        needComma = true;
        return this;
    }

    public Json value(double v) {
        comma();
        if (Double.isFinite(v)) {
            out.append(v);
        } else {
            out.append("null");
        }
        needComma = true;
        return this;
    }

    public Json value(boolean v) {
        comma();
        out.append(v);
        needComma = true;
        return this;
    }

    /** Writes Numbers, Booleans, Strings, Maps and nulls; anything else as its toString(). */
    public Json value(Object v) {
        if (v == null) {
            comma();
            out.append("null");
            needComma = true;
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            value(((Number) v).longValue());
        } else if (v instanceof Number) {
            value(((Number) v).doubleValue());
        } else if (v instanceof Boolean) {
            value(((Boolean) v).booleanValue());
        } else if (v instanceof Map) {
            beginObject();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                key(String.valueOf(e.getKey())).value(e.getValue());
            }
            endObject();
        } else {
            value(v.toString());
        }
        return this;
    }

    public Json field(String name, Object v) {
        return key(name).value(v);
    }

    public Json field(String name, long v) {
        return key(name).value(v);
    }

    public Json field(String name, String v) {
        return key(name).value(v);
    }

    @Override
    public String toString() {
        return out.toString();
    }

    private void comma() {
        if (needComma) {
            out.append(',');
        }
    }

    private void quote(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    /** Renders bytes as a JSON-safe string: UTF-8 when printable, otherwise with \xNN escapes. */
    public static String printable(byte[] bytes) {
        if (bytes == null) {
            return null;
        }
        StringBuilder sb = new StringBuilder(bytes.length);
        for (byte b : bytes) {
            int c = b & 0xff;
            if (c >= 0x20 && c < 0x7f && c != '\\') {
                sb.append((char) c);
            } else {
                sb.append(String.format("\\x%02x", c));
            }
        }
        return sb.toString();
    }
}
