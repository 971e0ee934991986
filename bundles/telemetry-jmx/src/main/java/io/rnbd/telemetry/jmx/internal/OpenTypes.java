package io.rnbd.telemetry.jmx.internal;

import io.rnbd.common.LatencyHistogram;
import io.rnbd.telemetry.api.Column;
import java.util.List;
import java.util.Map;
import javax.management.openmbean.ArrayType;
import javax.management.openmbean.CompositeDataSupport;
import javax.management.openmbean.CompositeType;
import javax.management.openmbean.OpenDataException;
import javax.management.openmbean.OpenType;
import javax.management.openmbean.SimpleType;
import javax.management.openmbean.TabularDataSupport;
import javax.management.openmbean.TabularType;

/**
 * A column's JMX open type and the conversion of its values: plain types for everything but
 * lists (String[]), latency histograms (CompositeData) and a provider's named counters
 * (TabularData name → value), so jconsole, Hawtio and any JMX client read them without our
 * classes.
 */
final class OpenTypes {
    static final CompositeType HISTOGRAM;
    static final TabularType COUNTERS;
    private static final CompositeType COUNTER;
    private static final double[] BOUNDS_SECONDS;

    static {
        try {
            HISTOGRAM = new CompositeType("LatencyHistogram",
                    "Completion latencies in fixed buckets (counts per bucket, not cumulative; the last bucket is "
                            + "above the last bound)",
                    new String[] {"bounds_seconds", "counts", "count", "sum_seconds"},
                    new String[] {"Upper bound of each bucket but the last, in seconds",
                            "Completions per bucket", "Completions in all", "Sum of all latencies, in seconds"},
                    new OpenType<?>[] {ArrayType.getPrimitiveArrayType(double[].class),
                            ArrayType.getPrimitiveArrayType(long[].class), SimpleType.LONG, SimpleType.DOUBLE});
            COUNTER = new CompositeType("Counter", "A named counter", new String[] {"name", "value"},
                    new String[] {"Counter name", "Value"}, new OpenType<?>[] {SimpleType.STRING, SimpleType.LONG});
            COUNTERS = new TabularType("Counters", "Named counters", COUNTER, new String[] {"name"});
        } catch (OpenDataException e) {
            throw new ExceptionInInitializerError(e);
        }
        long[] ns = LatencyHistogram.boundsNanos();
        BOUNDS_SECONDS = new double[ns.length];
        for (int i = 0; i < ns.length; i++) {
            BOUNDS_SECONDS[i] = ns[i] / 1e9;
        }
    }

    private OpenTypes() {
    }

    static OpenType<?> of(Column c) {
        try {
            return switch (c.type()) {
                case ID, TEXT, STATE -> SimpleType.STRING;
                case LIST -> ArrayType.getArrayType(SimpleType.STRING);
                case FLAG -> SimpleType.BOOLEAN;
                case GAUGE, COUNTER, NANOS -> SimpleType.LONG;
                case HISTOGRAM -> HISTOGRAM;
                case COUNTERS -> COUNTERS;
            };
        } catch (OpenDataException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A table value as its open type's value. */
    static Object value(Column c, Object v) throws OpenDataException {
        if (v == null) {
            return null;
        }
        switch (c.type()) {
            case LIST:
                return ((List<?>) v).stream().map(String::valueOf).toArray(String[]::new);
            case HISTOGRAM: {
                LatencyHistogram.Snapshot h = (LatencyHistogram.Snapshot) v;
                return new CompositeDataSupport(HISTOGRAM, new String[] {"bounds_seconds", "counts", "count",
                        "sum_seconds"}, new Object[] {BOUNDS_SECONDS.clone(), h.counts(), h.count(), h.sumNanos() / 1e9});
            }
            case COUNTERS: {
                TabularDataSupport t = new TabularDataSupport(COUNTERS);
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    t.put(new CompositeDataSupport(COUNTER, new String[] {"name", "value"},
                            new Object[] {String.valueOf(e.getKey()), ((Number) e.getValue()).longValue()}));
                }
                return t;
            }
            default:
                return v;
        }
    }
}
