package io.rnbd.nbd.gateway.internal;

import java.nio.ByteBuffer;

/**
 * A finished request waiting to be answered.
 *
 * @param handle  the client's handle
 * @param error   NBD error, 0 on success
 * @param message why, for a structured error chunk (null on success)
 * @param read    whether this answers NBD_CMD_READ (data or an error chunk)
 * @param offset  the read's offset, for the OFFSET_DATA chunk
 * @param data    read data to send (null if none); returned to the pool once written
 * @param bytes   payload bytes this request holds against the connection's in-flight budget
 */
record Reply(long handle, int error, String message, boolean read, long offset, ByteBuffer data, long bytes) {
    static Reply ok(long handle, long bytes) {
        return new Reply(handle, 0, null, false, 0, null, bytes);
    }

    static Reply failed(long handle, boolean read, int error, String message, long bytes) {
        return new Reply(handle, error, message, read, 0, null, bytes);
    }
}
