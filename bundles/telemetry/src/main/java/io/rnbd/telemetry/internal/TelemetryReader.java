package io.rnbd.telemetry.internal;

import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.TableSchema;
import io.rnbd.telemetry.api.Telemetry;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link Telemetry} over whatever admin services {@link Sources} gives at the moment of reading. */
public final class TelemetryReader implements Telemetry {
    private static final Logger LOG = LoggerFactory.getLogger(TelemetryReader.class);
    private final Sources sources;

    public TelemetryReader(Sources sources) {
        this.sources = sources;
    }

    @Override
    public List<TableSchema> schemas() {
        return Catalog.ENTRIES.stream().map(Catalog.Entry::schema).toList();
    }

    @Override
    public List<Table> tables() {
        return Catalog.ENTRIES.stream().map(this::read).toList();
    }

    @Override
    public Optional<Table> table(String name) {
        return Catalog.ENTRIES.stream().filter(e -> e.schema().name().equals(name)).findFirst().map(this::read);
    }

    private Table read(Catalog.Entry e) {
        try {
            return new Table(e.schema(), e.reader().apply(sources));
        } catch (RuntimeException ex) {
            // a service that went away while it was read (its bundle stopping): no rows this time
            LOG.warn("telemetry: cannot read {}: {}", e.schema().name(), ex.toString());
            return new Table(e.schema(), List.of());
        }
    }
}
