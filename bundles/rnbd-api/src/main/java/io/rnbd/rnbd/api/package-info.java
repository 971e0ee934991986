/**
 * Block devices: {@link io.rnbd.rnbd.api.BlockDevice} is what a backend opens on the
 * server and what a mapping gives on the client ({@link io.rnbd.rnbd.api.RemoteBlockDevice}),
 * so a gateway or load generator serves either the same way.
 */
@Export
@Version("1.12.0")
package io.rnbd.rnbd.api;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
