package io.rnbd.rnbd.client.internal;

import io.rnbd.common.Errno;

/**
 * Whether and when a mapped device the server refused to open is opened again by the client
 * itself. A mapping kept in ConfigAdmin outlives any one refusal: the export may not be there
 * yet (its server still starting its backends, an image being created) or be held by another
 * client for a while, and nobody may be at the console to remap it. Refusals that say the
 * request itself is wrong (access, protocol, arguments, keys) are final, as NVMe-oF learned
 * the hard way for reconnects: retrying them only hides the error.
 */
public final class RemapPolicy {
    /** The first retry's delay; each refusal in a row doubles it. */
    public static final long FIRST_DELAY_MS = 1_000;
    /** The delay stops growing here: an export that comes back is mapped within a minute. */
    public static final long MAX_DELAY_MS = 60_000;

    private RemapPolicy() {
    }

    /** Whether a refusal with {@code errno} may pass by itself. */
    public static boolean retryable(int errno) {
        return switch (errno) {
            case Errno.ENOENT, Errno.ENXIO, Errno.ENODEV, Errno.EBUSY, Errno.EAGAIN, Errno.ENOMEM, Errno.ENOSPC,
                    Errno.EIO, Errno.ETIMEDOUT, Errno.ENOTCONN, Errno.ECONNRESET, Errno.ECONNREFUSED,
                    Errno.EHOSTUNREACH, Errno.ENETUNREACH -> true;
            default -> false;
        };
    }

    /** The delay before the open that follows the {@code refusals}-th refusal in a row (1-based). */
    public static long delayMs(int refusals) {
        int doublings = Math.min(Math.max(refusals, 1) - 1, 16);
        return Math.min(FIRST_DELAY_MS << doublings, MAX_DELAY_MS);
    }
}
