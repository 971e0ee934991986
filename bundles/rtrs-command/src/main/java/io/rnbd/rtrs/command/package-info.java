/**
 * The {@code rtrs:*} console commands ({@code rtrs:session-wait} also looks {@code RtrsClientAdmin} up itself).
 *
 * <p>Karaf's shell injects the services of a command's {@code @Reference} fields itself, not
 * DS, so bnd sees none of them: they are declared here, optional as the fields are, so that the
 * manifest says what the commands consume (docs/architecture.md, the service table).
 */
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.rtrs.api.RtrsClientAdmin)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.rtrs.api.RtrsServerAdmin)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.telemetry.api.Telemetry)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
package io.rnbd.rtrs.command;

import org.osgi.annotation.bundle.Requirement;
