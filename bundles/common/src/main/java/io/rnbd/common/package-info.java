/**
 * The bottom of the appliance: what every layer shares. {@link io.rnbd.common.Errno}, the
 * Linux errno values that are the status of every layer because the kernel's protocols carry
 * them on the wire, and {@link io.rnbd.common.LatencyHistogram} (over HdrHistogram), which every
 * {@code *Stats} class and the load generator fill; and what an IO thread needs to busy-poll without
 * harm ({@link io.rnbd.common.AdaptivePoll}, {@link io.rnbd.common.SpareCpu}); and the one wait of the
 * admin services until what they configured shows ({@link io.rnbd.common.Settle}). Nothing here knows
 * RDMA, RTRS or block devices, so the block layer, the
 * backends and the NBD gateway depend on this and not on the verbs SPI.
 */
@Export
@Version("1.6.0")
package io.rnbd.common;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
