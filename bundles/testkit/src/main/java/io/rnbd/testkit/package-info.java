/**
 * Test support shared by every bundle's tests: fake time. Heartbeats, reconnect delays and
 * timeouts are tested by advancing a {@link io.rnbd.testkit.FakeScheduler}, never by
 * sleeping.
 */
@Export
@Version("1.1.0")
package io.rnbd.testkit;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
