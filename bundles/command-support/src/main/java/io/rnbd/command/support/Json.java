package io.rnbd.command.support;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.TypeAdapter;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonWriter;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The console's {@code --json} through Gson: maps in their order, collections, strings,
 * numbers, booleans, enums by name, UUIDs as strings, nulls kept. One document on one line, for
 * scripts; a NaN or infinite number (JSON has none) is written as null. Write only: tests parse
 * it back with Gson too.
 */
public final class Json {
    private static final TypeAdapter<Number> FINITE = new TypeAdapter<>() {
        @Override
        public void write(JsonWriter out, Number n) throws IOException {
            if (n == null || !Double.isFinite(n.doubleValue())) {
                out.nullValue();
            } else {
                out.value(n);
            }
        }

        @Override
        public Number read(JsonReader in) {
            throw new UnsupportedOperationException("write only");
        }
    };

    private static final Gson GSON = new GsonBuilder().serializeNulls().disableHtmlEscaping()
            .registerTypeAdapter(Double.class, FINITE).registerTypeAdapter(Float.class, FINITE)
            .registerTypeAdapter(UUID.class, new TypeAdapter<UUID>() {
                @Override
                public void write(JsonWriter out, UUID u) throws IOException {
                    out.value(u == null ? null : u.toString());
                }

                @Override
                public UUID read(JsonReader in) {
                    throw new UnsupportedOperationException("write only");
                }
            })
            // by name, as Enum.name(): no reflection into the enum's class (a JDK enum is closed to it)
            .registerTypeHierarchyAdapter(Enum.class, new TypeAdapter<Enum<?>>() {
                @Override
                public void write(JsonWriter out, Enum<?> e) throws IOException {
                    out.value(e == null ? null : e.name());
                }

                @Override
                public Enum<?> read(JsonReader in) {
                    throw new UnsupportedOperationException("write only");
                }
            }).create();

    private Json() {
    }

    /** An ordered JSON object from alternating keys and values. */
    public static Map<String, Object> obj(Object... keysAndValues) {
        if (keysAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("keys and values must pair up");
        }
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    public static String write(Object value) {
        return GSON.toJson(value);
    }
}
