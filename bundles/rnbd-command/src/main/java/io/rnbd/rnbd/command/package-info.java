/**
 * The {@code rnbd:*} console commands ({@code DeviceLookup} also finds the {@code RemoteBlockDevice} services by name itself).
 *
 * <p>Karaf's shell injects the services of a command's {@code @Reference} fields itself, not
 * DS, so bnd sees none of them: they are declared here, optional as the fields are, so that the
 * manifest says what the commands consume (docs/architecture.md, the service table).
 */
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.rnbd.api.RnbdClientAdmin)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.rnbd.api.RnbdServerAdmin)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.rtrs.api.RtrsClientAdmin)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.rnbd.api.RemoteBlockDevice)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.telemetry.api.Telemetry)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
package io.rnbd.rnbd.command;

import org.osgi.annotation.bundle.Requirement;
