package io.rnbd.telemetry.internal.osgi;

import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.nbd.gateway.api.NbdGatewayAdmin;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.TableSchema;
import io.rnbd.telemetry.api.Telemetry;
import io.rnbd.telemetry.internal.Sources;
import io.rnbd.telemetry.internal.TelemetryReader;
import java.util.List;
import java.util.Optional;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * The {@link Telemetry} service: every admin service is optional and followed as it comes and
 * goes, so a server-only or client-only appliance (or one whose client bundle is being
 * updated) still has telemetry, with empty tables for what is not running.
 */
@Component(service = Telemetry.class)
public final class TelemetryComponent implements Telemetry {
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile RdmaAdmin rdma;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile RtrsClientAdmin rtrsClient;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile RtrsServerAdmin rtrsServer;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile RnbdServerAdmin rnbdServer;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile RnbdClientAdmin rnbdClient;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile NbdGatewayAdmin gateway;

    private final TelemetryReader reader = new TelemetryReader(new Sources(() -> rdma, () -> rtrsClient,
            () -> rtrsServer, () -> rnbdServer, () -> rnbdClient, () -> gateway));

    @Override
    public List<TableSchema> schemas() {
        return reader.schemas();
    }

    @Override
    public List<Table> tables() {
        return reader.tables();
    }

    @Override
    public Optional<Table> table(String name) {
        return reader.table(name);
    }
}
