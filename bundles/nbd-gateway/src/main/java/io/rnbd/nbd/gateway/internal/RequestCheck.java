package io.rnbd.nbd.gateway.internal;

import static io.rnbd.nbd.proto.NbdConstants.*;

import io.rnbd.nbd.proto.Request;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.Capabilities;

/**
 * Which requests of a negotiated connection may reach the device, and the NBD error each of
 * the others is answered with (nbdkit's {@code validate_request}): the flags the transmission
 * flags allow, the device's capabilities, the 32 MiB payload limit, the export's end and its
 * block alignment. The connection stays: a refused request costs its client one error reply.
 */
final class RequestCheck {
    private final int flags;
    private final boolean structured;
    private final Capabilities caps;
    private final BlockDevice device;

    /**
     * @param flags      the transmission flags the client was sent
     * @param structured whether structured replies were negotiated (NBD_CMD_FLAG_DF is then allowed)
     */
    RequestCheck(int flags, boolean structured, Capabilities caps, BlockDevice device) {
        this.flags = flags;
        this.structured = structured;
        this.caps = caps;
        this.device = device;
    }

    /** The NBD error for a request that must not reach the device, or 0. */
    int errorOf(Request r) {
        int type = r.type();
        int allowed = (flags & FLAG_SEND_FUA) != 0 ? CMD_FLAG_FUA : 0;
        boolean writes = type == CMD_WRITE || type == CMD_TRIM || type == CMD_WRITE_ZEROES;
        switch (type) {
            case CMD_READ:
                if (structured) {
                    allowed |= CMD_FLAG_DF;
                }
                break;
            case CMD_WRITE:
            case CMD_FLUSH:
                break;
            case CMD_TRIM:
                if (caps.write() && !caps.trim()) {
                    return EINVAL;
                }
                break;
            case CMD_WRITE_ZEROES:
                allowed |= CMD_FLAG_NO_HOLE | CMD_FLAG_FAST_ZERO;
                break;
            default:
                return EINVAL;
        }
        if ((r.flags() & ~allowed) != 0) {
            return EINVAL;
        }
        if (writes && !caps.write()) {
            return EPERM;
        }
        if (type == CMD_FLUSH) {
            return caps.flush() && r.offset() == 0 && r.length() == 0 ? 0 : EINVAL;
        }
        if ((type == CMD_READ || type == CMD_WRITE) && r.length() > MAX_PAYLOAD) {
            return EINVAL;
        }
        long size = device.size();
        if (r.offset() < 0 || r.offset() > size || r.length() > size - r.offset()) {
            return type == CMD_WRITE || type == CMD_WRITE_ZEROES ? ENOSPC : EINVAL;
        }
        int block = device.logicalBlockSize();
        if (r.offset() % block != 0 || r.length() % block != 0) {
            return EINVAL;
        }
        if (r.has(CMD_FLAG_FAST_ZERO) && !caps.zero()) {
            return ENOTSUP;
        }
        return 0;
    }

    /** The message of a structured error reply to {@code r}, refused with {@code err}. */
    static String why(Request r, int err) {
        switch (err) {
            case ESHUTDOWN: return "the device was unmapped (rnbd:unmap --force); disconnect";
            case EPERM: return "read-only export";
            case ENOSPC: return "write beyond the end of the export";
            case ENOTSUP: return "zeroing is not faster than writing on this export";
            default: return "invalid request (type " + r.type() + ", flags 0x" + Integer.toHexString(r.flags())
                    + ", offset " + Long.toUnsignedString(r.offset()) + ", length " + r.length() + ")";
        }
    }
}
