/**
 * The conformance suite every RDMA provider passes
 * ({@link io.rnbd.testkit.rdma.ProviderConformanceSuite}) and the {@link io.rnbd.testkit.rdma.Endpoint}
 * that records one side's completions and CM events, for provider tests of their own.
 */
@Export
@Version("1.0.0")
package io.rnbd.testkit.rdma;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
