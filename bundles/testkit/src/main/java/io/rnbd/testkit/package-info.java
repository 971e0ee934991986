/**
 * Test support shared by every bundle's tests: fake time. Heartbeats, reconnect delays and
 * timeouts are tested by advancing a {@link io.rnbd.testkit.FakeScheduler}, never by
 * sleeping; what other threads or the kernel make true is waited for with
 * {@link io.rnbd.testkit.Await}. {@link io.rnbd.testkit.ExternalTools} runs the tools a test
 * talks to (nbdkit, nbdinfo, qemu-img, fio) as processes; {@link io.rnbd.testkit.LogCapture}
 * keeps what was logged. Block devices: {@code io.rnbd.testkit.block}; RDMA providers:
 * {@code io.rnbd.testkit.rdma}.
 */
@Export
@Version("1.3.0")
package io.rnbd.testkit;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
