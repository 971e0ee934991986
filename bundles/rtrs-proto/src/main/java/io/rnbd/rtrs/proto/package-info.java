/**
 * RTRS wire records (rtrs-pri.h) and the IMM field, as pure codecs: no threads, no I/O.
 *
 * <p>Every record is little-endian with zeroed reserved bytes. Decoders throw
 * {@link io.rnbd.rtrs.proto.ProtoException} (carrying an errno) for anything malformed
 * and never any other exception. Records beyond the kernel's protocol ({@link
 * io.rnbd.rtrs.proto.AuthMsg}, {@link io.rnbd.rtrs.proto.FenceReq}, {@link
 * io.rnbd.rtrs.proto.FenceRsp}) use message types the kernel does not define, so a
 * kernel peer would reject them rather than misread them.
 */
@Export
@Version("1.0.0")
package io.rnbd.rtrs.proto;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
