package io.rnbd.archcheck;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** OSGi manifest headers ({@code Import-Package}, {@code Provide-Capability}, ...) as clauses. */
final class Headers {
    /**
     * One clause: its names (packages, or the namespace), attributes (typed ones by their bare
     * name, lists split) and directives.
     */
    record Clause(List<String> names, Map<String, List<String>> attrs, Map<String, String> directives) {
        String attr(String key) {
            List<String> v = attrs.get(key);
            return v == null || v.isEmpty() ? null : v.get(0);
        }
    }

    private Headers() {
    }

    static List<Clause> parse(String header) {
        List<Clause> out = new ArrayList<>();
        if (header == null || header.isBlank()) {
            return out;
        }
        for (String clause : split(header, ',')) {
            List<String> names = new ArrayList<>();
            Map<String, List<String>> attrs = new LinkedHashMap<>();
            Map<String, String> directives = new LinkedHashMap<>();
            for (String part : split(clause, ';')) {
                int eq = indexOutsideQuotes(part, '=');
                if (eq < 0) {
                    names.add(part.strip());
                    continue;
                }
                String key = part.substring(0, eq).strip();
                String value = unquote(part.substring(eq + 1).strip());
                if (key.endsWith(":")) {
                    directives.put(key.substring(0, key.length() - 1).strip(), value);
                } else {
                    int colon = key.indexOf(':');
                    boolean list = colon >= 0 && key.substring(colon + 1).strip().startsWith("List");
                    String name = colon < 0 ? key : key.substring(0, colon).strip();
                    List<String> values = new ArrayList<>();
                    if (list) {
                        for (String v : value.split(",")) {
                            values.add(v.strip());
                        }
                    } else {
                        values.add(value);
                    }
                    attrs.put(name, values);
                }
            }
            out.add(new Clause(names, attrs, directives));
        }
        return out;
    }

    private static String unquote(String v) {
        return v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"") ? v.substring(1, v.length() - 1) : v;
    }

    private static int indexOutsideQuotes(String s, char c) {
        boolean quoted = false;
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '"') {
                quoted = !quoted;
            } else if (ch == c && !quoted) {
                return i;
            }
        }
        return -1;
    }

    private static List<String> split(String s, char sep) {
        List<String> out = new ArrayList<>();
        boolean quoted = false;
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '"') {
                quoted = !quoted;
            } else if (ch == sep && !quoted) {
                out.add(s.substring(start, i));
                start = i + 1;
            }
        }
        out.add(s.substring(start));
        out.removeIf(String::isBlank);
        return out;
    }
}
