/**
 * The {@code rdma:*} console commands.
 *
 * <p>Karaf's shell injects the services of a command's {@code @Reference} fields itself, not
 * DS, so bnd sees none of them: they are declared here, optional as the fields are, so that the
 * manifest says what the commands consume (docs/architecture.md, the service table).
 */
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.rdma.api.RdmaAdmin)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.rdma.api.RdmaLinkAdmin)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.telemetry.api.Telemetry)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
package io.rnbd.rdma.command;

import org.osgi.annotation.bundle.Requirement;
