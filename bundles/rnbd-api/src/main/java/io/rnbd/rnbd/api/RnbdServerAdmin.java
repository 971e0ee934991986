package io.rnbd.rnbd.api;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * Management of the RNBD server's exports (mirrors the kernel's {@code /sys/class/rnbd-server}
 * ABI). Registered as an OSGi service by rnbd-server.
 *
 * <p>{@link #addExport}, {@link #removeExport} and {@link #resizeExport} are the operations an
 * operator runs (the console's {@code rnbd:export-*} commands and the JMX MBean are thin faces
 * of them): exports are kept in ConfigAdmin (factory PID {@code io.rnbd.server.export}), so
 * they survive restarts; the service checks the request, writes the configuration, waits for
 * the server to take it and removes it again when it never does.
 */
public interface RnbdServerAdmin {
    enum ExportState {
        /** The backend is open: IO flows. */
        ONLINE,
        /** The backend service is gone (or failed to open): IO waits or fails. */
        OFFLINE
    }

    /** One client session holding the export open. */
    record Opener(String session, AccessMode mode, int deviceId) {
    }

    /** A server's part in an export that several servers serve ({@code ha = true}; docs/scale-out.md). */
    enum Role {
        /** Not an HA export: this server alone serves it. */
        NONE,
        /** Serves reads to Linux hosts, changes nothing; takes over when a client asks. */
        STANDBY,
        /** Breaking the holder's lock and fencing it; IO waits. */
        TAKING_OVER,
        /** Holds the storage's lock: serves all IO. */
        ACTIVE,
        /** Another server took the storage over: serves nothing, opens it again as a standby. */
        FENCED
    }

    /**
     * An HA export as this server sees it, and its holder as the storage records it.
     *
     * @param role           this server's role
     * @param activeServer   the server the storage records as holder ("" = none recorded)
     * @param activeSince    when that server took the storage (ms since the epoch, its clock; 0 = unknown)
     * @param generation     how often a server took the storage, the holder's take included
     * @param takeovers      takeovers this server made for the export (each broke and fenced a live
     *                       or dead holder; taking a lock nobody held is not one)
     * @param lastTakeoverMs how long this server's last take of the lock took, from the request to
     *                       the lock held (0 = none yet)
     */
    record HaInfo(Role role, String activeServer, long activeSince, long generation, long takeovers,
                  long lastTakeoverMs) {
        public static final HaInfo NONE = new HaInfo(Role.NONE, "", 0, 0, 0, 0);
    }

    /**
     * @param size      bytes, 0 while offline and never opened
     * @param lastError one line on why the export is offline, "" if none
     * @param ha        its part among several servers, {@link HaInfo#NONE} when it is not an HA export
     */
    record ExportInfo(String name, String backend, long size, ExportState state, boolean readOnly,
                      List<Opener> openers, BlockIoStats stats, String lastError, HaInfo ha) {
        public ExportInfo {
            ha = ha == null ? HaInfo.NONE : ha;
        }

        /** An export of one server. */
        public ExportInfo(String name, String backend, long size, ExportState state, boolean readOnly,
                          List<Opener> openers, BlockIoStats stats, String lastError) {
            this(name, backend, size, state, readOnly, openers, stats, lastError, HaInfo.NONE);
        }
    }

    /**
     * What {@link #addExport} configures.
     *
     * @param name            the export's name, as clients ask for it (may be a path: /dev/ram0, pool/vol1)
     * @param backend         a registered backend by the name it announces (memory, file, rbd, ...)
     * @param params          the backend's parameters, kept as {@code backend.KEY}: {@code size}
     *                        (512, 64k, 1g ...; kept in bytes), {@code path}, {@code create} for
     *                        the appliance's own backends, any others for a backend of its own
     * @param readOnly        refuse RW and MIGRATION opens (EROFS)
     * @param allowedSessions session names or host ids allowed to open; empty: all
     * @param offlineWaitMs   how long IO waits for a missing backend; null: the server's default
     * @since 1.11
     */
    record ExportRequest(String name, String backend, Map<String, String> params, boolean readOnly,
                         List<String> allowedSessions, Long offlineWaitMs) {
        public ExportRequest {
            params = params == null ? Map.of() : Map.copyOf(params);
            allowedSessions = allowedSessions == null ? List.of() : List.copyOf(allowedSessions);
        }

        /** An export with backend parameters only. */
        public ExportRequest(String name, String backend, Map<String, String> params, boolean readOnly) {
            this(name, backend, params, readOnly, List.of(), null);
        }

        /**
         * Backend parameters from the words an operator types, each {@code KEY=VALUE}.
         *
         * @throws BlockIoException EINVAL for a word that is not, or a key given twice
         */
        public static Map<String, String> params(List<String> keyValues) throws BlockIoException {
            Map<String, String> params = new java.util.TreeMap<>();
            for (String kv : keyValues == null ? List.<String>of() : keyValues) {
                int eq = kv == null ? -1 : kv.indexOf('=');
                String key = eq < 0 ? "" : kv.substring(0, eq).trim();
                if (!key.matches("[A-Za-z0-9._-]+") || kv.substring(eq + 1).isBlank()) {
                    throw new BlockIoException(io.rnbd.common.Errno.EINVAL, "a parameter is KEY=VALUE (a key of "
                            + "letters, digits and . _ -), not '" + kv + "'");
                }
                if (params.put(key, kv.substring(eq + 1).trim()) != null) {
                    throw new BlockIoException(io.rnbd.common.Errno.EINVAL, "parameter " + key + " is given twice");
                }
            }
            return params;
        }
    }

    /**
     * What an operation on an export did.
     *
     * @param export  the export afterwards; null once it is gone (removed)
     * @param message the outcome in one line, as the console prints it and JMX returns it
     * @since 1.11
     */
    record ExportResult(ExportInfo export, String message) {
    }

    /**
     * Add an export, kept in ConfigAdmin ({@code io.rnbd.server.export}), and wait a few
     * seconds for it to come online. An export whose backend cannot open it yet (a missing
     * backend bundle, an unreachable cluster) stays configured, OFFLINE with its reason.
     *
     * @throws BlockIoException EINVAL (a bad name or parameter, an unknown backend, parameters
     *                          the backend says could never open), EEXIST (an export of that
     *                          name is configured), ETIMEDOUT (the server did not take the
     *                          export: its configuration is removed again)
     * @since 1.11
     */
    default ExportResult addExport(ExportRequest request) throws IOException {
        throw new BlockIoException(io.rnbd.common.Errno.EOPNOTSUPP, "this RNBD server cannot keep exports");
    }

    /**
     * Remove an export and its configuration.
     *
     * @throws BlockIoException ENOENT (no export of that name is configured), EBUSY (clients
     *                          have it open, without {@code force}: with it their IO fails)
     * @since 1.11
     */
    default ExportResult removeExport(String name, boolean force) throws IOException {
        throw new BlockIoException(io.rnbd.common.Errno.EOPNOTSUPP, "this RNBD server cannot keep exports");
    }

    /** Snapshot of every configured export, sorted by name. */
    List<ExportInfo> exports();

    /**
     * The block backend services registered now, with their bundles, sorted by the name they
     * announce ({@code rnbd.backend}: what an export's {@code backend} takes, a third-party
     * bundle's as well as memory, file, rbd); of several with one name, the one serving its
     * exports first.
     *
     * @since 1.8
     */
    default List<io.rnbd.common.Provider> backends() {
        return List.of();
    }

    /**
     * Close {@code session}'s mapping of {@code export} from the server side (kernel's
     * {@code force_close}); the client's further IO on it fails.
     *
     * @throws IOException (a {@link BlockIoException} with ENOENT) when no such export or opener
     */
    void forceClose(String export, String session) throws IOException;

    /** Zero the export's counters (inflight excepted). */
    void resetStats(String export) throws IOException;

    /**
     * Check an export's backend parameters before it is configured
     * ({@link BlockBackend#validate}); nothing is checked while no backend of that type runs.
     *
     * @throws IOException one line on why such an export could never open
     * @since 1.6
     */
    default void validateExport(String backend, java.util.Map<String, String> params, boolean readOnly)
            throws IOException {
    }

    /**
     * Grow or shrink the export's storage to {@code bytes} ({@link BlockDevice#resize}); mapped
     * clients learn the new size when they next re-OPEN the device (rnbd-client does every few
     * seconds, {@code rnbd:resize} at once). Shrinking is refused (EBUSY) while a client has the
     * export open: its IO beyond the new end would fail.
     *
     * @return the export's size afterwards, in bytes
     * @throws IOException (a {@link BlockIoException}) ENOENT, EBUSY, EINVAL, EOPNOTSUPP, ENODEV (offline)
     * @since 1.6
     */
    default long resizeExport(String export, long bytes) throws IOException {
        throw new BlockIoException(io.rnbd.common.Errno.EOPNOTSUPP, "this RNBD server cannot resize exports");
    }
}
