/**
 * What the console command bundles (rdma-, rtrs-, rnbd-command) print with: one
 * {@link io.rnbd.command.support.Listing} of the telemetry tables (Karaf's ShellTable, and
 * {@code --json} keyed as the telemetry catalog says), one {@link io.rnbd.command.support.Json}
 * writer (Gson), one error convention ({@link io.rnbd.command.support.ConsoleCommand}) and one
 * spelling of sizes, latencies and errnos ({@link io.rnbd.command.support.Formats}), so that
 * every scope's output looks the same and docs/console.md describes it once.
 */
@Export
@Version("2.0.0")
package io.rnbd.command.support;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
