/** ConfigAdmin in memory ({@link io.rnbd.testkit.cm.FakeConfigAdmin}). */
@Export
@Version("1.0.0")
package io.rnbd.testkit.cm;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
