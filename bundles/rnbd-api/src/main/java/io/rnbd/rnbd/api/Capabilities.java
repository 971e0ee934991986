package io.rnbd.rnbd.api;

/**
 * What a block device can do, probed one by one like nbdkit's {@code can_*} callbacks.
 *
 * @param write       writes allowed (false for read-only)
 * @param flush       FLUSH makes earlier writes durable
 * @param fua         a write can be made durable by itself
 * @param trim        DISCARD frees space (reads after it return zeros)
 * @param zero        WRITE_ZEROES is the device's own (else callers emulate it by writing zeros)
 * @param multiConn   several connections see each other's writes and flushes
 * @param fastZero    WRITE_ZEROES never falls back to writing zeros, with or without
 *                    {@code noUnmap} (nbdkit's {@code can_fast_zero}): a hole punched, a range
 *                    zeroed by the file system or the device without moving data
 * @param secureErase {@link BlockDevice#secureErase} makes the range's old contents unreadable
 *                    from the storage itself, not only through the device (Linux's
 *                    REQ_OP_SECURE_ERASE, RNBD_OP_SECURE_ERASE)
 * @since rnbd-api 1.8 for {@code fastZero} and {@code secureErase}
 */
public record Capabilities(boolean write, boolean flush, boolean fua, boolean trim, boolean zero,
                           boolean multiConn, boolean fastZero, boolean secureErase) {
    public static final Capabilities READ_ONLY = new Capabilities(false, false, false, false, false, true);

    /** The capabilities of rnbd-api 1.7: a device's own zeroing counts as fast, nothing erases securely. */
    public Capabilities(boolean write, boolean flush, boolean fua, boolean trim, boolean zero, boolean multiConn) {
        this(write, flush, fua, trim, zero, multiConn, zero, false);
    }

    public Capabilities readOnly() {
        return new Capabilities(false, false, false, false, false, multiConn, false, false);
    }
}
