package io.rnbd.rnbd.api;

/**
 * What a block device can do, probed one by one like nbdkit's {@code can_*} callbacks.
 *
 * @param write     writes allowed (false for read-only)
 * @param flush     FLUSH makes earlier writes durable
 * @param fua       a write can be made durable by itself
 * @param trim      DISCARD frees space (reads after it return zeros)
 * @param zero      WRITE_ZEROES is efficient (else emulated by writing zeros)
 * @param multiConn several connections see each other's writes and flushes
 */
public record Capabilities(boolean write, boolean flush, boolean fua, boolean trim, boolean zero,
                           boolean multiConn) {
    public static final Capabilities READ_ONLY = new Capabilities(false, false, false, false, false, true);

    public Capabilities readOnly() {
        return new Capabilities(false, false, false, false, false, multiConn);
    }
}
