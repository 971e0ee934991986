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

    /**
     * @param size      bytes, 0 while offline and never opened
     * @param lastError one line on why the export is offline, "" if none
     */
    record ExportInfo(String name, String backend, long size, ExportState state, boolean readOnly,
                      List<Opener> openers, BlockIoStats stats, String lastError) {
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
