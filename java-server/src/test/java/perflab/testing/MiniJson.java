package perflab.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Just enough JSON parsing to check the server's output in tests (objects, arrays, strings, numbers). */
public final class MiniJson {
    private final String s;
    private int p;

    private MiniJson(String s) {
        this.s = s;
    }

    public static Object parse(String text) {
        MiniJson j = new MiniJson(text);
        Object v = j.value();
        j.ws();
        if (j.p != text.length()) {
            throw new IllegalArgumentException("trailing data at " + j.p + " in " + text);
        }
        return v;
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(String text) {
        return (Map<String, Object>) parse(text);
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(Object value) {
        return (Map<String, Object>) value;
    }

    /** The leaves of a JSON object by their dotted names ("storage.flushes", "requests.GET.200"). */
    public static Map<String, Object> leaves(Map<String, Object> object) {
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        leaves("", object, out);
        return out;
    }

    private static void leaves(String prefix, Map<String, Object> object, Map<String, Object> out) {
        for (Map.Entry<String, Object> e : object.entrySet()) {
            String name = prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey();
            if (e.getValue() instanceof Map) {
                leaves(name, object(e.getValue()), out);
            } else {
                out.put(name, e.getValue());
            }
        }
    }

    public static long number(Object v) {
        return ((Number) v).longValue();
    }

    private void ws() {
        while (p < s.length() && Character.isWhitespace(s.charAt(p))) {
            p++;
        }
    }

    private Object value() {
        ws();
        char c = s.charAt(p);
        if (c == '{') {
            p++;
            Map<String, Object> m = new LinkedHashMap<>();
            ws();
            if (s.charAt(p) == '}') {
                p++;
                return m;
            }
            while (true) {
                ws();
                String k = string();
                ws();
                expect(':');
                m.put(k, value());
                ws();
                if (s.charAt(p) == ',') {
                    p++;
                } else {
                    expect('}');
                    return m;
                }
            }
        } else if (c == '[') {
            p++;
            List<Object> l = new ArrayList<>();
            ws();
            if (s.charAt(p) == ']') {
                p++;
                return l;
            }
            while (true) {
                l.add(value());
                ws();
                if (s.charAt(p) == ',') {
                    p++;
                } else {
                    expect(']');
                    return l;
                }
            }
        } else if (c == '"') {
            return string();
        } else if (s.startsWith("true", p)) {
            p += 4;
            return Boolean.TRUE;
        } else if (s.startsWith("false", p)) {
            p += 5;
            return Boolean.FALSE;
        } else if (s.startsWith("null", p)) {
            p += 4;
            return null;
        } else {
            int start = p;
            while (p < s.length() && "+-0123456789.eE".indexOf(s.charAt(p)) >= 0) {
                p++;
            }
            String n = s.substring(start, p);
            if (n.isEmpty()) {
                throw new IllegalArgumentException("unexpected '" + c + "' at " + start + " in " + s);
            }
            if (n.contains(".") || n.contains("e") || n.contains("E")) {
                return Double.parseDouble(n);
            }
            return Long.parseLong(n);
        }
    }

    private String string() {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (true) {
            char c = s.charAt(p++);
            if (c == '"') {
                return sb.toString();
            }
            if (c == '\\') {
                char e = s.charAt(p++);
                switch (e) {
                    case 'n': sb.append('\n'); break;
                    case 't': sb.append('\t'); break;
                    case 'r': sb.append('\r'); break;
                    case 'u': sb.append((char) Integer.parseInt(s.substring(p, p + 4), 16)); p += 4; break;
                    default: sb.append(e);
                }
            } else {
                sb.append(c);
            }
        }
    }

    private void expect(char c) {
        if (s.charAt(p) != c) {
            throw new IllegalArgumentException("expected '" + c + "' at " + p + " in " + s);
        }
        p++;
    }
}
