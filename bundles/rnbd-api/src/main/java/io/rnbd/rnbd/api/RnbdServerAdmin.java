package io.rnbd.rnbd.api;

import java.io.IOException;
import java.util.List;

/**
 * Management of the RNBD server's exports, for console commands (mirrors the kernel's
 * {@code /sys/class/rnbd-server} ABI). Registered as an OSGi service by rnbd-server.
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
