package io.rnbd.rnbd.api;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Management of the RNBD client's mapped devices, for console commands (mirrors the
 * kernel's {@code /sys/class/rnbd-client} ABI: map_device, unmap_device, remap_device,
 * resize). Registered as an OSGi service by rnbd-client.
 */
public interface RnbdClientAdmin {
    enum DeviceState {
        /** Waiting for the RTRS session to appear or connect. */
        PENDING,
        /** OPEN sent, waiting for the server's answer (first map or remap). */
        OPENING,
        /** Open on the server: IO flows. */
        MAPPED,
        /** The session lost all paths; remapped when it reconnects. */
        DISCONNECTED,
        /** The server refused the OPEN (see lastError); retried on remap or reconnect. */
        FAILED,
        /** Unmapped: gone. */
        UNMAPPED
    }

    /**
     * @param size      bytes as last reported by the server (0 before the first OPEN_RSP)
     * @param users     holders of {@link RemoteBlockDevice#claim(String)}
     * @param lastError errno of the last OPEN failure, 0 if none
     */
    record DeviceInfo(String name, String session, String export, AccessMode mode, long size,
                      DeviceState state, int users, BlockIoStats stats, int lastError) {
    }

    /** Snapshot of every mapping, sorted by name. */
    List<DeviceInfo> devices();

    /**
     * Map {@code export} of the server behind RTRS session {@code session} as local device
     * {@code device}. The mapping waits for the session to appear; the future completes once
     * the server opened the device, or fails with a {@link BlockIoException} carrying the
     * server's errno (ENOENT, EACCES, EBUSY, EROFS ...), in which case the mapping stays
     * listed as FAILED until unmapped or remapped.
     *
     * @throws IOException EEXIST if {@code device} is already mapped
     */
    CompletableFuture<RemoteBlockDevice> map(String device, String session, String export, AccessMode mode)
            throws IOException;

    /**
     * Unmap; refused with EBUSY while IO is in flight or users hold the device, unless
     * {@code force}.
     */
    void unmap(String device, boolean force) throws IOException;

    /** Open the device again on the server (after a failure or a server-side change). */
    CompletableFuture<RemoteBlockDevice> remap(String device) throws IOException;

    /** Ask the server for the export's current size and adopt it; returns the new size in bytes. */
    CompletableFuture<Long> resize(String device) throws IOException;
}
