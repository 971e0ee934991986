/**
 * Test support shared by every bundle's tests: fake time. Heartbeats, reconnect delays and
 * timeouts are tested by advancing a {@link io.rnbd.testkit.FakeScheduler}, never by
 * sleeping. {@link io.rnbd.testkit.ExternalTools} runs the tools a test talks to (nbdkit,
 * nbdinfo, qemu-img, fio) as processes.
 */
@Export
@Version("1.2.0")
package io.rnbd.testkit;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
