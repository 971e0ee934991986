/**
 * Administration of the CHAP key store for console commands: list host identities (never
 * their secrets), add or replace and remove keys, and generate fresh DHHC-1 secrets.
 */
@Export
@Version("1.0.0")
package io.rnbd.rtrs.auth.chap.api;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
