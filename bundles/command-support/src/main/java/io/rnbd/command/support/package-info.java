/**
 * What the console command bundles (rdma-, rtrs-, rnbd-command) print with: one
 * {@link io.rnbd.command.support.TextTable} layout, one {@link io.rnbd.command.support.Json}
 * writer for {@code --json}, one error convention ({@link io.rnbd.command.support.ConsoleCommand})
 * and one spelling of sizes, latencies and errnos ({@link io.rnbd.command.support.Formats}),
 * so that every scope's output looks the same and docs/console.md describes it once.
 */
@Export
@Version("1.1.0")
package io.rnbd.command.support;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
