package io.rnbd.telemetry.jmx.internal;

import io.rnbd.telemetry.api.Column;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.TableSchema;
import io.rnbd.telemetry.api.Telemetry;
import java.util.List;
import java.util.Optional;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.MBeanException;
import javax.management.MBeanInfo;
import javax.management.ReflectionException;
import javax.management.openmbean.OpenDataException;
import javax.management.openmbean.OpenMBeanAttributeInfoSupport;
import javax.management.openmbean.OpenMBeanConstructorInfoSupport;
import javax.management.openmbean.OpenMBeanInfoSupport;
import javax.management.openmbean.OpenMBeanOperationInfoSupport;

/**
 * One row of a telemetry table (a path, an export ...) as an MBean whose attributes are the
 * row's columns. Nothing is cached: every read asks {@link Telemetry} for the table now, so
 * the values are those the console would print at that moment.
 */
final class RowMBean implements DynamicMBean {
    private final Telemetry telemetry;
    private final TableSchema schema;
    private final List<String> id;
    private final MBeanInfo info;

    RowMBean(Telemetry telemetry, TableSchema schema, List<String> id) {
        this.telemetry = telemetry;
        this.schema = schema;
        this.id = List.copyOf(id);
        this.info = info(schema);
    }

    static MBeanInfo info(TableSchema schema) {
        OpenMBeanAttributeInfoSupport[] attributes = schema.columns().stream()
                .map(c -> new OpenMBeanAttributeInfoSupport(c.attribute(), c.help(), OpenTypes.of(c), true, false, false))
                .toArray(OpenMBeanAttributeInfoSupport[]::new);
        return new OpenMBeanInfoSupport(RowMBean.class.getName(), schema.help(), attributes,
                new OpenMBeanConstructorInfoSupport[0], new OpenMBeanOperationInfoSupport[0], null);
    }

    private Optional<List<Object>> row(Table t) {
        return t.rows().stream().filter(r -> t.id(r).equals(id)).findFirst();
    }

    private Table table() {
        return telemetry.table(schema.name()).orElseThrow();
    }

    private Column column(String attribute) throws AttributeNotFoundException {
        for (Column c : schema.columns()) {
            if (c.attribute().equals(attribute)) {
                return c;
            }
        }
        throw new AttributeNotFoundException(schema.jmxType() + " has no attribute " + attribute);
    }

    @Override
    public Object getAttribute(String attribute) throws AttributeNotFoundException, MBeanException {
        Column c = column(attribute);
        Table t = table();
        List<Object> row = row(t).orElseThrow(() -> gone());
        try {
            return OpenTypes.value(c, t.value(row, c.key()));
        } catch (OpenDataException e) {
            throw new MBeanException(e, attribute + ": " + e.getMessage());
        }
    }

    private MBeanException gone() {
        String what = schema.jmxType() + " " + String.join("/", id);
        return new MBeanException(new IllegalStateException(what + " is gone"), what + " is gone");
    }

    @Override
    public AttributeList getAttributes(String[] attributes) {
        AttributeList list = new AttributeList();
        Table t = table(); // one read for all of them, so they are of one moment
        Optional<List<Object>> row = row(t);
        if (row.isEmpty()) {
            return list;
        }
        for (String a : attributes) {
            try {
                Column c = column(a);
                list.add(new Attribute(a, OpenTypes.value(c, t.value(row.get(), c.key()))));
            } catch (AttributeNotFoundException | OpenDataException e) {
                // left out, as the DynamicMBean contract asks for attributes that cannot be read
            }
        }
        return list;
    }

    @Override
    public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
        throw new AttributeNotFoundException(attribute.getName() + " is read-only");
    }

    @Override
    public AttributeList setAttributes(AttributeList attributes) {
        return new AttributeList();
    }

    @Override
    public Object invoke(String actionName, Object[] params, String[] signature) throws ReflectionException {
        throw new ReflectionException(new NoSuchMethodException(actionName), schema.jmxType() + " has no operations");
    }

    @Override
    public MBeanInfo getMBeanInfo() {
        return info;
    }
}
