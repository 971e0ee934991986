/**
 * How an NBD peer moves bytes on a socket channel, shared by the gateway (server) and
 * nbd-client so neither depends on the other and the codecs in {@code io.rnbd.nbd.proto}
 * stay free of I/O: {@link io.rnbd.nbd.transport.ChannelInput} stages many small headers per
 * read and reads large payloads straight into their buffers (blocking, or waiting on a
 * selector for a non-blocking channel); {@link io.rnbd.nbd.transport.ChannelOutput} writes a
 * gather completely.
 */
@Export
@Version("1.0.0")
package io.rnbd.nbd.transport;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
