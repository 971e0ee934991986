package io.rnbd.telemetry.internal;

import io.rnbd.telemetry.api.TableSchema;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** One row by column key; every column must be set, so a column the catalog forgets fails its tests. */
final class RowBuilder {
    private static final Object UNSET = new Object();
    private final TableSchema schema;
    private final Object[] values;

    RowBuilder(TableSchema schema) {
        this.schema = schema;
        this.values = new Object[schema.columns().size()];
        Arrays.fill(values, UNSET);
    }

    RowBuilder set(String key, Object value) {
        values[schema.index(key)] = value instanceof Integer i ? Long.valueOf(i) : value;
        return this;
    }

    List<Object> build() {
        for (int i = 0; i < values.length; i++) {
            if (values[i] == UNSET) {
                throw new IllegalStateException(schema.name() + ": column " + schema.columns().get(i).key()
                        + " not set");
            }
        }
        return new ArrayList<>(Arrays.asList(values));
    }
}
