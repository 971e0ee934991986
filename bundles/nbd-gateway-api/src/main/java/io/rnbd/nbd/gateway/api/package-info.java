/**
 * The NBD gateway's admin view, {@link io.rnbd.nbd.gateway.api.NbdGatewayAdmin}: a bundle of its
 * own so that telemetry reads the gateway without installing it (its activation opens a
 * listening socket). Until 1.0 it was {@code io.rnbd.rnbd.api.NbdGatewayAdmin}.
 */
@Export
@Version("1.0.0")
package io.rnbd.nbd.gateway.api;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
