/**
 * The NBD wire format (NetworkBlockDevice/nbd {@code doc/proto.md}) in one place: constants,
 * immutable records with {@code SIZE}, {@code encode(ByteBuffer)} and static
 * {@code decode(ByteBuffer)}. NBD is big-endian (network byte order), unlike the RTRS/RNBD
 * records: every buffer handed to these codecs must be {@link java.nio.ByteOrder#BIG_ENDIAN}
 * (the ByteBuffer default). Decoding garbage throws {@link io.rnbd.nbd.proto.NbdProtoException}.
 * Pure codecs, no threads and no I/O: the gateway (server) and nbd-client share them. Until
 * issue 24 this was the gateway's {@code io.rnbd.nbd.gateway.proto} 1.0.0.
 */
@Export
@Version("1.0.0")
package io.rnbd.nbd.proto;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
