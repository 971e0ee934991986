package io.rnbd.command.support;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.Strictness;
import com.google.gson.ToNumberPolicy;
import java.util.List;
import java.util.Map;

/**
 * Parses output back with Gson, strictly (RFC 8259, nothing after the document), so tests check
 * that {@code --json} is JSON; integers come back as Long, other numbers as Double.
 */
public final class MiniJson {
    private static final Gson GSON = new GsonBuilder().setStrictness(Strictness.STRICT)
            .setObjectToNumberStrategy(ToNumberPolicy.LONG_OR_DOUBLE).create();

    private MiniJson() {
    }

    public static Object parse(String text) {
        try {
            Object v = GSON.fromJson(text.strip(), Object.class);
            if (v == null && !text.strip().equals("null")) {
                throw new IllegalArgumentException("no JSON: " + text);
            }
            return v;
        } catch (com.google.gson.JsonParseException e) {
            throw new IllegalArgumentException(e.getMessage() + ": " + text, e);
        }
    }

    @SuppressWarnings("unchecked")
    public static List<Map<String, Object>> array(String text) {
        return (List<Map<String, Object>>) parse(text);
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(String text) {
        return (Map<String, Object>) parse(text);
    }
}
