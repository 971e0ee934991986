/**
 * RTRS, the RDMA transport: the client session API used by RNBD's client, the server
 * upper-layer SPI implemented by RNBD's server, and the two hot-swappable SPIs
 * ({@link io.rnbd.rtrs.api.MultipathPolicy}, {@link io.rnbd.rtrs.api.Authenticator}).
 */
@Export
@Version("1.10.0")
package io.rnbd.rtrs.api;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
