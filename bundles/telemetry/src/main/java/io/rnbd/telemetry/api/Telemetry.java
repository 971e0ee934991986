package io.rnbd.telemetry.api;

import java.util.List;
import java.util.Optional;

/**
 * Everything the appliance's console shows, as tables read on demand from the admin
 * services (RdmaAdmin, RtrsClientAdmin, RtrsServerAdmin, RnbdServerAdmin, RnbdClientAdmin,
 * NbdGatewayAdmin). A table whose service is not running has no rows. Registered as an OSGi
 * service by the telemetry bundle; JMX, /metrics and the dashboard read through it. Reading
 * costs what the console's listing costs: call it per scrape, never per IO.
 */
public interface Telemetry {
    /** Every table's schema, in a fixed order; the same for the service's lifetime. */
    List<TableSchema> schemas();

    /** Every table, read now. */
    List<Table> tables();

    /** One table, read now; empty if no table has that name. */
    Optional<Table> table(String name);
}
