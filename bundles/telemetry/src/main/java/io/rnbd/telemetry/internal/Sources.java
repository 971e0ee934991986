package io.rnbd.telemetry.internal;

import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.nbd.gateway.api.NbdGatewayAdmin;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsServerAdmin;
import java.util.function.Supplier;

/** The admin services as they are now; each supplier gives null while its service is absent. */
public record Sources(Supplier<RdmaAdmin> rdma, Supplier<RtrsClientAdmin> rtrsClient,
                      Supplier<RtrsServerAdmin> rtrsServer, Supplier<RnbdServerAdmin> rnbdServer,
                      Supplier<RnbdClientAdmin> rnbdClient, Supplier<NbdGatewayAdmin> gateway) {
}
