/**
 * Test support for block devices: {@link io.rnbd.testkit.block.FakeBlockDevice} (in memory,
 * with counters and hooks to fail, hold or defer requests) and the backend that opens them,
 * {@link io.rnbd.testkit.block.FakeBackend}; {@link io.rnbd.testkit.block.ForwardingBlockDevice}
 * to build a filter on; and {@link io.rnbd.testkit.block.BlockDeviceContractTest}, what every
 * backend's device must do.
 */
@Export
@Version("1.0.0")
package io.rnbd.testkit.block;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
