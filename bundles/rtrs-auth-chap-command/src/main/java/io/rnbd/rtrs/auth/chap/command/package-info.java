/**
 * The CHAP key commands ({@code rtrs:auth-keys}, {@code auth-key-add}, {@code auth-key-remove}).
 *
 * <p>Karaf's shell injects the services of a command's {@code @Reference} fields itself, not
 * DS, so bnd sees none of them: they are declared here, optional as the fields are, so that the
 * manifest says what the commands consume (docs/architecture.md, the service table).
 */
@Requirement(namespace = "osgi.service", filter = "(objectClass=io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin)", effective = "active",
        resolution = Requirement.Resolution.OPTIONAL)
package io.rnbd.rtrs.auth.chap.command;

import org.osgi.annotation.bundle.Requirement;
