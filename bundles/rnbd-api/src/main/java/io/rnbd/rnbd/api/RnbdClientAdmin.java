package io.rnbd.rnbd.api;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Management of the RNBD client's mapped devices (mirrors the kernel's
 * {@code /sys/class/rnbd-client} ABI: map_device, unmap_device, remap_device, resize).
 * Registered as an OSGi service by rnbd-client.
 *
 * <p>Two levels: {@link #mapDevice}, {@link #unmapDevice}, {@link #remapDevice} and
 * {@link #resizeDevice} are the operations an operator runs (the console's {@code rnbd:*}
 * commands and the JMX MBean are thin faces of them): they check their input, keep a mapping
 * in ConfigAdmin (factory PID {@code io.rnbd.client.map}) so it comes back after a restart,
 * wait until the client settled and undo what did not take. {@link #map}, {@link #unmap},
 * {@link #remap} and {@link #resize} act on the running client only, as the mapping
 * configurations themselves use them.
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
     * A device mapped over several servers that export the same storage (docs/scale-out.md).
     *
     * @param sessions    the sessions, one per server, in the order given at map time (the first
     *                    is where {@code rnbd:failback} goes by default)
     * @param active      the session whose server IO goes to now ("" while none answers as active)
     * @param activeSince when IO went there (ms since the epoch, this client's clock; 0 = never)
     * @param generation  the generation of the active server's take of the storage
     * @param takeovers   times IO moved to another server: a takeover this client asked for, or
     *                    one it found another had made
     * @param lastStallMs how long IO waited in the last move, from the loss of the old server (or
     *                    its answer that it is not active) to the new one's answer that it is
     * @param maxStallMs  the longest such wait since the mapping was made
     */
    record HaDeviceInfo(List<String> sessions, String active, long activeSince, long generation, long takeovers,
                        long lastStallMs, long maxStallMs) {
        public static final HaDeviceInfo NONE = new HaDeviceInfo(List.of(), "", 0, 0, 0, 0, 0);

        public HaDeviceInfo {
            sessions = List.copyOf(sessions);
            active = active == null ? "" : active;
        }
    }

    /**
     * @param session   the RTRS session it is mapped over; for a device over several servers the
     *                  active one ({@code ha} lists them all)
     * @param size      bytes as last reported by the server (0 before the first OPEN_RSP)
     * @param users     holders of {@link RemoteBlockDevice#claim(String)}
     * @param lastError errno of the last OPEN failure, 0 if none
     * @param ha        the servers of a device mapped over several, {@link HaDeviceInfo#NONE} otherwise
     */
    record DeviceInfo(String name, String session, String export, AccessMode mode, long size,
                      DeviceState state, int users, BlockIoStats stats, int lastError, HaDeviceInfo ha) {
        public DeviceInfo {
            ha = ha == null ? HaDeviceInfo.NONE : ha;
        }

        /** A device over one server. */
        public DeviceInfo(String name, String session, String export, AccessMode mode, long size,
                          DeviceState state, int users, BlockIoStats stats, int lastError) {
            this(name, session, export, mode, size, state, users, stats, lastError, HaDeviceInfo.NONE);
        }
    }

    /**
     * What {@link #mapDevice} maps: {@code export} of the server(s) behind {@code sessions} as
     * local device {@code device}. Several sessions map one export that several servers serve
     * together (docs/scale-out.md).
     *
     * @since 1.11
     */
    record MapRequest(String device, List<String> sessions, String export, AccessMode mode) {
        public MapRequest {
            sessions = sessions == null ? List.of() : List.copyOf(sessions);
            mode = mode == null ? AccessMode.RW : mode;
        }

        /**
         * From the words an operator types: {@code sessions} comma separated, {@code mode} RO,
         * RW or MIGRATION in any case (null or empty: RW).
         *
         * @throws BlockIoException EINVAL for a mode that is none of these
         */
        public static MapRequest parse(String device, String sessions, String export, String mode)
                throws BlockIoException {
            AccessMode m = AccessMode.RW;
            if (mode != null && !mode.isBlank()) {
                try {
                    m = AccessMode.valueOf(mode.trim().toUpperCase(java.util.Locale.ROOT));
                } catch (IllegalArgumentException e) {
                    throw new BlockIoException(io.rnbd.common.Errno.EINVAL,
                            "access mode must be RO, RW or MIGRATION, not '" + mode + "'");
                }
            }
            List<String> list = sessions == null ? List.of()
                    : java.util.Arrays.stream(sessions.split(",", -1)).map(String::trim).toList();
            return new MapRequest(device, list, export, m);
        }
    }

    /**
     * What an operation on a device did.
     *
     * @param device  the device afterwards; null once it is gone (unmapped)
     * @param size    its size in bytes afterwards (what {@link #resizeDevice} adopted)
     * @param message the outcome in one line, as the console prints it and JMX returns it
     * @since 1.11
     */
    record DeviceResult(DeviceInfo device, long size, String message) {
    }

    /**
     * Map a device and keep the mapping in ConfigAdmin ({@code io.rnbd.client.map}), then wait
     * up to a few seconds for the OPEN's outcome. The result's device is MAPPED, or still
     * waiting for its session (PENDING, DISCONNECTED: it maps when the session connects).
     *
     * @throws BlockIoException EINVAL (a bad name, no session or export, a session twice, RO
     *                          over several sessions), EEXIST (the device is mapped, or the
     *                          export is mapped over that session already), ETIMEDOUT (the
     *                          client did not take the mapping: its configuration is removed
     *                          again), or the server's errno when it refused the OPEN (the
     *                          mapping stays configured: the client opens it again by
     *                          itself when the refusal may pass, ENOENT or EBUSY say, remap
     *                          retries at once, unmap drops it)
     * @since 1.11
     */
    default DeviceResult mapDevice(MapRequest request) throws IOException {
        throw new BlockIoException(io.rnbd.common.Errno.EOPNOTSUPP, "this RNBD client cannot keep mappings");
    }

    /**
     * Unmap a device and remove its configuration, so it does not come back after a restart.
     * The client unmaps first: a refusal leaves the configuration in place.
     *
     * @throws BlockIoException ENOENT (no such device), EBUSY (IO in flight or users hold it,
     *                          without {@code force})
     * @since 1.11
     */
    default DeviceResult unmapDevice(String device, boolean force) throws IOException {
        throw new BlockIoException(io.rnbd.common.Errno.EOPNOTSUPP, "this RNBD client cannot keep mappings");
    }

    /**
     * {@link #remap} and wait for the server's answer.
     *
     * @throws BlockIoException ENOENT (no such device), ETIMEDOUT (no answer in time), the server's errno
     * @since 1.11
     */
    default DeviceResult remapDevice(String device) throws IOException {
        throw new BlockIoException(io.rnbd.common.Errno.EOPNOTSUPP, "this RNBD client cannot keep mappings");
    }

    /**
     * {@link #resize} and wait for the server's answer; the result's size is the one adopted.
     *
     * @throws BlockIoException ENOENT (no such device), ETIMEDOUT (no answer in time), the server's errno
     * @since 1.11
     */
    default DeviceResult resizeDevice(String device) throws IOException {
        throw new BlockIoException(io.rnbd.common.Errno.EOPNOTSUPP, "this RNBD client cannot keep mappings");
    }

    /** Snapshot of every mapping, sorted by name. */
    List<DeviceInfo> devices();

    /**
     * Map {@code export} of the server behind RTRS session {@code session} as local device
     * {@code device}. {@code session} may list several sessions, comma separated, one per
     * server of an export that several servers serve ({@code ha = true} on each): IO then goes
     * to the one that holds the storage, and moves to another when it is lost (docs/scale-out.md). The mapping waits for the session to appear; the future completes once
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

    /**
     * Move a device mapped over several servers to the server of {@code session} (empty: the
     * first of the mapping): that server takes the storage over, fencing the one that held it,
     * and IO follows. Completes with the session IO goes to afterwards; fails with the server's
     * errno (EBUSY: the storage changed hands less than the server's takeover hold-off ago).
     *
     * @throws IOException ENOENT (no such device), EINVAL (not mapped over several servers, or
     *                     {@code session} is not one of its)
     * @since 1.9
     */
    default CompletableFuture<String> failback(String device, String session) throws IOException {
        throw new BlockIoException(io.rnbd.common.Errno.EOPNOTSUPP, "this RNBD client cannot move devices");
    }
}
