package io.rnbd.telemetry.api;

/**
 * What a column holds, which decides how each reader shows it: the Java type of its values,
 * its Prometheus form and its JMX type.
 */
public enum ColumnType {
    /** Names the row (String): a label on every metric of the table, a key of the MBean's name. */
    ID,
    /** A string: a label of the table's {@code _info} metric; a String attribute. */
    TEXT,
    /** A list of strings (List&lt;String&gt;): an {@code _info} label joined by commas; a String[] attribute. */
    LIST,
    /** One name of {@link Column#states()} (String): a state set, one 0/1 sample per state. */
    STATE,
    /** A Boolean: a gauge 0 or 1. */
    FLAG,
    /** A Long that goes up and down (a level, a setting, an errno): a gauge. */
    GAUGE,
    /** A Long that only grows until reset: a counter ({@code _total}). */
    COUNTER,
    /** A duration in nanoseconds (Long): a gauge in seconds ({@code _seconds}); nanoseconds in JMX. */
    NANOS,
    /** A {@code LatencyHistogram.Snapshot}: a histogram in seconds; CompositeData in JMX. */
    HISTOGRAM,
    /** Named counters (Map&lt;String, Long&gt;, a provider's own): one counter family labelled by name. */
    COUNTERS
}
