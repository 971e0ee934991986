package io.rnbd.telemetry.api;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rows of one {@link TableSchema} as read at one moment. A row holds one value per
 * column, in the schema's order, of the Java type {@link ColumnType} names; null where the
 * source had nothing (a reader leaves such a field out).
 */
public record Table(TableSchema schema, List<List<Object>> rows) {
    public Table {
        List<List<Object>> copy = new ArrayList<>(rows.size());
        for (List<Object> row : rows) {
            if (row.size() != schema.columns().size()) {
                throw new IllegalArgumentException(schema.name() + ": a row of " + row.size() + " values for "
                        + schema.columns().size() + " columns");
            }
            copy.add(Collections.unmodifiableList(new ArrayList<>(row)));
        }
        rows = Collections.unmodifiableList(copy);
    }

    public Object value(List<Object> row, String key) {
        return row.get(schema.index(key));
    }

    /** A row as an ordered map from column key to value. */
    public Map<String, Object> asMap(List<Object> row) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < row.size(); i++) {
            m.put(schema.columns().get(i).key(), row.get(i));
        }
        return m;
    }

    /** The identity values of a row, in order. */
    public List<String> id(List<Object> row) {
        List<String> id = new ArrayList<>();
        for (int i = 0; i < schema.columns().size() && schema.columns().get(i).type() == ColumnType.ID; i++) {
            id.add(String.valueOf(row.get(i)));
        }
        return id;
    }
}
