/**
 * An NBD client as a {@link io.rnbd.rnbd.api.BlockDevice}: fixed newstyle handshake with
 * NBD_OPT_GO, pipelined asynchronous requests answered by a reader thread. The benchmarks
 * hand it to the load generator to drive any NBD server (nbdkit, the gateway) the same way as
 * a mapped device; the gateway's tests are its other user. Until issue 24 this was the
 * gateway's {@code io.rnbd.nbd.gateway.client} 1.0.0.
 */
@Export
@Version("1.0.0")
package io.rnbd.nbd.client;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
