/**
 * What the console, JMX, /metrics and the dashboard show, as one model: {@link io.rnbd.telemetry.api.Table}s
 * of rows (a path, an export, a mapped device ...) with typed
 * {@link io.rnbd.telemetry.api.Column}s, read by the {@link io.rnbd.telemetry.api.Telemetry}
 * service from the admin services' snapshot DTOs when asked, never counted a second time.
 * The console's listings print these tables; {@link io.rnbd.telemetry.api.Column#console()}
 * is a column's key in their {@code --json}.
 */
@Export
@Version("1.0.0")
package io.rnbd.telemetry.api;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
