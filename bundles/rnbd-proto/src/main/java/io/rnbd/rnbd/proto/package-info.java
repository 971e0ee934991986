/**
 * RNBD wire messages (rnbd-proto.h): SESS_INFO, SESS_INFO_RSP, OPEN, OPEN_RSP, CLOSE, IO.
 * Fixed-size little-endian records with zeroed reserved bytes; decoding garbage throws
 * {@link io.rnbd.rnbd.proto.ProtoException}, never anything else.
 */
@Export
@Version("2.0.0")
package io.rnbd.rnbd.proto;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
