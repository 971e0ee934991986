package io.rnbd.telemetry.internal;

import io.rnbd.common.LatencyHistogram;
import java.lang.reflect.Constructor;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * DTOs filled by reflection with a value of their own in every field (numbers and strings
 * never repeat), and the leaf values they hold: a field added to a DTO is filled and looked
 * for without anyone editing a test.
 */
final class Fixtures {
    private long next = 1000;

    @SuppressWarnings("unchecked")
    <T> T make(Class<T> type) {
        return (T) value(type, type);
    }

    private Object value(Class<?> raw, Type generic) {
        if (raw == long.class || raw == Long.class) {
            return next++;
        } else if (raw == int.class || raw == Integer.class) {
            return (int) next++;
        } else if (raw == boolean.class || raw == Boolean.class) {
            return true;
        } else if (raw == String.class) {
            return "s" + next++;
        } else if (raw == UUID.class) {
            return new UUID(7, next++);
        } else if (raw.isEnum()) {
            Object[] constants = raw.getEnumConstants();
            return constants[constants.length - 1];
        } else if (raw == LatencyHistogram.Snapshot.class) {
            long[] counts = new long[LatencyHistogram.boundsNanos().length + 1];
            counts[2] = next++;
            return new LatencyHistogram.Snapshot(counts, next++);
        } else if (raw == List.class) {
            Type element = ((ParameterizedType) generic).getActualTypeArguments()[0];
            return new ArrayList<>(List.of(value((Class<?>) element, element)));
        } else if (raw == Map.class) {
            Map<String, Long> m = new LinkedHashMap<>();
            m.put("k" + next++, next++);
            return m;
        } else if (raw.isRecord()) {
            RecordComponent[] components = raw.getRecordComponents();
            Class<?>[] types = new Class<?>[components.length];
            Object[] args = new Object[components.length];
            for (int i = 0; i < components.length; i++) {
                types[i] = components[i].getType();
                args[i] = value(types[i], components[i].getGenericType());
            }
            try {
                Constructor<?> c = raw.getDeclaredConstructor(types);
                return c.newInstance(args);
            } catch (ReflectiveOperationException e) {
                throw new AssertionError("cannot build " + raw, e);
            }
        }
        throw new AssertionError("no fixture for " + raw + ": teach Fixtures the type");
    }

    /** Every leaf value in {@code o}, as a table row would hold it (Long, String, names of enums). */
    static void leaves(Object o, Set<Object> into) {
        if (o == null) {
            return;
        }
        if (o instanceof Integer i) {
            into.add(i.longValue());
        } else if (o instanceof Long || o instanceof String || o instanceof Boolean
                || o instanceof LatencyHistogram.Snapshot) {
            into.add(o);
        } else if (o instanceof UUID || o instanceof Enum<?>) {
            into.add(o instanceof Enum<?> e ? e.name() : o.toString());
        } else if (o instanceof List<?> l) {
            l.forEach(x -> leaves(x, into));
        } else if (o instanceof Map<?, ?> m) {
            m.forEach((k, v) -> {
                leaves(k, into);
                leaves(v, into);
            });
        } else if (o.getClass().isRecord()) {
            for (RecordComponent c : o.getClass().getRecordComponents()) {
                try {
                    leaves(c.getAccessor().invoke(o), into);
                } catch (ReflectiveOperationException e) {
                    throw new AssertionError(e);
                }
            }
        } else {
            throw new AssertionError("no leaves of " + o.getClass());
        }
    }
}
