/**
 * An NBD client as a {@link io.rnbd.rnbd.api.BlockDevice}: fixed newstyle handshake with
 * NBD_OPT_GO, pipelined asynchronous requests answered by a reader thread. Used by the load
 * generator to drive any NBD server (nbdkit, the gateway) the same way as a mapped device.
 */
@Export
@Version("1.0.0")
package io.rnbd.nbd.gateway.client;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
